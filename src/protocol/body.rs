//! Request bodies: the REGISTER_BROKER body in all its encodings (spec §4) and DataVersion.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use thiserror::Error;

use super::code::version;
use super::compressed::decode_compressed;
use super::lenient::quote_bare_keys;
use crate::model::{DataVersion, QueueData, TopicQueueMappingInfo, TopicTable};

/// A body that cannot be read; answered with SYSTEM_ERROR, the connection stays open.
#[derive(Debug, Error)]
pub enum BodyError {
    /// The JSON does not parse.
    #[error("bad json body: {0}")]
    Json(#[from] serde_json::Error),
    /// The compressed stream does not inflate.
    #[error("cannot inflate body: {0}")]
    Inflate(std::io::Error),
    /// The compressed stream inflates past the configured limit.
    #[error("inflated body too large: more than {limit} bytes")]
    InflatedTooLarge { limit: usize },
    /// The inflated stream ended before a length-prefixed field.
    #[error("compressed body truncated reading {0}")]
    Truncated(&'static str),
    /// A topic line of the compressed form does not have the expected fields.
    #[error("bad topic config line: {0:?}")]
    TopicLine(String),
}

/// What a REGISTER_BROKER body carries, whatever its encoding.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RegisterBody {
    /// Topic configs with the key the body uses for each.
    pub topics: TopicTable,
    /// The broker's topic-config version.
    pub data_version: DataVersion,
    /// Filter servers; `None` leaves the stored list alone.
    pub filter_servers: Option<Vec<String>>,
    /// Static-topic mappings, by topic.
    pub mappings: Vec<(String, TopicQueueMappingInfo)>,
}

impl RegisterBody {
    /// An order-independent fingerprint of the topic names, to tell whether a re-registration
    /// lists the same topics as the previous one without comparing them in the registry.
    pub fn topics_fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut sum = self.topics.len() as u64;
        for topic in self.topics.iter() {
            let mut h = std::hash::DefaultHasher::new();
            topic.name.hash(&mut h);
            sum = sum.wrapping_add(h.finish());
        }
        sum
    }
}

/// Decodes a REGISTER_BROKER body as Java's handler does (spec §2.3.6 step 3).
///
/// `compressed` is the header flag. A body that fails as JSON but looks deflated is tried as
/// compressed too: 5.x brokers with `compressedRegister=true` deflate while sending `false`.
pub fn decode_register_body(
    body: Option<&[u8]>,
    compressed: bool,
    request_version: i32,
    max_inflated_bytes: usize,
) -> Result<RegisterBody, BodyError> {
    let Some(body) = body.filter(|b| !b.is_empty()) else {
        return Ok(RegisterBody::default());
    };
    if request_version < version::V3_0_11 {
        return Ok(parse_lenient::<WrapperJson>(body)?.into_body(None));
    }
    if compressed {
        return decode_compressed(body, request_version, max_inflated_bytes);
    }
    match parse_lenient::<RegisterBodyJson>(body) {
        Ok(json) => Ok(json.topic_config_serialize_wrapper.into_body(json.filter_server_list)),
        Err(e) if body.first() != Some(&b'{') => {
            decode_compressed(body, request_version, max_inflated_bytes).map_err(|_| BodyError::Json(e))
        }
        Err(e) => Err(e.into()),
    }
}

/// Parses a REGISTER_TOPIC_IN_NAMESRV body (a TopicRouteData) into (broker name, queues) pairs.
pub fn decode_register_topic_body(body: &[u8]) -> Result<Vec<(String, QueueData)>, BodyError> {
    let route: RouteBodyJson = parse_lenient(body)?;
    Ok(route.queue_datas.into_iter().map(QueueDataJson::into_pair).collect())
}

/// Parses a DataVersion body (QUERY_DATA_VERSION).
pub fn decode_data_version(body: &[u8]) -> Result<DataVersion, BodyError> {
    Ok(parse_lenient(body)?)
}

/// Parses fastjson-written JSON, accepting bare integer keys. Valid JSON, the common case,
/// parses in one pass; only a body that fails is scanned for bare keys and parsed again.
pub fn parse_lenient<T: DeserializeOwned>(body: &[u8]) -> Result<T, serde_json::Error> {
    serde_json::from_slice(body).or_else(|e| match quote_bare_keys(body) {
        Cow::Owned(quoted) => serde_json::from_slice(&quoted),
        Cow::Borrowed(_) => Err(e),
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RegisterBodyJson {
    #[serde(default)]
    topic_config_serialize_wrapper: WrapperJson,
    #[serde(default)]
    filter_server_list: Option<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WrapperJson {
    data_version: Option<DataVersion>,
    #[serde(deserialize_with = "topic_table")]
    topic_config_table: TopicTable,
    topic_queue_mapping_info_map: Option<HashMap<String, TopicQueueMappingInfo>>,
}

/// Static-topic mappings in topic order.
fn sorted_mappings(map: Option<HashMap<String, TopicQueueMappingInfo>>) -> Vec<(String, TopicQueueMappingInfo)> {
    let mut mappings: Vec<_> = map.unwrap_or_default().into_iter().collect();
    mappings.sort_by(|a, b| a.0.cmp(&b.0));
    mappings
}

impl WrapperJson {
    fn into_body(self, filter_servers: Option<Vec<String>>) -> RegisterBody {
        let mappings = sorted_mappings(self.topic_queue_mapping_info_map);
        RegisterBody {
            topics: self.topic_config_table,
            data_version: self.data_version.unwrap_or_default(),
            filter_servers,
            mappings,
        }
    }
}

/// A TopicConfig as brokers write it; only what the NameServer uses is read, and names are
/// borrowed from the body where they have no escapes (a 10k-topic body then allocates no
/// string per topic).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TopicConfigJson<'a> {
    #[serde(default, borrow)]
    topic_name: Option<Cow<'a, str>>,
    #[serde(default = "sixteen")]
    read_queue_nums: i32,
    #[serde(default = "sixteen")]
    write_queue_nums: i32,
    #[serde(default = "six")]
    perm: i32,
    #[serde(default, alias = "topicSynFlag")]
    topic_sys_flag: i32,
}

impl TopicConfigJson<'_> {
    fn queue(&self) -> QueueData {
        QueueData {
            read_queue_nums: self.read_queue_nums,
            write_queue_nums: self.write_queue_nums,
            perm: self.perm,
            topic_sys_flag: self.topic_sys_flag,
        }
    }
}

/// A map key borrowed from the body unless it has escapes.
#[derive(Deserialize)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

fn sixteen() -> i32 {
    16
}

fn six() -> i32 {
    6
}

/// `topicConfigTable` as a [`TopicTable`], keeping each map key; `null` reads as empty.
fn topic_table<'de, D: Deserializer<'de>>(d: D) -> Result<TopicTable, D::Error> {
    struct TableVisitor;
    impl<'de> Visitor<'de> for TableVisitor {
        type Value = TopicTable;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a topicConfigTable object")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(TopicTable::default())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut topics = TopicTable::with_capacity(map.size_hint().unwrap_or(16));
            while let Some((key, tc)) = map.next_entry::<Key<'de>, Option<TopicConfigJson<'de>>>()? {
                if let Some(tc) = tc {
                    topics.push_parts(&key.0, tc.topic_name.as_deref(), tc.queue());
                }
            }
            Ok(topics)
        }
    }
    d.deserialize_any(TableVisitor)
}

/// An i64 written as a number or as a decimal string (fastjson reads both).
pub fn lenient_i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Number(n) => {
            n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)).ok_or_else(|| de::Error::custom("not an integer"))
        }
        serde_json::Value::String(s) => s.trim().parse().map_err(de::Error::custom),
        serde_json::Value::Null => Ok(0),
        other => Err(de::Error::custom(format!("expected an integer, got {other}"))),
    }
}

/// A map with integer keys (quoted after the bare-key pre-pass) and integer values.
pub fn int_key_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<i64, i64>, D::Error> {
    let raw: Option<HashMap<String, i64>> = Option::deserialize(d)?;
    raw.unwrap_or_default()
        .into_iter()
        .map(|(k, v)| k.trim().parse().map(|k| (k, v)).map_err(de::Error::custom))
        .collect()
}

/// The part of a TopicRouteData body REGISTER_TOPIC_IN_NAMESRV uses.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RouteBodyJson {
    #[serde(default)]
    queue_datas: Vec<QueueDataJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueueDataJson {
    broker_name: String,
    #[serde(default)]
    read_queue_nums: i32,
    #[serde(default)]
    write_queue_nums: i32,
    #[serde(default)]
    perm: i32,
    #[serde(default, alias = "topicSynFlag")]
    topic_sys_flag: i32,
}

impl QueueDataJson {
    fn into_pair(self) -> (String, QueueData) {
        let queue = QueueData {
            read_queue_nums: self.read_queue_nums,
            write_queue_nums: self.write_queue_nums,
            perm: self.perm,
            topic_sys_flag: self.topic_sys_flag,
        };
        (self.broker_name, queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_json_body_with_bare_keys_and_old_spelling_decodes() {
        let body = br#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":"5","timestamp":17},
            "topicConfigTable":{"A":{"topicName":"A","readQueueNums":8,"writeQueueNums":8,"perm":6,"topicSynFlag":3},"B":{}},
            "topicQueueMappingInfoMap":{"A":{"bname":"b","currIdMap":{0:0,1:1},"epoch":9,"topic":"A","totalQueues":2}}}}"#;
        let decoded = decode_register_body(Some(body), false, 479, 1 << 20).unwrap();
        assert_eq!(decoded.data_version.counter, 5);
        assert_eq!(decoded.topics.len(), 2);
        let a = decoded.topics.iter().find(|t| t.key == "A").unwrap();
        assert_eq!(a.queue.topic_sys_flag, 3);
        let b = decoded.topics.iter().find(|t| t.key == "B").unwrap();
        assert_eq!((b.name, b.queue.read_queue_nums, b.queue.perm), ("B", 16, 6));
        assert_eq!(decoded.mappings[0].1.curr_id_map.get(&1), Some(&1));
        assert_eq!(decoded.mappings[0].1.scope, "__global__");
    }

    #[test]
    fn old_versions_send_a_bare_wrapper_and_no_body_is_empty() {
        let body = br#"{"dataVersion":{"counter":1},"topicConfigTable":{"T":{"topicName":"T"}}}"#;
        let decoded = decode_register_body(Some(body), false, 0, 1 << 20).unwrap();
        assert_eq!(decoded.topics.len(), 1);
        assert_eq!(decode_register_body(None, false, 479, 1).unwrap(), RegisterBody::default());
    }
}
