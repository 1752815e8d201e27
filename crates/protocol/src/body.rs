//! Request bodies in JSON: the plain REGISTER_BROKER body (Java's `RegisterBrokerBody`), the
//! REGISTER_TOPIC_IN_NAMESRV and QUERY_DATA_VERSION bodies, and the types every form of the
//! register body decodes into.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use thiserror::Error;

use super::code::version;
use super::lenient::{int_key_map, lenient_i64, parse_lenient};
use super::pace::topic_parsed;
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

thread_local! {
    /// The topic cap of the body being decoded on this thread: serde's `deserialize_with`
    /// functions take no context, and decoding is synchronous, so the cap rides here.
    static MAX_TOPICS: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

/// Runs `decode` with `max_topics` as the topic cap of the JSON topic tables it reads.
pub(super) fn with_topic_cap<T>(max_topics: usize, decode: impl FnOnce() -> T) -> T {
    let previous = MAX_TOPICS.with(|cap| cap.replace(max_topics));
    let out = decode();
    MAX_TOPICS.with(|cap| cap.set(previous));
    out
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

/// Decodes the plain JSON forms: a `RegisterBrokerBody`, or for brokers older than V3_0_11
/// the bare `TopicConfigSerializeWrapper`.
pub fn decode_json_form(body: &[u8], request_version: i32) -> Result<RegisterBody, BodyError> {
    if request_version < version::V3_0_11 {
        return Ok(parse_lenient::<WrapperJson>(body)?.into_body(None));
    }
    let json = parse_lenient::<RegisterBodyJson>(body)?;
    Ok(json.topic_config_serialize_wrapper.into_body(json.filter_server_list))
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
    data_version: Option<DataVersionJson>,
    #[serde(deserialize_with = "topic_table")]
    topic_config_table: TopicTable,
    topic_queue_mapping_info_map: Option<HashMap<String, MappingInfoJson>>,
}

/// Static-topic mappings in topic order.
fn sorted_mappings(map: Option<HashMap<String, MappingInfoJson>>) -> Vec<(String, TopicQueueMappingInfo)> {
    let mut mappings: Vec<_> = map.unwrap_or_default().into_iter().map(|(t, m)| (t, m.into())).collect();
    mappings.sort_by(|a, b| a.0.cmp(&b.0));
    mappings
}

impl WrapperJson {
    fn into_body(self, filter_servers: Option<Vec<String>>) -> RegisterBody {
        let mappings = sorted_mappings(self.topic_queue_mapping_info_map);
        RegisterBody {
            topics: self.topic_config_table,
            data_version: self.data_version.map(DataVersion::from).unwrap_or_default(),
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
            let max = MAX_TOPICS.with(std::cell::Cell::get);
            let mut topics = TopicTable::with_capacity(map.size_hint().unwrap_or(16).min(max));
            while let Some((key, tc)) = map.next_entry::<Key<'de>, Option<TopicConfigJson<'de>>>()? {
                if let Some(tc) = tc {
                    if topics.len() >= max {
                        return Err(de::Error::custom(BodyError::TooManyTopics { max }));
                    }
                    topics.push_parts(&key.0, tc.topic_name.as_deref(), tc.queue());
                    topic_parsed(topics.len());
                }
            }
            Ok(topics)
        }
    }
    d.deserialize_any(TableVisitor)
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
    use crate::register_body::decode_register_body;

    fn limits(max_inflated_bytes: usize) -> BodyLimits {
        BodyLimits { max_inflated_bytes, max_topics: 1000 }
    }

    #[test]
    fn a_json_body_with_more_topics_than_the_cap_is_refused() {
        let table: Vec<String> = (0..3).map(|i| format!(r#""T{i}":{{"topicName":"T{i}"}}"#)).collect();
        let body = format!(r#"{{"topicConfigSerializeWrapper":{{"topicConfigTable":{{{}}}}}}}"#, table.join(","));
        let capped = BodyLimits { max_inflated_bytes: 1 << 20, max_topics: 2 };
        let err = decode_register_body(Some(body.as_bytes()), false, 479, capped).unwrap_err();
        assert!(err.to_string().contains("too many topics: more than 2"), "{err}");
        let fits = BodyLimits { max_topics: 3, ..capped };
        assert_eq!(decode_register_body(Some(body.as_bytes()), false, 479, fits).unwrap().topics.len(), 3);
    }

    #[test]
    fn a_paced_decode_reads_what_an_unpaced_one_does() {
        let table: Vec<String> =
            (0..700).map(|i| format!(r#""T{i}":{{"topicName":"T{i}","perm":{}}}"#, i % 7)).collect();
        let body = format!(r#"{{"topicConfigSerializeWrapper":{{"topicConfigTable":{{{}}}}}}}"#, table.join(","));
        let decode = || decode_register_body(Some(body.as_bytes()), false, 479, limits(1 << 20)).unwrap();
        let paced = crate::pace::paced(std::time::Duration::ZERO, decode);
        assert_eq!(paced.topics.len(), 700);
        assert_eq!(paced, decode());
    }

    #[test]
    fn plain_json_body_with_bare_keys_and_old_spelling_decodes() {
        let body = br#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":"5","timestamp":17},
            "topicConfigTable":{"A":{"topicName":"A","readQueueNums":8,"writeQueueNums":8,"perm":6,"topicSynFlag":3},"B":{}},
            "topicQueueMappingInfoMap":{"A":{"bname":"b","currIdMap":{0:0,1:1},"epoch":9,"topic":"A","totalQueues":2}}}}"#;
        let decoded = decode_register_body(Some(body), false, 479, limits(1 << 20)).unwrap();
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
        let decoded = decode_register_body(Some(body), false, 0, limits(1 << 20)).unwrap();
        assert_eq!(decoded.topics.len(), 1);
        assert_eq!(decode_register_body(None, false, 479, limits(1)).unwrap(), RegisterBody::default());
    }
}
