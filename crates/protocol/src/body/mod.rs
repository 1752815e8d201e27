//! Request bodies: the types every form of the REGISTER_BROKER body decodes into, with the
//! REGISTER_TOPIC_IN_NAMESRV and QUERY_DATA_VERSION bodies (here); which form a register body is
//! in (`register`), the plain JSON form (`register_json`, with its fast reader
//! `register_scan`) and the compressed form (`compressed`). Each decode carries its limits and
//! its pacing (`pace`) in a [`DecodeContext`].

pub mod compressed;
pub mod pace;
pub mod register;
pub mod register_json;
pub(crate) mod register_scan;

use std::collections::BTreeMap;

use serde::Deserialize;
use thiserror::Error;

use crate::body::pace::Pacer;
use crate::json::lenient::{int_key_map, lenient_i64, parse_lenient};
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
    /// The compressed stream inflates at a ratio no register body has (a compression bomb).
    #[error("compressed body inflates more than {ratio}:1")]
    AbsurdRatio { ratio: usize },
    /// More topics than one registration may carry.
    #[error("too many topics: more than {max}")]
    TooManyTopics { max: usize },
}

/// Bounds on what decoding a register body may produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// Largest inflated size of a compressed body.
    pub max_inflated_bytes: usize,
    /// Most topics.
    pub max_topics: usize,
}

impl Default for BodyLimits {
    fn default() -> Self {
        BodyLimits { max_inflated_bytes: 64 * 1024 * 1024, max_topics: 200_000 }
    }
}

/// What one register-body decode is given: its limits and its pacing. Made where the decode
/// starts and passed down through it, so two decodes on one thread never see each other's.
#[derive(Debug)]
pub struct DecodeContext {
    /// Bounds on what the decode may produce.
    pub limits: BodyLimits,
    /// When the decode gives up its core.
    pub pacer: Pacer,
}

impl DecodeContext {
    /// A decode within `limits` that never yields its core (small bodies, event loop threads).
    pub fn unpaced(limits: BodyLimits) -> Self {
        DecodeContext { limits, pacer: Pacer::off() }
    }

    /// A decode within `limits` that yields its core once every `slice` of work (long decodes
    /// on the blocking pool).
    pub fn paced(limits: BodyLimits, slice: std::time::Duration) -> Self {
        DecodeContext { limits, pacer: Pacer::every(slice) }
    }
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
    /// An order-independent fingerprint of the topic table (names and queue data), to tell
    /// whether a re-registration lists what the previous one did without comparing topics in
    /// the registry. Seeded once per process at random (foldhash, as the route tables), so peers
    /// cannot aim for collisions, and cheap: about 10 ns a topic.
    pub fn topics_fingerprint(&self) -> u64 {
        use std::hash::{BuildHasher, Hash, Hasher};
        static KEYS: std::sync::OnceLock<hashbrown::DefaultHashBuilder> = std::sync::OnceLock::new();
        let keys = KEYS.get_or_init(Default::default);
        let mut sum = self.topics.len() as u64;
        for topic in self.topics.iter() {
            let mut h = keys.build_hasher();
            (topic.key, topic.name).hash(&mut h);
            let q = &topic.queue;
            (q.read_queue_nums, q.write_queue_nums, q.perm, q.topic_sys_flag).hash(&mut h);
            sum = sum.wrapping_add(h.finish());
        }
        sum
    }
}

/// Parses a REGISTER_TOPIC_IN_NAMESRV body (a TopicRouteData) into (broker name, queues) pairs.
pub fn decode_register_topic_body(body: &[u8]) -> Result<Vec<(String, QueueData)>, BodyError> {
    let route: RouteBodyJson = parse_lenient(body)?;
    Ok(route.queue_datas.into_iter().map(QueueDataJson::into_pair).collect())
}

/// Parses a DataVersion body (QUERY_DATA_VERSION).
pub fn decode_data_version(body: &[u8]) -> Result<DataVersion, BodyError> {
    Ok(parse_lenient::<DataVersionJson>(body)?.into())
}

/// A DataVersion as brokers write it: numbers may come as strings, fields may be missing.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct DataVersionJson {
    #[serde(deserialize_with = "lenient_i64")]
    counter: i64,
    #[serde(deserialize_with = "lenient_i64")]
    state_version: i64,
    #[serde(deserialize_with = "lenient_i64")]
    timestamp: i64,
}

impl From<DataVersionJson> for DataVersion {
    fn from(v: DataVersionJson) -> Self {
        DataVersion { counter: v.counter, state_version: v.state_version, timestamp: v.timestamp }
    }
}

/// A TopicQueueMappingInfo as brokers write it (bare integer keys in `currIdMap`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct MappingInfoJson {
    topic: String,
    scope: String,
    total_queues: i32,
    bname: String,
    epoch: i64,
    dirty: bool,
    #[serde(deserialize_with = "int_key_map")]
    curr_id_map: BTreeMap<i64, i64>,
}

impl Default for MappingInfoJson {
    fn default() -> Self {
        let d = TopicQueueMappingInfo::default();
        Self {
            topic: d.topic,
            scope: d.scope,
            total_queues: d.total_queues,
            bname: d.bname,
            epoch: d.epoch,
            dirty: d.dirty,
            curr_id_map: d.curr_id_map,
        }
    }
}

impl From<MappingInfoJson> for TopicQueueMappingInfo {
    fn from(m: MappingInfoJson) -> Self {
        TopicQueueMappingInfo {
            topic: m.topic,
            scope: m.scope,
            total_queues: m.total_queues,
            bname: m.bname,
            epoch: m.epoch,
            dirty: m.dirty,
            curr_id_map: m.curr_id_map,
        }
    }
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
    use crate::body::register::decode_register_body;
    use std::time::Duration;

    fn limits(max_inflated_bytes: usize) -> DecodeContext {
        DecodeContext::unpaced(BodyLimits { max_inflated_bytes, max_topics: 1000 })
    }

    #[test]
    fn a_json_body_with_more_topics_than_the_cap_is_refused() {
        let table: Vec<String> = (0..3).map(|i| format!(r#""T{i}":{{"topicName":"T{i}"}}"#)).collect();
        let body = format!(r#"{{"topicConfigSerializeWrapper":{{"topicConfigTable":{{{}}}}}}}"#, table.join(","));
        let capped = BodyLimits { max_inflated_bytes: 1 << 20, max_topics: 2 };
        let err = decode_register_body(Some(body.as_bytes()), false, 479, &DecodeContext::unpaced(capped)).unwrap_err();
        assert!(err.to_string().contains("too many topics: more than 2"), "{err}");
        let fits = DecodeContext::unpaced(BodyLimits { max_topics: 3, ..capped });
        assert_eq!(decode_register_body(Some(body.as_bytes()), false, 479, &fits).unwrap().topics.len(), 3);
    }

    /// Decodes alternating on one thread with different caps each see their own: the cap
    /// travels with the decode, not with the thread.
    #[test]
    fn two_decodes_with_different_caps_on_one_thread_each_keep_their_own() {
        let table: Vec<String> = (0..3).map(|i| format!(r#""T{i}":{{"topicName":"T{i}"}}"#)).collect();
        let body = format!(r#"{{"topicConfigSerializeWrapper":{{"topicConfigTable":{{{}}}}}}}"#, table.join(","));
        let tight = DecodeContext::unpaced(BodyLimits { max_inflated_bytes: 1 << 20, max_topics: 2 });
        let roomy = DecodeContext::paced(BodyLimits { max_inflated_bytes: 1 << 20, max_topics: 3 }, Duration::ZERO);
        let mut refused = 0;
        for round in 0..4 {
            let (first, second) = if round % 2 == 0 { (&tight, &roomy) } else { (&roomy, &tight) };
            for context in [first, second] {
                match decode_register_body(Some(body.as_bytes()), false, 479, context) {
                    Ok(decoded) => assert_eq!((context.limits.max_topics, decoded.topics.len()), (3, 3)),
                    Err(err) => {
                        assert_eq!(context.limits.max_topics, 2, "{err}");
                        refused += 1;
                    }
                }
            }
        }
        assert_eq!(refused, 4);
        let plain = br#"{"topicConfigTable":{"A":{},"B":{},"C":{}}}"#;
        assert!(decode_register_body(Some(plain), false, 0, &tight).is_err(), "the old-version wrapper is capped too");
        assert_eq!(decode_register_body(Some(plain), false, 0, &roomy).unwrap().topics.len(), 3);
    }

    #[test]
    fn a_paced_decode_reads_what_an_unpaced_one_does() {
        let table: Vec<String> =
            (0..700).map(|i| format!(r#""T{i}":{{"topicName":"T{i}","perm":{}}}"#, i % 7)).collect();
        let body = format!(r#"{{"topicConfigSerializeWrapper":{{"topicConfigTable":{{{}}}}}}}"#, table.join(","));
        let unpaced = decode_register_body(Some(body.as_bytes()), false, 479, &limits(1 << 20)).unwrap();
        let every_step = DecodeContext::paced(limits(1 << 20).limits, Duration::ZERO);
        let paced = decode_register_body(Some(body.as_bytes()), false, 479, &every_step).unwrap();
        assert_eq!(paced.topics.len(), 700);
        assert_eq!(paced, unpaced);
    }

    #[test]
    fn plain_json_body_with_bare_keys_and_old_spelling_decodes() {
        let body = br#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":"5","timestamp":17},
            "topicConfigTable":{"A":{"topicName":"A","readQueueNums":8,"writeQueueNums":8,"perm":6,"topicSynFlag":3},"B":{}},
            "topicQueueMappingInfoMap":{"A":{"bname":"b","currIdMap":{0:0,1:1},"epoch":9,"topic":"A","totalQueues":2}}}}"#;
        let decoded = decode_register_body(Some(body), false, 479, &limits(1 << 20)).unwrap();
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
        let decoded = decode_register_body(Some(body), false, 0, &limits(1 << 20)).unwrap();
        assert_eq!(decoded.topics.len(), 1);
        assert_eq!(decode_register_body(None, false, 479, &limits(1)).unwrap(), RegisterBody::default());
    }
}
