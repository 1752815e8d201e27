//! Request bodies: the REGISTER_BROKER body in all its encodings (spec §4) and DataVersion.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Read;

use flate2::read::{DeflateDecoder, ZlibDecoder};
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use thiserror::Error;

use super::code::version;
use super::lenient::quote_bare_keys;
use crate::model::{DataVersion, TopicConfig, TopicQueueMappingInfo};

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
    /// Topic configs keyed by the name the body uses as map key.
    pub topics: Vec<(String, TopicConfig)>,
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
        for (key, config) in &self.topics {
            let mut h = std::hash::DefaultHasher::new();
            config.topic_name.as_deref().unwrap_or(key).hash(&mut h);
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

/// Parses a DataVersion body (QUERY_DATA_VERSION).
pub fn decode_data_version(body: &[u8]) -> Result<DataVersion, BodyError> {
    Ok(parse_lenient(body)?)
}

/// Parses fastjson-written JSON, accepting bare integer keys.
pub fn parse_lenient<T: DeserializeOwned>(body: &[u8]) -> Result<T, serde_json::Error> {
    serde_json::from_slice(&quote_bare_keys(body))
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
    topic_config_table: Vec<(String, TopicConfig)>,
    topic_queue_mapping_info_map: Option<HashMap<String, TopicQueueMappingInfo>>,
}

impl WrapperJson {
    fn into_body(self, filter_servers: Option<Vec<String>>) -> RegisterBody {
        let mut mappings: Vec<_> = self.topic_queue_mapping_info_map.unwrap_or_default().into_iter().collect();
        mappings.sort_by(|a, b| a.0.cmp(&b.0));
        RegisterBody {
            topics: self.topic_config_table,
            data_version: self.data_version.unwrap_or_default(),
            filter_servers,
            mappings,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TopicConfigJson {
    #[serde(default)]
    topic_name: Option<String>,
    #[serde(default = "sixteen")]
    read_queue_nums: i32,
    #[serde(default = "sixteen")]
    write_queue_nums: i32,
    #[serde(default = "six")]
    perm: i32,
    #[serde(default, alias = "topicSynFlag")]
    topic_sys_flag: i32,
}

fn sixteen() -> i32 {
    16
}

fn six() -> i32 {
    6
}

/// `topicConfigTable` as a list, keeping each map key; `null` reads as empty.
fn topic_table<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, TopicConfig)>, D::Error> {
    struct TableVisitor;
    impl<'de> Visitor<'de> for TableVisitor {
        type Value = Vec<(String, TopicConfig)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a topicConfigTable object")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut topics = Vec::with_capacity(map.size_hint().unwrap_or(16));
            while let Some((key, tc)) = map.next_entry::<String, Option<TopicConfigJson>>()? {
                if let Some(tc) = tc {
                    let config = TopicConfig {
                        topic_name: tc.topic_name,
                        read_queue_nums: tc.read_queue_nums,
                        write_queue_nums: tc.write_queue_nums,
                        perm: tc.perm,
                        topic_sys_flag: tc.topic_sys_flag,
                    };
                    topics.push((key, config));
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

/// Inflates a zlib stream (what Java writes) or raw deflate (what rocketmq-rust writes).
fn inflate(body: &[u8], limit: usize) -> Result<Vec<u8>, BodyError> {
    let looks_zlib = body.len() >= 2 && body[0] & 0x0F == 8 && (u16::from(body[0]) << 8 | u16::from(body[1])) % 31 == 0;
    let read_all = |reader: &mut dyn Read| -> Result<Vec<u8>, BodyError> {
        let mut out = Vec::with_capacity(body.len() * 4);
        reader.take(limit as u64 + 1).read_to_end(&mut out).map_err(BodyError::Inflate)?;
        if out.len() > limit {
            return Err(BodyError::InflatedTooLarge { limit });
        }
        Ok(out)
    };
    if looks_zlib {
        match read_all(&mut ZlibDecoder::new(body)) {
            Err(BodyError::Inflate(_)) => {}
            other => return other,
        }
    }
    read_all(&mut DeflateDecoder::new(body))
}

/// A bounds-checked reader over the inflated stream.
struct Stream<'a> {
    buf: &'a [u8],
}

impl<'a> Stream<'a> {
    fn int(&mut self, what: &'static str) -> Result<i32, BodyError> {
        let bytes = self.bytes(4, what)?;
        Ok(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], BodyError> {
        if n > self.buf.len() {
            return Err(BodyError::Truncated(what));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    fn chunk(&mut self, what: &'static str) -> Result<&'a [u8], BodyError> {
        let len = self.int(what)?;
        let len = usize::try_from(len).map_err(|_| BodyError::Truncated(what))?;
        self.bytes(len, what)
    }

    fn count(&mut self, what: &'static str) -> Result<usize, BodyError> {
        let n = self.int(what)?;
        // Every entry takes at least its 4-byte length, which bounds a hostile count.
        usize::try_from(n).ok().filter(|n| n.saturating_mul(4) <= self.buf.len()).ok_or(BodyError::Truncated(what))
    }
}

/// The compressed layout of spec §4.2.
fn decode_compressed(body: &[u8], request_version: i32, limit: usize) -> Result<RegisterBody, BodyError> {
    let inflated = inflate(body, limit)?;
    let mut s = Stream { buf: &inflated };
    let data_version = parse_lenient(s.chunk("dataVersion")?)?;
    let topic_count = s.count("topic count")?;
    let mut topics = Vec::with_capacity(topic_count);
    for _ in 0..topic_count {
        let tc = parse_topic_line(s.chunk("topic config")?)?;
        let key = tc.topic_name.clone().unwrap_or_default();
        topics.push((key, tc));
    }
    let filter_servers: Option<Vec<String>> = parse_lenient(s.chunk("filterServerList")?)?;
    let mut mappings = Vec::new();
    if request_version >= version::V5_0_0 {
        let count = s.count("mapping count")?;
        for _ in 0..count {
            let info: TopicQueueMappingInfo = parse_lenient(s.chunk("mapping")?)?;
            mappings.push((info.topic.clone(), info));
        }
    }
    Ok(RegisterBody { topics, data_version, filter_servers, mappings })
}

/// `"<name> <read> <write> <perm> <filterType>[ <attributes>]"`; sysFlag is not carried.
fn parse_topic_line(line: &[u8]) -> Result<TopicConfig, BodyError> {
    let text = String::from_utf8_lossy(line);
    let bad = || BodyError::TopicLine(text.chars().take(120).collect());
    let fields: Vec<&str> = text.split(' ').filter(|f| !f.is_empty()).collect();
    if fields.len() < 5 {
        return Err(bad());
    }
    let int = |s: &str| s.parse::<i32>().map_err(|_| bad());
    Ok(TopicConfig {
        topic_name: Some(fields[0].to_owned()),
        read_queue_nums: int(fields[1])?,
        write_queue_nums: int(fields[2])?,
        perm: int(fields[3])?,
        topic_sys_flag: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::{DeflateEncoder, ZlibEncoder};
    use flate2::Compression;
    use std::io::Write;

    /// Spec §4.2 worked example: the inflated stream for one topic.
    fn example_stream() -> Vec<u8> {
        let mut s = Vec::new();
        let dv = br#"{"counter":5,"stateVersion":0,"timestamp":1700000000123}"#;
        s.extend_from_slice(&(dv.len() as i32).to_be_bytes());
        s.extend_from_slice(dv);
        s.extend_from_slice(&1i32.to_be_bytes());
        let line = b"TopicTest 4 4 6 SINGLE_TAG {}";
        s.extend_from_slice(&(line.len() as i32).to_be_bytes());
        s.extend_from_slice(line);
        s.extend_from_slice(&2i32.to_be_bytes());
        s.extend_from_slice(b"[]");
        s.extend_from_slice(&0i32.to_be_bytes());
        s
    }

    #[test]
    fn spec_example_stream_is_107_bytes_and_decodes_from_zlib_and_raw_deflate() {
        let stream = example_stream();
        assert_eq!(stream.len(), 107);
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::best());
        zlib.write_all(&stream).unwrap();
        let mut raw = DeflateEncoder::new(Vec::new(), Compression::best());
        raw.write_all(&stream).unwrap();
        for body in [zlib.finish().unwrap(), raw.finish().unwrap()] {
            let decoded = decode_register_body(Some(&body), true, 479, 1 << 20).unwrap();
            assert_eq!(decoded.data_version, DataVersion { counter: 5, state_version: 0, timestamp: 1700000000123 });
            assert_eq!(decoded.topics.len(), 1);
            assert_eq!(decoded.topics[0].0, "TopicTest");
            assert_eq!(decoded.topics[0].1.read_queue_nums, 4);
            assert_eq!(decoded.filter_servers, Some(vec![]));
        }
    }

    #[test]
    fn spec_base64_vector_decodes() {
        let b64 = "eNpjYGCwqFZKzi/NK0ktUrIy1VEqLkksSQ1LLSrOzM9TsjLQUSrJzE0FCuYWKFkZmhtAgaGRcS0DAwMjEMuG5BdkJocA1SiYAKGZQrCnn7uPa3yIo7tCNUgRU3QskGQAAFURG2s=";
        let body = base64_decode(b64);
        assert_eq!(&body[..2], &[0x78, 0xda]);
        let decoded = decode_register_body(Some(&body), true, 479, 1 << 20).unwrap();
        assert_eq!(decoded.topics[0].0, "TopicTest");
    }

    #[test]
    fn truncated_stream_and_hostile_counts_are_errors() {
        let stream = example_stream();
        for cut in [3, 20, 70, 100] {
            let mut zlib = ZlibEncoder::new(Vec::new(), Compression::fast());
            zlib.write_all(&stream[..cut]).unwrap();
            assert!(decode_register_body(Some(&zlib.finish().unwrap()), true, 479, 1 << 20).is_err(), "cut {cut}");
        }
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::fast());
        zlib.write_all(&vec![0u8; 10_000]).unwrap();
        let bomb = zlib.finish().unwrap();
        assert!(matches!(decode_register_body(Some(&bomb), true, 479, 1000), Err(BodyError::InflatedTooLarge { .. })));
    }

    #[test]
    fn plain_json_body_with_bare_keys_and_old_spelling_decodes() {
        let body = br#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":"5","timestamp":17},
            "topicConfigTable":{"A":{"topicName":"A","readQueueNums":8,"writeQueueNums":8,"perm":6,"topicSynFlag":3},"B":{}},
            "topicQueueMappingInfoMap":{"A":{"bname":"b","currIdMap":{0:0,1:1},"epoch":9,"topic":"A","totalQueues":2}}}}"#;
        let decoded = decode_register_body(Some(body), false, 479, 1 << 20).unwrap();
        assert_eq!(decoded.data_version.counter, 5);
        assert_eq!(decoded.topics.len(), 2);
        let a = &decoded.topics.iter().find(|t| t.0 == "A").unwrap().1;
        assert_eq!(a.topic_sys_flag, 3);
        let b = &decoded.topics.iter().find(|t| t.0 == "B").unwrap().1;
        assert_eq!((b.topic_name.as_deref(), b.read_queue_nums, b.perm), (None, 16, 6));
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

    #[test]
    fn deflated_body_sent_with_compressed_false_is_still_read() {
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::best());
        zlib.write_all(&example_stream()).unwrap();
        let decoded = decode_register_body(Some(&zlib.finish().unwrap()), false, 479, 1 << 20).unwrap();
        assert_eq!(decoded.topics.len(), 1);
        assert!(decode_register_body(Some(b"{not json"), false, 479, 1 << 20).is_err());
    }

    fn base64_decode(s: &str) -> Vec<u8> {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bits = 0u32;
        let mut nbits = 0;
        let mut out = Vec::new();
        for c in s.bytes().filter(|c| *c != b'=') {
            bits = bits << 6 | alphabet.iter().position(|a| *a == c).unwrap() as u32;
            nbits += 6;
            if nbits >= 8 {
                nbits -= 8;
                out.push((bits >> nbits) as u8);
            }
        }
        out
    }
}
