//! What a request should get back: code, remark, extFields and a body expectation.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// The remark of TOPIC_NOT_EXIST (`ClientRequestProcessor.getRouteInfoByTopic` with
/// `FAQUrl.suggestTodo(APPLY_TOPIC_URL)`).
pub fn topic_not_exist_remark(topic: &str) -> String {
    format!(
        "No topic route info in name server for the topic: {topic}\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
    )
}

/// What the body of a response must be.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// No body at all.
    None,
    /// JSON equal to this once lists Java keeps in hash order are sorted.
    Json(Value),
    /// A `TopicList`: every name in `must`, any of `may`, nothing else; `broker_addr` exactly.
    Topics { must: BTreeSet<String>, may: BTreeSet<String>, broker_addr: Option<String> },
    /// A route whose `filterServerTable` entries for the addresses in `choices` may be any of
    /// the given values (`None`: absent), because Java fills them in hash order; the rest exact.
    Route { route: Value, choices: BTreeMap<String, Vec<Option<Value>>> },
}

/// The expected response.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub code: i32,
    pub remark: Option<String>,
    /// `None`: no extFields; `Some`: exactly these (a response header always yields a map).
    pub ext: Option<BTreeMap<String, String>>,
    pub body: Body,
}

impl Answer {
    /// SUCCESS with no header and no body.
    pub fn success() -> Self {
        Self { code: 0, remark: None, ext: None, body: Body::None }
    }

    /// SUCCESS with a JSON body.
    pub fn json(body: Value) -> Self {
        Self { body: Body::Json(body), ..Self::success() }
    }

    /// SUCCESS with a response header holding `fields`.
    pub fn with_ext(fields: &[(&str, String)]) -> Self {
        let ext = fields.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        Self { ext: Some(ext), ..Self::success() }
    }

    /// An error code with a remark and no body.
    pub fn error(code: i32, remark: &str) -> Self {
        Self { code, remark: Some(remark.to_owned()), ext: None, body: Body::None }
    }
}
