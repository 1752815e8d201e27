//! A check serde_json's `Value` cannot make: no JSON object in a body repeats a key (Java's
//! maps never do; a parser would silently keep the last).

use std::collections::BTreeSet;
use std::fmt;

use namesrv::protocol::json::lenient::quote_bare_keys;
use namesrv::protocol::RemotingCommand;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Fails when the body of `response` repeats a key within one object.
pub fn check_unique_keys(response: &RemotingCommand) -> Result<(), String> {
    let Some(body) = response.body.as_deref() else {
        return Ok(());
    };
    match repeated_key(&quote_bare_keys(body)) {
        Some(key) => Err(format!("body repeats key {key:?}: {}", String::from_utf8_lossy(body))),
        None => Ok(()),
    }
}

/// The first key repeated within one object of `json`, if any (`json` must be standard JSON).
fn repeated_key(json: &[u8]) -> Option<String> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(json);
    let _ = Walk { found: &mut found }.deserialize(&mut de);
    found
}

/// Walks any JSON value, recording the first repeated key.
struct Walk<'a> {
    found: &'a mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) && self.found.is_none() {
                *self.found = Some(key);
            }
            map.next_value_seed(Walk { found: &mut *self.found })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Walk { found: &mut *self.found })?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}
