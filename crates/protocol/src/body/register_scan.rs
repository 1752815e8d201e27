//! A scanner for the plain JSON REGISTER_BROKER body as brokers write it: a `RegisterBrokerBody`
//! (or, before V3_0_11, the bare `TopicConfigSerializeWrapper`) whose topic table is thousands of
//! flat `TopicConfig` objects. serde's derived reader spends most of a 10k-topic decode matching
//! field names and re-checking strings one byte at a time; this reads the same body in one pass,
//! strings eight bytes at a time, and copies each name once, into the table.
//!
//! Like the header scanner it decides nothing on its own: anything it does not expect (escapes,
//! numbers written as strings, a known field twice, a non-empty static-topic mapping, bare
//! integer keys, more topics than the cap) makes it give up, and the body is read by the serde
//! reader, which then accepts or refuses it. So the two can differ only in speed.

use crate::body::{DecodeContext, RegisterBody};
use crate::code::version;
use crate::json::cursor::Cursor;
use crate::model::{DataVersion, QueueData, TopicTable};

/// The body as [`RegisterBody`] when it is a plain body, `None` when the serde reader must decide.
pub(crate) fn scan(body: &[u8], request_version: i32, context: &DecodeContext) -> Option<RegisterBody> {
    let mut cursor = Cursor::new(body)?;
    let decoded = if request_version < version::V3_0_11 {
        wrapper(&mut cursor, context)?.into_body(None)
    } else {
        register_body(&mut cursor, context)?
    };
    cursor.at_end().then_some(decoded)
}

/// A `TopicConfigSerializeWrapper`: the topics and their version (mappings are always empty
/// here: a body with any is left to the serde reader).
#[derive(Default)]
struct Wrapper {
    data_version: Option<DataVersion>,
    topics: TopicTable,
}

impl Wrapper {
    fn into_body(self, filter_servers: Option<Vec<String>>) -> RegisterBody {
        RegisterBody {
            topics: self.topics,
            data_version: self.data_version.unwrap_or_default(),
            filter_servers,
            mappings: Vec::new(),
        }
    }
}

/// Records a known field in `seen` (its `bit`); `None` when it came before (serde refuses that).
fn first(seen: &mut u8, bit: u8) -> Option<()> {
    let fresh = *seen & bit == 0;
    *seen |= bit;
    fresh.then_some(())
}

/// A `RegisterBrokerBody`: the wrapper and the filter server list; other fields skipped.
fn register_body(cursor: &mut Cursor, context: &DecodeContext) -> Option<RegisterBody> {
    let (mut found, mut filter_servers, mut seen) = (None, None, 0);
    if !cursor.open_object()? {
        loop {
            match cursor.key()? {
                b"topicConfigSerializeWrapper" => {
                    first(&mut seen, 1)?;
                    found = Some(wrapper(cursor, context)?);
                }
                b"filterServerList" => {
                    first(&mut seen, 2)?;
                    filter_servers = string_list(cursor)?;
                }
                _ => cursor.skip_value()?,
            }
            if !cursor.more(b'}')? {
                break;
            }
        }
    }
    Some(found.unwrap_or_default().into_body(filter_servers))
}

/// `filterServerList`: `null`, or an array of plain strings.
fn string_list(cursor: &mut Cursor) -> Option<Option<Vec<String>>> {
    if cursor.null() {
        return Some(None);
    }
    cursor.eat(b'[')?;
    let mut list = Vec::new();
    if !cursor.eat_if(b']') {
        loop {
            list.push(cursor.string()?.to_owned());
            if !cursor.more(b']')? {
                break;
            }
        }
    }
    Some(Some(list))
}

/// A `TopicConfigSerializeWrapper` object.
fn wrapper(cursor: &mut Cursor, context: &DecodeContext) -> Option<Wrapper> {
    let (mut wrapper, mut seen) = (Wrapper::default(), 0);
    if !cursor.open_object()? {
        loop {
            match cursor.key()? {
                b"dataVersion" => {
                    first(&mut seen, 1)?;
                    wrapper.data_version = if cursor.null() { None } else { Some(data_version(cursor)?) };
                }
                b"topicConfigTable" => {
                    first(&mut seen, 2)?;
                    if !cursor.null() {
                        wrapper.topics = topic_table(cursor, context)?;
                    }
                }
                b"topicQueueMappingInfoMap" => {
                    first(&mut seen, 4)?;
                    if !cursor.null() && !cursor.open_object()? {
                        return None; // mappings: the serde reader's job
                    }
                }
                _ => cursor.skip_value()?,
            }
            if !cursor.more(b'}')? {
                break;
            }
        }
    }
    Some(wrapper)
}

/// A `DataVersion` with plain integer (or `null`, read as 0) fields; missing ones are 0.
fn data_version(cursor: &mut Cursor) -> Option<DataVersion> {
    let (mut version, mut seen) = (DataVersion::default(), 0);
    if !cursor.open_object()? {
        loop {
            let slot = match cursor.key()? {
                b"counter" => Some((&mut version.counter, 1)),
                b"stateVersion" => Some((&mut version.state_version, 2)),
                b"timestamp" => Some((&mut version.timestamp, 4)),
                _ => None,
            };
            match slot {
                Some((slot, bit)) => {
                    first(&mut seen, bit)?;
                    *slot = if cursor.null() { 0 } else { cursor.long()? };
                }
                None => cursor.skip_value()?,
            }
            if !cursor.more(b'}')? {
                break;
            }
        }
    }
    Some(version)
}

/// Fewest bytes a topic config takes as brokers write it (about 180 with Java's eight fields):
/// the table is sized once for the rest of the body over this, and grows only for bodies of
/// bare configs.
const BYTES_PER_TOPIC: usize = 128;

/// `topicConfigTable`: topic configs by key, `null` ones left out, at most the context's cap
/// (past it the serde reader refuses the body), pacing after each topic.
fn topic_table(cursor: &mut Cursor, context: &DecodeContext) -> Option<TopicTable> {
    let max = context.limits.max_topics;
    let mut topics = TopicTable::with_capacity((cursor.remaining() / BYTES_PER_TOPIC).min(max));
    if cursor.open_object()? {
        return Some(topics);
    }
    loop {
        let key = cursor.string()?;
        cursor.eat(b':')?;
        if !cursor.null() {
            let (name, queue) = topic_config(cursor)?;
            if topics.len() >= max {
                return None;
            }
            topics.push_parts(key, name, queue);
            context.pacer.topic_parsed(topics.len());
        }
        if !cursor.more(b'}')? {
            return Some(topics);
        }
    }
}

/// A `TopicConfig`: its `topicName` (`None` when missing or `null`) and queue data, with the
/// defaults Java's `TopicConfig` has for missing fields.
#[inline(always)]
fn topic_config<'a>(cursor: &mut Cursor<'a>) -> Option<(Option<&'a str>, QueueData)> {
    let mut name = None;
    let mut queue = QueueData { read_queue_nums: 16, write_queue_nums: 16, perm: 6, topic_sys_flag: 0 };
    let mut seen = 0;
    if !cursor.open_object()? {
        loop {
            match cursor.key()? {
                b"topicName" => {
                    first(&mut seen, 1)?;
                    name = if cursor.null() { None } else { Some(cursor.string()?) };
                }
                b"readQueueNums" => {
                    first(&mut seen, 2)?;
                    queue.read_queue_nums = cursor.int()?;
                }
                b"writeQueueNums" => {
                    first(&mut seen, 4)?;
                    queue.write_queue_nums = cursor.int()?;
                }
                b"perm" => {
                    first(&mut seen, 8)?;
                    queue.perm = cursor.int()?;
                }
                b"topicSysFlag" | b"topicSynFlag" => {
                    first(&mut seen, 16)?;
                    queue.topic_sys_flag = cursor.int()?;
                }
                _ => cursor.skip_value()?,
            }
            if !cursor.more(b'}')? {
                break;
            }
        }
    }
    Some((name, queue))
}

#[cfg(test)]
#[path = "register_scan_tests.rs"]
mod tests;
