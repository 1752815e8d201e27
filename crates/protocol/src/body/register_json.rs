//! The plain JSON REGISTER_BROKER body (Java's `RegisterBrokerBody`, or the bare
//! `TopicConfigSerializeWrapper` of older brokers), read through serde seeds that carry the
//! decode's [`DecodeContext`] down to the topic table: its topic cap and its pacing.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::body::register_scan;
use crate::body::{BodyError, DataVersionJson, DecodeContext, MappingInfoJson, RegisterBody};
use crate::code::version;
use crate::json::lenient::parse_lenient_seeded;
use crate::model::{DataVersion, QueueData, TopicQueueMappingInfo, TopicTable};

/// Decodes the plain JSON forms: a `RegisterBrokerBody`, or for brokers older than V3_0_11
/// the bare `TopicConfigSerializeWrapper`. Plain bodies are read by the scanner; whatever it
/// leaves, by serde.
pub fn decode_json_form(body: &[u8], request_version: i32, context: &DecodeContext) -> Result<RegisterBody, BodyError> {
    match register_scan::scan(body, request_version, context) {
        Some(decoded) => Ok(decoded),
        None => decode_general(body, request_version, context),
    }
}

/// The serde reader of the plain JSON forms: any body JSON (or fastjson) allows.
pub fn decode_general(body: &[u8], request_version: i32, context: &DecodeContext) -> Result<RegisterBody, BodyError> {
    if request_version < version::V3_0_11 {
        return Ok(parse_lenient_seeded(body, WrapperSeed(context))?.into_body(None));
    }
    let (wrapper, filter_servers) = parse_lenient_seeded(body, RegisterBodySeed(context))?;
    Ok(wrapper.into_body(filter_servers))
}

/// The fields of a `RegisterBrokerBody` that are read; any other is skipped.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum BodyField {
    TopicConfigSerializeWrapper,
    FilterServerList,
    #[serde(other)]
    Other,
}

/// Reads a `RegisterBrokerBody` as (wrapper, filter servers), both optional.
#[derive(Clone, Copy)]
struct RegisterBodySeed<'c>(&'c DecodeContext);

impl<'de> DeserializeSeed<'de> for RegisterBodySeed<'_> {
    type Value = (Wrapper, Option<Vec<String>>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        const FIELDS: &[&str] = &["topicConfigSerializeWrapper", "filterServerList"];
        d.deserialize_struct("RegisterBodyJson", FIELDS, self)
    }
}

impl<'de> Visitor<'de> for RegisterBodySeed<'_> {
    type Value = (Wrapper, Option<Vec<String>>);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct RegisterBodyJson")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let wrapper = seq.next_element_seed(WrapperSeed(self.0))?.unwrap_or_default();
        Ok((wrapper, seq.next_element()?.flatten()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut wrapper, mut filter_servers) = (None, None);
        while let Some(field) = map.next_key()? {
            match field {
                BodyField::TopicConfigSerializeWrapper => {
                    once(&wrapper, "topicConfigSerializeWrapper")?;
                    wrapper = Some(map.next_value_seed(WrapperSeed(self.0))?);
                }
                BodyField::FilterServerList => {
                    once(&filter_servers, "filterServerList")?;
                    filter_servers = Some(map.next_value::<Option<Vec<String>>>()?);
                }
                BodyField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((wrapper.unwrap_or_default(), filter_servers.flatten()))
    }
}

/// A field seen twice is an error, as serde's derived structs have it.
fn once<T, E: de::Error>(seen: &Option<T>, field: &'static str) -> Result<(), E> {
    match seen {
        Some(_) => Err(E::duplicate_field(field)),
        None => Ok(()),
    }
}

/// A `TopicConfigSerializeWrapper`: what a registration carries besides the filter servers.
#[derive(Default)]
struct Wrapper {
    data_version: Option<DataVersionJson>,
    topics: TopicTable,
    mappings: Option<HashMap<String, MappingInfoJson>>,
}

impl Wrapper {
    fn into_body(self, filter_servers: Option<Vec<String>>) -> RegisterBody {
        let mut mappings: Vec<(String, TopicQueueMappingInfo)> =
            self.mappings.unwrap_or_default().into_iter().map(|(t, m)| (t, m.into())).collect();
        mappings.sort_by(|a, b| a.0.cmp(&b.0));
        RegisterBody {
            topics: self.topics,
            data_version: self.data_version.map(DataVersion::from).unwrap_or_default(),
            filter_servers,
            mappings,
        }
    }
}

/// The fields of a `TopicConfigSerializeWrapper` that are read; any other is skipped.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum WrapperField {
    DataVersion,
    TopicConfigTable,
    TopicQueueMappingInfoMap,
    #[serde(other)]
    Other,
}

/// Reads a `TopicConfigSerializeWrapper`, its topic table through [`TableSeed`].
#[derive(Clone, Copy)]
struct WrapperSeed<'c>(&'c DecodeContext);

impl<'de> DeserializeSeed<'de> for WrapperSeed<'_> {
    type Value = Wrapper;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Wrapper, D::Error> {
        const FIELDS: &[&str] = &["dataVersion", "topicConfigTable", "topicQueueMappingInfoMap"];
        d.deserialize_struct("WrapperJson", FIELDS, self)
    }
}

impl<'de> Visitor<'de> for WrapperSeed<'_> {
    type Value = Wrapper;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct WrapperJson")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Wrapper, A::Error> {
        let data_version = seq.next_element()?.flatten();
        let topics = seq.next_element_seed(TableSeed(self.0))?.unwrap_or_default();
        let mappings = seq.next_element()?.flatten();
        Ok(Wrapper { data_version, topics, mappings })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Wrapper, A::Error> {
        let (mut data_version, mut topics, mut mappings) = (None, None, None);
        while let Some(field) = map.next_key()? {
            match field {
                WrapperField::DataVersion => {
                    once(&data_version, "dataVersion")?;
                    data_version = Some(map.next_value::<Option<DataVersionJson>>()?);
                }
                WrapperField::TopicConfigTable => {
                    once(&topics, "topicConfigTable")?;
                    topics = Some(map.next_value_seed(TableSeed(self.0))?);
                }
                WrapperField::TopicQueueMappingInfoMap => {
                    once(&mappings, "topicQueueMappingInfoMap")?;
                    mappings = Some(map.next_value::<Option<HashMap<String, MappingInfoJson>>>()?);
                }
                WrapperField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Wrapper {
            data_version: data_version.flatten(),
            topics: topics.unwrap_or_default(),
            mappings: mappings.flatten(),
        })
    }
}

/// Reads `topicConfigTable` as a [`TopicTable`], keeping each map key, refusing more topics
/// than the context's cap and pacing after each; `null` reads as empty.
#[derive(Clone, Copy)]
struct TableSeed<'c>(&'c DecodeContext);

impl<'de> DeserializeSeed<'de> for TableSeed<'_> {
    type Value = TopicTable;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<TopicTable, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TableSeed<'_> {
    type Value = TopicTable;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a topicConfigTable object")
    }
    fn visit_unit<E: de::Error>(self) -> Result<TopicTable, E> {
        Ok(TopicTable::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopicTable, A::Error> {
        let DecodeContext { limits, pacer } = self.0;
        let max = limits.max_topics;
        let mut topics = TopicTable::with_capacity(map.size_hint().unwrap_or(16).min(max));
        while let Some((key, tc)) = map.next_entry::<Key<'de>, Option<TopicConfigJson<'de>>>()? {
            if let Some(tc) = tc {
                if topics.len() >= max {
                    return Err(de::Error::custom(BodyError::TooManyTopics { max }));
                }
                topics.push_parts(&key.0, tc.topic_name.as_deref(), tc.queue());
                pacer.topic_parsed(topics.len());
            }
        }
        Ok(topics)
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
