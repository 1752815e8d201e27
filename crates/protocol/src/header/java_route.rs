//! The route query header as Java clients write it, matched byte for byte: fastjson's field
//! order with no whitespace,
//! `{"code":105,"extFields":{"topic":"T"},"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}`.
//! Most route queries a NameServer sees look exactly like this, and comparing fixed pieces is
//! several times cheaper than walking the header key by key. It reads only what the walk of
//! [`crate::header::scan`] reads the same way (plain strings, plain `i32`s, literal keys), so
//! wherever it matches both read the same header; anything else is left to the walk.

use crate::command::{FLAG_ONEWAY, FLAG_RESPONSE};
use crate::json::cursor::{plain_integer, plain_len};
use crate::json::JsonStyle;

/// What a plain GET_ROUTEINFO_BY_TOPIC request header asks, borrowed from the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteHeader<'h> {
    /// The request's opaque.
    pub opaque: i32,
    /// The topic (`extFields.topic`).
    pub topic: &'h str,
    /// The client's version.
    pub version: i32,
    /// `extFields.acceptStandardJsonOnly`, when sent.
    pub accept_standard_json_only: Option<&'h str>,
}

impl RouteHeader<'_> {
    /// The JSON style of the route body this request gets.
    pub fn body_style(&self) -> JsonStyle {
        JsonStyle::for_route(self.version, self.accept_standard_json_only)
    }
}

/// The pieces between the values, in order.
const OPEN: &[u8] = br#"{"code":105,"extFields":{"topic":""#;
const AFTER_TOPIC: &[u8] = br#""},"flag":"#;
const AFTER_FLAG: &[u8] = br#","language":""#;
const AFTER_LANGUAGE: &[u8] = br#"","opaque":"#;
const AFTER_OPAQUE: &[u8] = br#","serializeTypeCurrentRPC":"JSON","version":"#;
const CLOSE: &[u8] = b"}";

/// The route query in `header` when it is laid out exactly as Java clients write it and is a
/// two-way request; `None` otherwise.
pub(crate) fn java_route(header: &[u8]) -> Option<RouteHeader<'_>> {
    let mut layout = Layout { bytes: header, at: 0 };
    layout.piece(OPEN)?;
    let topic = layout.string()?;
    layout.piece(AFTER_TOPIC)?;
    let flag = layout.int()?;
    layout.piece(AFTER_FLAG)?;
    layout.skip_string()?;
    layout.piece(AFTER_LANGUAGE)?;
    let opaque = layout.int()?;
    layout.piece(AFTER_OPAQUE)?;
    let version = layout.int()?;
    layout.piece(CLOSE)?;
    let two_way = flag & (FLAG_ONEWAY | FLAG_RESPONSE) == 0;
    (layout.at == header.len() && two_way).then_some(RouteHeader {
        opaque,
        topic,
        version,
        accept_standard_json_only: None,
    })
}

/// A position in the header.
struct Layout<'h> {
    bytes: &'h [u8],
    at: usize,
}

impl<'h> Layout<'h> {
    /// Consumes `piece`, which must come next.
    fn piece(&mut self, piece: &[u8]) -> Option<()> {
        let end = self.at + piece.len();
        (self.bytes.get(self.at..end)? == piece).then(|| self.at = end)
    }

    /// The content of a string whose opening quote was consumed: plain (no escape, no control
    /// character) and UTF-8. Its closing quote is left for the next piece.
    fn string(&mut self) -> Option<&'h str> {
        let rest = self.bytes.get(self.at..)?;
        let len = plain_len(rest);
        let content = std::str::from_utf8(&rest[..len]).ok()?;
        self.at += len;
        Some(content)
    }

    /// Skips what [`Layout::string`] reads (the language: read, not kept).
    fn skip_string(&mut self) -> Option<()> {
        let rest = self.bytes.get(self.at..)?;
        let len = plain_len(rest);
        if !rest[..len].is_ascii() {
            std::str::from_utf8(&rest[..len]).ok()?;
        }
        self.at += len;
        Some(())
    }

    /// A plain integer that fits an `i32`.
    fn int(&mut self) -> Option<i32> {
        let (value, len) = plain_integer(self.bytes.get(self.at..)?, 10)?;
        self.at += len;
        i32::try_from(value).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java(topic: &str, flag: &str, language: &str, opaque: &str, version: &str) -> String {
        format!(
            r#"{{"code":105,"extFields":{{"topic":"{topic}"}},"flag":{flag},"language":"{language}","opaque":{opaque},"serializeTypeCurrentRPC":"JSON","version":{version}}}"#
        )
    }

    #[test]
    fn reads_the_java_header() {
        let header = java("TopicTest", "0", "JAVA", "42", "479");
        let route = java_route(header.as_bytes()).expect("the Java layout");
        assert_eq!(
            (route.topic, route.opaque, route.version, route.accept_standard_json_only),
            ("TopicTest", 42, 479, None)
        );
    }
}
