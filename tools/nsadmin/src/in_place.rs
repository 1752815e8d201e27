//! Answer bodies read in place, for the answers that can be large (topic lists, KV tables):
//! names and values borrowed from the body instead of copied into strings and tree slots, so an
//! answer at `--max-answer-bytes` costs about twice its size, not four or five times. The owned
//! readings in `wire` stay for what is kept or compared (`diff`).

use std::borrow::Cow;

use namesrv_protocol::json::lenient::quote_bare_keys;
use serde::de::{Deserialize, Deserializer};
use serde::{Serialize, Serializer};

use crate::lenient::{null_default, sorted_pairs};

/// A name or value read in place: borrowed from the body, copied only when the JSON escapes a
/// character of it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Name<'a>(#[serde(borrow)] pub Cow<'a, str>);

impl Name<'_> {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The same text, copied.
    fn into_owned(self) -> Name<'static> {
        Name(Cow::Owned(self.0.into_owned()))
    }
}

/// A topic-list body (Java's `TopicList`) read in place: its names sorted and once each, as
/// `wire::TopicList` has them, at 24 bytes a name beside the body.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicNames<'a> {
    /// Topic names.
    #[serde(borrow, default, deserialize_with = "null_default")]
    pub topic_list: Vec<Name<'a>>,
}

impl<'a> TopicNames<'a> {
    /// Reads a topic-list body, sorted and without repeats.
    pub fn read(body: &'a [u8]) -> Result<TopicNames<'a>, serde_json::Error> {
        let mut names = match in_place_or_quoted::<TopicNames<'a>>(body)? {
            Ok(names) => names,
            Err(quoted) => serde_json::from_slice::<TopicNames<'_>>(&quoted)?.into_owned(),
        };
        names.topic_list.sort_unstable();
        names.topic_list.dedup();
        Ok(names)
    }

    /// The same names, copied.
    fn into_owned(self) -> TopicNames<'static> {
        TopicNames { topic_list: self.topic_list.into_iter().map(Name::into_owned).collect() }
    }
}

/// Key-value pairs sorted by key, once each: a JSON object read in place (`null` is empty, a
/// repeated key keeps its last value, as a map keeps it) and written as an object again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entries<'a>(pub Vec<(Name<'a>, Name<'a>)>);

impl Entries<'_> {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        let found = self.0.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok()?;
        self.0.get(found).map(|(_, v)| v.as_str())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        sorted_pairs(d).map(Entries)
    }
}

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// A `KVTable` body (a KV namespace, a broker's runtime info) read in place.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KvEntries<'a> {
    /// Keys and values.
    #[serde(borrow, default)]
    pub table: Entries<'a>,
}

impl<'a> KvEntries<'a> {
    /// Reads a `KVTable` body.
    pub fn read(body: &'a [u8]) -> Result<KvEntries<'a>, serde_json::Error> {
        Ok(match in_place_or_quoted::<KvEntries<'a>>(body)? {
            Ok(kv) => kv,
            Err(quoted) => serde_json::from_slice::<KvEntries<'_>>(&quoted)?.into_owned(),
        })
    }

    /// The same entries, copied.
    fn into_owned(self) -> KvEntries<'static> {
        let owned = self.table.0.into_iter().map(|(k, v)| (k.into_owned(), v.into_owned()));
        KvEntries { table: Entries(owned.collect()) }
    }
}

/// `body` read in place (as `wire::parse` reads it, leniently): the value, or, when only
/// fastjson's bare integer keys keep it from parsing, the quoted text to read (and copy) from.
fn in_place_or_quoted<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<Result<T, Vec<u8>>, serde_json::Error> {
    serde_json::from_slice::<T>(body).map(Ok).or_else(|e| match quote_bare_keys(body) {
        Cow::Owned(quoted) => Ok(Err(quoted)),
        Cow::Borrowed(_) => Err(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_are_borrowed_sorted_once_each_and_copied_only_when_escaped() {
        let body = br#"{"topicList":["b","a\u001b[2J","b","c"],"brokerAddr":null}"#;
        let names = TopicNames::read(body).expect("parses");
        let read: Vec<&str> = names.topic_list.iter().map(Name::as_str).collect();
        assert_eq!(read, ["a\x1b[2J", "b", "c"]);
        let borrowed = names.topic_list.iter().filter(|n| matches!(n.0, Cow::Borrowed(_))).count();
        assert_eq!(borrowed, 2, "only the escaped name is copied");
        assert_eq!(serde_json::to_string(&names).expect("writes"), r#"{"topicList":["a\u001b[2J","b","c"]}"#);
        assert!(TopicNames::read(br#"{"topicList":null}"#).expect("null").topic_list.is_empty());
        assert!(TopicNames::read(b"").is_err());
    }

    #[test]
    fn kv_tables_are_read_in_place_and_leniently() {
        let kv = KvEntries::read(br#"{"table":{"b":"2","a":"1","b":"3"}}"#).expect("parses");
        assert_eq!((kv.table.get("a"), kv.table.get("b"), kv.table.get("c")), (Some("1"), Some("3"), None));
        assert_eq!(serde_json::to_string(&kv).expect("writes"), r#"{"table":{"a":"1","b":"3"}}"#);
        // fastjson's bare integer keys: quoted, read again, copied.
        let bare = KvEntries::read(br#"{"table":{"k":"v"},"extra":{0:"x"}}"#).expect("parses");
        assert_eq!(bare.table.get("k"), Some("v"));
    }
}
