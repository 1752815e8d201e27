//! Hand-written JSON output in the two styles RocketMQ clients expect from fastjson.
//!
//! `Fastjson` is fastjson's default output: bare numeric map keys, raw non-ASCII.
//! `Standard` is the `acceptStandardJsonOnly` output: quoted keys, `\uXXXX` for non-ASCII, `\/`.
//!
//! Reading: `lenient` accepts what fastjson writes (bare integer keys, numbers as strings);
//! `cursor` reads the plain subset fast for the hand-written readers of hot inputs.

pub(crate) mod cursor;
pub mod lenient;

/// Which of fastjson's two encodings to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonStyle {
    /// Bare numeric map keys (`{0:"a"}`), as Java sends to clients older than 4.9.4.
    Fastjson,
    /// Valid JSON in fastjson's browser-compatible form.
    Standard,
}

impl JsonStyle {
    /// The style of a route body for a client of `version` that sent
    /// `acceptStandardJsonOnly` as `accept_standard_json_only` (Java: standard JSON from
    /// V4_9_4 on, or when that field says "true" in any case).
    pub fn for_route(version: i32, accept_standard_json_only: Option<&str>) -> JsonStyle {
        let asked = accept_standard_json_only.is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if version >= crate::code::version::V4_9_4 || asked {
            JsonStyle::Standard
        } else {
            JsonStyle::Fastjson
        }
    }
}

/// Largest integer fastjson's browser-compatible mode writes as a bare number.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Appends `s` as a quoted JSON string.
pub fn push_str(out: &mut Vec<u8>, s: &str, style: JsonStyle) {
    let plain =
        |b: &u8| *b >= 0x20 && *b < 0x7F && *b != b'"' && *b != b'\\' && (*b != b'/' || style == JsonStyle::Fastjson);
    let plain = |b: &u8| plain(b) || (style == JsonStyle::Fastjson && *b >= 0x80);
    if s.as_bytes().iter().all(plain) {
        // The common case (topic, broker and address names): one copy, no per-char work.
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        return;
    }
    out.push(b'"');
    let mut start = 0;
    let bytes = s.as_bytes();
    for (i, ch) in s.char_indices() {
        let escape: Option<&[u8]> = match ch {
            '"' => Some(b"\\\""),
            '\\' => Some(b"\\\\"),
            '\n' => Some(b"\\n"),
            '\r' => Some(b"\\r"),
            '\t' => Some(b"\\t"),
            '\u{8}' => Some(b"\\b"),
            '\u{c}' => Some(b"\\f"),
            '/' if style == JsonStyle::Standard => Some(b"\\/"),
            c if (c as u32) < 0x20 || (style == JsonStyle::Standard && !c.is_ascii()) => None,
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        start = i + ch.len_utf8();
        match escape {
            Some(e) => out.extend_from_slice(e),
            None => {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    push_unicode_escape(out, *unit);
                }
            }
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends `\uXXXX` with upper-case hex digits, as fastjson writes them.
fn push_unicode_escape(out: &mut Vec<u8>, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[usize::from((unit >> shift) & 0xF)]);
    }
}

/// Appends an object key (`"name":`) that is a plain ASCII field name.
pub fn push_field(out: &mut Vec<u8>, name: &str) {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// Appends an integer map key: bare in fastjson style, quoted in standard style.
pub fn push_int_key(out: &mut Vec<u8>, key: i64, style: JsonStyle) {
    match style {
        JsonStyle::Fastjson => push_decimal(out, key),
        JsonStyle::Standard => {
            out.push(b'"');
            push_decimal(out, key);
            out.push(b'"');
        }
    }
    out.push(b':');
}

/// Appends the decimal digits of `n` without allocating.
pub fn push_decimal(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Appends an integer value; standard style quotes longs beyond 2^53-1 like fastjson does.
pub fn push_int(out: &mut Vec<u8>, value: i64, style: JsonStyle) {
    let quoted = style == JsonStyle::Standard && !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&value);
    if quoted {
        out.push(b'"');
    }
    push_decimal(out, value);
    if quoted {
        out.push(b'"');
    }
}

/// Appends `true` or `false`.
pub fn push_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

/// Appends `items` separated by commas, each written by `write`: the body of every JSON array
/// and object the NameServer writes.
pub fn push_joined<T>(out: &mut Vec<u8>, items: impl IntoIterator<Item = T>, mut write: impl FnMut(&mut Vec<u8>, T)) {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(out, item);
    }
}

/// Appends a JSON array of strings.
pub fn push_str_array<'a>(out: &mut Vec<u8>, items: impl IntoIterator<Item = &'a str>, style: JsonStyle) {
    out.push(b'[');
    push_joined(out, items, |out, item| push_str(out, item, style));
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(s: &str, style: JsonStyle) -> String {
        let mut out = Vec::new();
        push_str(&mut out, s, style);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn standard_style_escapes_like_fastjson_browser_compatible() {
        assert_eq!(string("bé</x>", JsonStyle::Standard), r#""b\u00E9<\/x>""#);
        assert_eq!(string("bé</x>", JsonStyle::Fastjson), "\"bé</x>\"");
        assert_eq!(string("a\"b\\c\nd\u{1}", JsonStyle::Fastjson), r#""a\"b\\c\nd\u0001""#);
        assert_eq!(string("😀", JsonStyle::Standard), r#""\uD83D\uDE00""#);
    }

    #[test]
    fn integer_keys_are_bare_only_in_fastjson_style() {
        let mut out = Vec::new();
        push_int_key(&mut out, 0, JsonStyle::Fastjson);
        push_int_key(&mut out, 1, JsonStyle::Standard);
        assert_eq!(out, b"0:\"1\":");
    }

    #[test]
    fn decimals_are_written_without_allocating_and_right() {
        for n in [0i64, 7, -7, 10, 479, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            push_decimal(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
    }

    #[test]
    fn big_longs_are_quoted_in_standard_style() {
        let mut out = Vec::new();
        push_int(&mut out, 9007199254740993, JsonStyle::Standard);
        out.push(b' ');
        push_int(&mut out, 9007199254740993, JsonStyle::Fastjson);
        assert_eq!(out, b"\"9007199254740993\" 9007199254740993");
    }
}
