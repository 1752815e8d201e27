//! The JSON header (serialize type 0): a lenient reader and a writer in fastjson's field order.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::code::LanguageCode;
use crate::command::{ExtFields, RemotingCommand, SerializeType};
use crate::header::scan;
use crate::json::{push_decimal, push_field, push_str, JsonStyle};

/// The fields of a JSON header; anything else in the object is ignored, any order is accepted.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonHeader {
    #[serde(default)]
    code: i32,
    #[serde(default, deserialize_with = "language")]
    language: Option<LanguageCode>,
    #[serde(default)]
    version: i32,
    #[serde(default)]
    opaque: i32,
    #[serde(default)]
    flag: i32,
    #[serde(default)]
    remark: Option<String>,
    #[serde(default, deserialize_with = "ext_fields")]
    ext_fields: Option<ExtFields>,
}

/// Reads a JSON header into a command without body: plain headers by the scanner
/// (`header_scan`), anything else by the general reader.
pub fn decode(header: &[u8]) -> Result<RemotingCommand, serde_json::Error> {
    match scan::scan(header) {
        Some(cmd) => Ok(cmd),
        None => decode_general(header),
    }
}

/// Reads any JSON header serde can: fields in any order, values of any shape (the reader that
/// decides whenever the scanner gives up, and what the scanner is checked against).
pub fn decode_general(header: &[u8]) -> Result<RemotingCommand, serde_json::Error> {
    let h: JsonHeader = serde_json::from_slice(header)?;
    Ok(RemotingCommand {
        code: h.code,
        language: h.language,
        version: h.version,
        opaque: h.opaque,
        flag: h.flag,
        remark: h.remark,
        ext_fields: h.ext_fields,
        body: None,
        serialize_type: SerializeType::Json,
    })
}

/// Writes the header of `cmd` as JSON, fields in alphabetical order like fastjson.
pub fn encode(cmd: &RemotingCommand, out: &mut Vec<u8>) {
    let style = JsonStyle::Fastjson;
    out.extend_from_slice(b"{\"code\":");
    push_decimal(out, cmd.code);
    if let Some(ext) = &cmd.ext_fields {
        out.extend_from_slice(b",\"extFields\":{");
        for (i, (k, v)) in ext.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_str(out, k, style);
            out.push(b':');
            push_str(out, v, style);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b",\"flag\":");
    push_decimal(out, cmd.flag);
    if let Some(language) = cmd.language {
        // Language names are plain upper-case ASCII: nothing to escape.
        out.extend_from_slice(b",\"language\":\"");
        out.extend_from_slice(language.name().as_bytes());
        out.push(b'"');
    }
    out.extend_from_slice(b",\"opaque\":");
    push_decimal(out, cmd.opaque);
    if let Some(remark) = &cmd.remark {
        out.push(b',');
        push_field(out, "remark");
        push_str(out, remark, style);
    }
    out.extend_from_slice(b",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");
    push_decimal(out, cmd.version);
    out.push(b'}');
}

/// `language` as an enum name (`"GO"`) or ordinal (`9`); anything unknown is no language. Read
/// in place: a request's header allocates nothing for it.
fn language<'de, D: Deserializer<'de>>(d: D) -> Result<Option<LanguageCode>, D::Error> {
    struct LanguageVisitor;
    impl<'de> Visitor<'de> for LanguageVisitor {
        type Value = Option<LanguageCode>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a language name or ordinal")
        }
        fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
            Ok(LanguageCode::from_name(name))
        }
        fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
            Ok(u8::try_from(n).ok().and_then(LanguageCode::from_u8))
        }
        fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
            Ok(u8::try_from(n).ok().and_then(LanguageCode::from_u8))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    d.deserialize_any(LanguageVisitor)
}

/// `extFields` as an object whose values may be any JSON; non-strings become their text, null drops.
fn ext_fields<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ExtFields>, D::Error> {
    struct ExtVisitor;
    impl<'de> Visitor<'de> for ExtVisitor {
        type Value = Option<ExtFields>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an extFields object or null")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(self)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut fields = ExtFields::new();
            while let Some((key, value)) = map.next_entry::<String, serde_json::Value>()? {
                match value {
                    serde_json::Value::Null => {}
                    serde_json::Value::String(s) => fields.insert(key, s),
                    other => fields.insert(key, other.to_string()),
                }
            }
            Ok(Some(fields))
        }
    }
    d.deserialize_option(ExtVisitor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_in_any_order_and_ignores_unknown_ones() {
        let cmd = decode(br#"{"version":121,"unknown":[1,2],"opaque":7,"extFields":{"topic":"T","n":5,"b":true,"z":null},"code":105,"language":"JAVA","remark":""}"#).unwrap();
        assert_eq!(cmd.code, 105);
        assert_eq!(cmd.opaque, 7);
        assert_eq!(cmd.version, 121);
        assert_eq!(cmd.language, Some(LanguageCode::Java));
        assert_eq!(cmd.remark.as_deref(), Some(""));
        assert_eq!(cmd.ext("topic"), Some("T"));
        assert_eq!(cmd.ext("n"), Some("5"));
        assert_eq!(cmd.ext("b"), Some("true"));
        assert_eq!(cmd.ext("z"), None);
    }

    #[test]
    fn missing_fields_take_defaults_and_language_may_be_a_number() {
        let cmd = decode(br#"{"code":106,"language":9,"extFields":null}"#).unwrap();
        assert_eq!((cmd.flag, cmd.version, cmd.opaque), (0, 0, 0));
        assert_eq!(cmd.language, Some(LanguageCode::Go));
        assert!(cmd.ext_fields.is_none());
        assert_eq!(decode(br#"{"code":1,"language":"KLINGON"}"#).unwrap().language, None);
        for other in ["null", "-1", "300", "1.5", "true", "[1,\"JAVA\"]", "{\"a\":{\"b\":1}}"] {
            let header = format!(r#"{{"code":1,"language":{other},"opaque":3}}"#);
            let cmd = decode(header.as_bytes()).unwrap();
            assert_eq!((cmd.opaque, cmd.language), (3, None), "{other}");
        }
        assert_eq!(decode(br#"{"language":"J\u0041VA"}"#).unwrap().language, Some(LanguageCode::Java));
    }

    #[test]
    fn every_language_is_written_as_its_plain_name_and_read_back() {
        for language in (0..=u8::MAX).filter_map(LanguageCode::from_u8) {
            let cmd = RemotingCommand { language: Some(language), ..RemotingCommand::request(105, None) };
            let mut out = Vec::new();
            encode(&cmd, &mut out);
            let text = String::from_utf8(out.clone()).unwrap();
            assert!(text.contains(&format!(r#","language":"{}","#, language.name())), "{text}");
            assert_eq!(decode(&out).unwrap().language, Some(language));
            assert_eq!(decode_general(&out).unwrap().language, Some(language));
        }
    }

    #[test]
    fn writes_the_java_client_request_byte_for_byte() {
        let cmd = RemotingCommand::request(105, Some(ExtFields::new().with("topic", "TopicTest"))).with_opaque(42);
        let mut out = Vec::new();
        encode(&cmd, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":42,"serializeTypeCurrentRPC":"JSON","version":479}"#
        );
    }

    #[test]
    fn malformed_json_is_an_error() {
        assert!(decode(b"{\"code\":").is_err());
        assert!(decode(b"\"x\"").is_err());
    }
}
