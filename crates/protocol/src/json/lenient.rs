//! Leniency for fastjson-written input: bare integer object keys (`{0:"a"}`), numbers written
//! as strings, and a parser that accepts both (Java reads all of them through fastjson).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer};
use serde::Deserialize;

/// Parses fastjson-written JSON, accepting bare integer keys. Valid JSON, the common case,
/// parses in one pass; only a body that fails is scanned for bare keys and parsed again.
pub fn parse_lenient<T: DeserializeOwned>(body: &[u8]) -> Result<T, serde_json::Error> {
    serde_json::from_slice(body).or_else(|e| match quote_bare_keys(body) {
        Cow::Owned(quoted) => serde_json::from_slice(&quoted),
        Cow::Borrowed(_) => Err(e),
    })
}

/// [`parse_lenient`] through a seed, for decodes that carry context (a limit, a pacer) down
/// to the values they read.
pub fn parse_lenient_seeded<S, T>(body: &[u8], seed: S) -> Result<T, serde_json::Error>
where
    S: Copy + for<'de> DeserializeSeed<'de, Value = T>,
{
    let parse = |bytes: &[u8]| {
        let mut json = serde_json::Deserializer::from_slice(bytes);
        let value = seed.deserialize(&mut json)?;
        json.end()?;
        Ok(value)
    };
    parse(body).or_else(|e| match quote_bare_keys(body) {
        Cow::Owned(quoted) => parse(&quoted),
        Cow::Borrowed(_) => Err(e),
    })
}

/// An i64 written as a number or as a decimal string (fastjson reads both); `null` is 0.
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

/// Returns `input` with every bare integer object key wrapped in quotes, so serde_json reads it.
///
/// Strings are skipped, so digits inside values are untouched; input without bare keys is
/// returned borrowed, at the cost of one scan.
pub fn quote_bare_keys(input: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut nesting: Vec<u8> = Vec::new();
    let mut in_string = false;
    let mut expect_key = false;
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                expect_key = false;
            }
            b'{' | b'[' => {
                nesting.push(b);
                expect_key = b == b'{';
            }
            b'}' | b']' => {
                nesting.pop();
                expect_key = false;
            }
            b',' => expect_key = nesting.last() == Some(&b'{'),
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'-' | b'0'..=b'9' if expect_key => {
                let end = i + 1 + input[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                let after = end + input[end..].iter().take_while(|c| c.is_ascii_whitespace()).count();
                if input.get(after) == Some(&b':') {
                    let buf = out.get_or_insert_with(|| Vec::with_capacity(input.len() + 16));
                    buf.extend_from_slice(&input[copied..i]);
                    buf.push(b'"');
                    buf.extend_from_slice(&input[i..end]);
                    buf.push(b'"');
                    copied = end;
                }
                expect_key = false;
                i = end;
                continue;
            }
            _ => expect_key = false,
        }
        i += 1;
    }
    match out {
        None => Cow::Borrowed(input),
        Some(mut buf) => {
            buf.extend_from_slice(&input[copied..]);
            Cow::Owned(buf)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(s: &str) -> String {
        String::from_utf8(quote_bare_keys(s.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn bare_keys_are_quoted_and_everything_else_kept() {
        assert_eq!(quoted(r#"{0:"a:1", 1 :"b",-2:3}"#), r#"{"0":"a:1", "1" :"b","-2":3}"#);
        assert_eq!(quoted(r#"{"m":{0:0,1:1},"n":[1,2],"s":"{3:4}"}"#), r#"{"m":{"0":0,"1":1},"n":[1,2],"s":"{3:4}"}"#);
        assert_eq!(quoted(r#"{0:"a","1":"b"}"#), r#"{"0":"a","1":"b"}"#);
    }

    #[test]
    fn valid_json_is_borrowed_untouched() {
        let input = br#"{"a":[1,{"b":2}],"c":"x\"{1:2}"}"#;
        assert!(matches!(quote_bare_keys(input), Cow::Borrowed(_)));
    }
}
