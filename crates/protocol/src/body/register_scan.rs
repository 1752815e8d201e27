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
mod tests {
    use super::*;
    use crate::body::register_json::decode_general;
    use crate::body::BodyLimits;

    const RUST_BROKER_BODY: &[u8] = include_bytes!(
        "../../../../tests/fixtures/rocketmq-rust-broker-1.0.0/01-register-broker.json-header.req.body.bin"
    );

    /// A body as Java's fastjson writes it: keys sorted, 5.x fields.
    const JAVA_BODY: &str = r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":12,"stateVersion":0,"timestamp":1733140800123},"topicConfigTable":{"%RETRY%g":{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"%RETRY%g","topicSysFlag":0,"writeQueueNums":1},"TopicTest":{"attributes":{"+message.type":"NORMAL"},"order":false,"perm":6,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":8}},"topicQueueMappingInfoMap":{}}}"#;

    fn context(max_topics: usize) -> DecodeContext {
        DecodeContext::unpaced(BodyLimits { max_inflated_bytes: 1 << 20, max_topics })
    }

    /// `scan` either gives up or reads what the serde reader reads.
    fn agrees_at(body: &[u8], request_version: i32, max_topics: usize) -> bool {
        let context = context(max_topics);
        let general = decode_general(body, request_version, &context);
        match scan(body, request_version, &context) {
            Some(decoded) => {
                let text = String::from_utf8_lossy(body);
                assert_eq!(Some(&decoded), general.as_ref().ok(), "scanner and serde reader differ on {text}");
                true
            }
            None => false,
        }
    }

    fn agrees(body: &str) -> bool {
        agrees_at(body.as_bytes(), version::V3_0_11, 1000)
    }

    #[test]
    fn reads_the_bodies_brokers_send() {
        assert!(agrees_at(RUST_BROKER_BODY, 479, 1000), "the rocketmq-rust broker's body");
        assert!(agrees(JAVA_BODY), "a Java broker's body");
        let decoded = scan(JAVA_BODY.as_bytes(), 479, &context(1000)).unwrap();
        assert_eq!(decoded.data_version, DataVersion { counter: 12, state_version: 0, timestamp: 1_733_140_800_123 });
        assert_eq!(decoded.filter_servers, Some(vec![]));
        let test = decoded.topics.iter().find(|t| t.key == "TopicTest").unwrap();
        assert_eq!((test.name, test.queue.read_queue_nums, test.queue.perm), ("TopicTest", 8, 6));
        for body in [
            r#"{"dataVersion":{"counter":1},"topicConfigTable":{"T":{"topicName":"T"}}}"#,
            r#"{"topicConfigTable":null,"dataVersion":null}"#,
        ] {
            assert!(agrees_at(body.as_bytes(), 0, 1000), "a pre-V3_0_11 wrapper: {body}");
        }
        for body in [
            "{}",
            r#" { "topicConfigSerializeWrapper" : { "topicConfigTable" : { "A" : { } , "B" : null } } , "x" : [ 1 , { } ] } "#,
            r#"{"filterServerList":null,"topicConfigSerializeWrapper":{"topicQueueMappingInfoMap":null,"topicConfigTable":{}}}"#,
            r#"{"filterServerList":["10.0.0.1:40000"],"topicConfigSerializeWrapper":{"dataVersion":{"counter":null,"x":"y"}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"K":{"topicName":"N","topicSynFlag":3,"perm":-1}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"K":{"topicName":null},"K":{"topicName":""}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"tópico-ü":{"readQueueNums":2147483647}}}}"#,
        ] {
            assert!(agrees(body), "should be read by the scanner: {body}");
        }
    }

    #[test]
    fn gives_up_on_anything_unexpected() {
        for body in [
            r#"{"topicConfigSerializeWrapper":{"dataVersion":{"counter":"5"}}}"#,
            r#"{"topicConfigSerializeWrapper":{"dataVersion":{"counter":1.5}}}"#,
            r#"{"topicConfigSerializeWrapper":{"dataVersion":{"counter":1,"counter":2}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{"perm":"6"}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{"perm":6,"perm":6}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{"topicSysFlag":1,"topicSynFlag":1}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{"readQueueNums":2147483648}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{"readQueueNums":null}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A":7}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A\u0042":{}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{"topicName":"A\"B"}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{0:{}}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{}},"topicConfigTable":{}}}"#,
            r#"{"topicConfigSerializeWrapper":{"topicQueueMappingInfoMap":{"A":{"bname":"b","currIdMap":{0:0}}}}}"#,
            r#"{"topicConfigSerializeWrapper":null}"#,
            r#"{"topicConfigSerializeWrapper":{},"topicConfigSerializeWrapper":{}}"#,
            r#"{"filterServerList":[null]}"#,
            r#"{"filterServerList":"a"}"#,
            r#"{"x":1e5}"#,
            r#"{"x":"a\\b"}"#,
            r#"{"topicConfigSerializeWrapper":{}} {}"#,
            r#"{"topicConfigSerializeWrapper":{},}"#,
            r#"{"topicConfigSerializeWrapper":{"#,
            r#"[{}]"#,
            "",
        ] {
            assert!(!agrees(body), "should be left to the serde reader: {body}");
        }
        assert!(scan(b"{\"x\":\"\xff\"}", 479, &context(10)).is_none(), "not UTF-8");
    }

    /// Past the cap the scanner gives up, and the serde reader refuses the body as it always has.
    #[test]
    fn more_topics_than_the_cap_are_left_to_the_serde_reader() {
        let body = r#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"A":{},"B":null,"C":{}}}}"#;
        assert!(agrees_at(body.as_bytes(), 479, 2), "two topics (the null one is not one)");
        assert!(!agrees_at(body.as_bytes(), 479, 1));
        let refused = crate::body::register_json::decode_json_form(body.as_bytes(), 479, &context(1)).unwrap_err();
        assert!(refused.to_string().contains("too many topics: more than 1"), "{refused}");
    }

    /// A small xorshift generator: the same cases on every run.
    fn generator() -> impl FnMut() -> u64 {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Joins a random choice of up to `most` of `pieces` into an object.
    fn object(next: &mut impl FnMut() -> u64, pieces: &[String], most: u64) -> String {
        let members: Vec<&str> =
            (0..next() % (most + 1)).map(|_| pieces[(next() % pieces.len() as u64) as usize].as_str()).collect();
        format!("{{{}}}", members.join(","))
    }

    #[test]
    fn agrees_with_the_serde_reader_on_generated_bodies() {
        let mut next = generator();
        let config_fields: Vec<String> = [
            r#""topicName":"T""#,
            r#""topicName":null"#,
            r#""topicName":"Ü""#,
            r#""readQueueNums":8"#,
            r#""writeQueueNums":-3"#,
            r#""perm":7"#,
            r#""topicSysFlag":1"#,
            r#""topicSynFlag":2"#,
            r#""order":true"#,
            r#""attributes":{"a":"b"}"#,
            r#""topicFilterType":"SINGLE_TAG""#,
            r#""perm":"6""#,
            r#""readQueueNums":1.0"#,
            r#""z" : [ ]"#,
        ]
        .map(String::from)
        .to_vec();
        let (mut read, mut left) = (0, 0);
        for _ in 0..5_000 {
            let topics: Vec<String> = (0..next() % 6)
                .map(|t| match next() % 8 {
                    0 => format!(r#""K{t}":null"#),
                    1 => format!(r#""K{}":{{}}"#, next() % 3),
                    _ => format!(r#""K{t}":{}"#, object(&mut next, &config_fields, 6)),
                })
                .collect();
            let wrapper_fields: Vec<String> = vec![
                format!(r#""topicConfigTable":{{{}}}"#, topics.join(",")),
                r#""topicConfigTable":null"#.into(),
                r#""dataVersion":{"counter":3,"stateVersion":-1,"timestamp":1733140800123}"#.into(),
                r#""dataVersion":{"counter":"3"}"#.into(),
                r#""dataVersion":null"#.into(),
                r#""topicQueueMappingInfoMap":{}"#.into(),
                r#""topicQueueMappingInfoMap":{"K0":{"bname":"b","epoch":1}}"#.into(),
                r#""mappingDataVersion":{"counter":0}"#.into(),
            ];
            let body_fields: Vec<String> = vec![
                format!(r#""topicConfigSerializeWrapper":{}"#, object(&mut next, &wrapper_fields, 4)),
                r#""filterServerList":[]"#.into(),
                r#""filterServerList":["a","b"]"#.into(),
                r#""filterServerList":null"#.into(),
                r#""other":{"deep":[1,[2,{"x":false}]]}"#.into(),
            ];
            let body = object(&mut next, &body_fields, 3);
            let old_version = next() % 4 == 0;
            let (body, version) = if old_version { (object(&mut next, &wrapper_fields, 4), 0) } else { (body, 479) };
            if agrees_at(body.as_bytes(), version, 1000) {
                read += 1;
            } else {
                left += 1;
            }
        }
        assert!(read > 500 && left > 500, "both paths exercised: {read} read, {left} left");
    }

    /// Damaged bodies: wherever a byte is replaced, dropped or doubled, the scanner either gives
    /// up or reads what the serde reader reads.
    #[test]
    fn agrees_with_the_serde_reader_on_damaged_bodies() {
        let mut next = generator();
        let replacements = b"{}[]:,\"\\ 0-9.enul\x01";
        let (mut read, mut left) = (0, 0);
        for source in [JAVA_BODY.as_bytes(), RUST_BROKER_BODY] {
            for _ in 0..3_000 {
                let mut body = source.to_vec();
                let at = (next() % body.len() as u64) as usize;
                match next() % 3 {
                    0 => body[at] = replacements[(next() % replacements.len() as u64) as usize],
                    1 => {
                        body.remove(at);
                    }
                    _ => body.insert(at, body[at]),
                }
                if agrees_at(&body, 479, 1000) {
                    read += 1;
                } else {
                    left += 1;
                }
            }
        }
        assert!(read > 100 && left > 100, "both paths exercised: {read} read, {left} left");
    }
}
