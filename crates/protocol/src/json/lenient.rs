//! Leniency for fastjson-written input: bare integer object keys (`{0:"a"}`), numbers written
//! as strings, and a parser that accepts both (Java reads all of them through fastjson).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

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
    let mut quoted = Quoted::borrowing(input);
    for key in BareKeys::of(input) {
        quoted.quote(key);
    }
    quoted.finish()
}

/// The bare integer object keys of a JSON text (`0` and `-2` in `{0:"a",-2:3}`) as byte ranges,
/// found in one pass that follows strings and nesting and parses nothing else.
struct BareKeys<'a> {
    input: &'a [u8],
    at: usize,
    /// The open `{` and `[` around `at`.
    nesting: Vec<u8>,
    in_string: bool,
    /// True where an object key may start: after `{` or after a `,` inside an object.
    expect_key: bool,
}

impl<'a> BareKeys<'a> {
    fn of(input: &'a [u8]) -> Self {
        BareKeys { input, at: 0, nesting: Vec::new(), in_string: false, expect_key: false }
    }

    /// The end of the integer starting at `start`, and whether a `:` follows it (after any
    /// whitespace), making it a key.
    fn integer_at(&self, start: usize) -> (usize, bool) {
        let input = self.input;
        let end = start + 1 + input[start + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let after = end + input[end..].iter().take_while(|c| c.is_ascii_whitespace()).count();
        (end, input.get(after) == Some(&b':'))
    }
}

impl Iterator for BareKeys<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        while let Some(&b) = self.input.get(self.at) {
            let start = self.at;
            self.at += 1;
            if self.in_string {
                match b {
                    b'\\' => self.at += 1,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    self.expect_key = false;
                }
                b'{' | b'[' => {
                    self.nesting.push(b);
                    self.expect_key = b == b'{';
                }
                b'}' | b']' => {
                    self.nesting.pop();
                    self.expect_key = false;
                }
                b',' => self.expect_key = self.nesting.last() == Some(&b'{'),
                b' ' | b'\t' | b'\r' | b'\n' => {}
                b'-' | b'0'..=b'9' if self.expect_key => {
                    self.expect_key = false;
                    let (end, is_key) = self.integer_at(start);
                    self.at = end;
                    if is_key {
                        return Some(start..end);
                    }
                }
                _ => self.expect_key = false,
            }
        }
        None
    }
}

/// A text with quotes put around some of its ranges, copied only when the first is quoted.
struct Quoted<'a> {
    input: &'a [u8],
    /// The copy, once a range has been quoted: `input[..copied]` with its quotes.
    out: Option<Vec<u8>>,
    copied: usize,
}

impl<'a> Quoted<'a> {
    fn borrowing(input: &'a [u8]) -> Self {
        Quoted { input, out: None, copied: 0 }
    }

    /// Quotes `range`, which starts at or after the end of the range quoted before it.
    fn quote(&mut self, range: Range<usize>) {
        let input = self.input;
        let out = self.out.get_or_insert_with(|| Vec::with_capacity(input.len() + 16));
        out.extend_from_slice(&input[self.copied..range.start]);
        out.push(b'"');
        out.extend_from_slice(&input[range.clone()]);
        out.push(b'"');
        self.copied = range.end;
    }

    fn finish(self) -> Cow<'a, [u8]> {
        match self.out {
            None => Cow::Borrowed(self.input),
            Some(mut out) => {
                out.extend_from_slice(&self.input[self.copied..]);
                Cow::Owned(out)
            }
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
