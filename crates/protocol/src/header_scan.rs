//! A scanner for the JSON headers clients send with every request: one flat object of the known
//! keys with plain values (`{"code":105,"extFields":{"topic":"T"},"flag":0,...}`). It reads them
//! in one pass, allocating only the strings the command keeps, where serde's derived reader costs
//! about an eighth of a route query (generic field matching, a `Value` per extFields entry).
//!
//! It is written by hand because no JSON crate reads into this shape without those costs, and it
//! never decides anything on its own: whatever it does not expect (escapes, control characters,
//! nesting, a known key twice, numbers that are not plain `i32`s, `null` where a string goes)
//! makes it give up, and the caller reads the header with the general reader. So the two cannot
//! disagree on what a header means, only on how fast it is read.

use super::code::LanguageCode;
use super::command::{ExtFields, RemotingCommand, SerializeType};

/// The command in `header` when it is a plain header, `None` when the general reader must decide.
pub fn scan(header: &[u8]) -> Option<RemotingCommand> {
    // One UTF-8 check for the whole header; every string is then a slice of it (cut at quotes).
    let text = std::str::from_utf8(header).ok()?;
    let mut cursor = Cursor { text, bytes: header, at: 0 };
    let mut cmd = RemotingCommand {
        code: 0,
        language: None,
        version: 0,
        opaque: 0,
        flag: 0,
        remark: None,
        ext_fields: None,
        body: None,
        serialize_type: SerializeType::Json,
    };
    let mut seen = 0u8;
    cursor.eat(b'{')?;
    if cursor.peek()? == b'}' {
        cursor.at += 1;
    } else {
        loop {
            let key = cursor.raw_string()?;
            cursor.eat(b':')?;
            let bit = match key {
                b"code" => field(&mut cmd.code, cursor.int()?, 0),
                b"version" => field(&mut cmd.version, cursor.int()?, 1),
                b"opaque" => field(&mut cmd.opaque, cursor.int()?, 2),
                b"flag" => field(&mut cmd.flag, cursor.int()?, 3),
                b"language" => field(&mut cmd.language, LanguageCode::from_name(cursor.string()?), 4),
                b"remark" => field(&mut cmd.remark, Some(cursor.string()?.to_owned()), 5),
                b"extFields" => field(&mut cmd.ext_fields, cursor.ext_fields()?, 6),
                _ => cursor.skip_scalar().map(|()| 0)?,
            };
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            match cursor.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
    }
    cursor.skip_space();
    (cursor.at == header.len()).then_some(cmd)
}

/// The bytes that end the plain part of a string: its closing quote, an escape, a control character.
const STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        stops[b] = true;
        b += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

/// How many bytes of `bytes` are plain string content: the index of the first [`STOPS`] byte
/// (or the length). Eight bytes at a time: a word's bytes are tested all at once for `"`, `\\`
/// and control characters with the usual carry tricks (a flag can be wrong only above a right
/// one, so the lowest flag is the first stop).
#[inline(always)]
fn plain_len(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    let zero_byte = |word: u64| word.wrapping_sub(ONES) & !word;
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        let stops =
            (zero_byte(word ^ (ONES * u64::from(b'"'))) | zero_byte(word ^ (ONES * u64::from(b'\\'))) | control)
                & HIGHS;
        if stops != 0 {
            return at + (stops.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..].iter().position(|&b| STOPS[b as usize]).unwrap_or(bytes.len() - at)
}

/// Stores a known field's value; its bit in the set of fields seen (`1 << index`).
fn field<T>(slot: &mut T, value: T, index: u8) -> u8 {
    *slot = value;
    1 << index
}

/// A position in a header.
struct Cursor<'a> {
    /// The header, known to be UTF-8.
    text: &'a str,
    /// The same, as bytes.
    bytes: &'a [u8],
    at: usize,
}

// The small steps are inlined into their callers: called a dozen times per header, their call
// overhead was most of the scanner's cost.
impl<'a> Cursor<'a> {
    #[inline(always)]
    fn skip_space(&mut self) {
        if self.bytes.get(self.at).is_some_and(|&b| b > b' ') {
            return; // the usual case: no whitespace between tokens
        }
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes.get(self.at).copied()
    }

    /// The next byte after whitespace, consumed.
    #[inline(always)]
    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    #[inline(always)]
    fn eat(&mut self, expected: u8) -> Option<()> {
        (self.next()? == expected).then_some(())
    }

    /// A string without escapes or control characters, borrowed.
    #[inline(always)]
    fn string(&mut self) -> Option<&'a str> {
        let span = self.string_span()?;
        self.text.get(span)
    }

    /// The same string as bytes (for comparing keys).
    #[inline(always)]
    fn raw_string(&mut self) -> Option<&'a [u8]> {
        let span = self.string_span()?;
        self.bytes.get(span)
    }

    /// Where the content of the next string lies (between its quotes, which are consumed).
    #[inline(always)]
    fn string_span(&mut self) -> Option<std::ops::Range<usize>> {
        self.eat(b'"')?;
        let start = self.at;
        let end = start + plain_len(self.bytes.get(start..)?);
        if self.bytes.get(end) != Some(&b'"') {
            return None;
        }
        self.at = end + 1;
        Some(start..end)
    }

    /// An integer in JSON's grammar (no fraction or exponent) that fits an `i32`.
    #[inline(always)]
    fn int(&mut self) -> Option<i32> {
        self.skip_space();
        let rest = self.bytes.get(self.at..)?;
        let negative = rest.first() == Some(&b'-');
        let start = usize::from(negative);
        let (mut end, mut magnitude) = (start, 0i64);
        while let Some(&digit @ b'0'..=b'9') = rest.get(end) {
            if end - start == 10 {
                return None;
            }
            magnitude = magnitude * 10 + i64::from(digit - b'0');
            end += 1;
        }
        let digits = end - start;
        if digits == 0 || (digits > 1 && rest[start] == b'0') || matches!(rest.get(end), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        if negative && magnitude == 0 {
            return None; // JSON readers take `-0` for a float
        }
        self.at += end;
        i32::try_from(if negative { -magnitude } else { magnitude }).ok()
    }

    /// `extFields`: an object of string values, later keys replacing earlier ones.
    fn ext_fields(&mut self) -> Option<Option<ExtFields>> {
        self.eat(b'{')?;
        let mut fields = ExtFields::new();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(Some(fields));
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            let value = self.string()?;
            fields.insert(key, value);
            match self.next()? {
                b',' => continue,
                b'}' => return Some(Some(fields)),
                _ => return None,
            }
        }
    }

    /// The value of a key the command does not keep: a plain string, integer or literal.
    fn skip_scalar(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.raw_string().map(drop),
            b't' | b'f' | b'n' => {
                let rest = &self.bytes[self.at..];
                let literal = [&b"true"[..], b"false", b"null"].into_iter().find(|l| rest.starts_with(l))?;
                self.at += literal.len();
                Some(())
            }
            _ => self.int().map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header_json;

    /// `scan` either gives up or reads what the general reader reads.
    fn agrees(header: &str) -> bool {
        let general = header_json::decode_general(header.as_bytes());
        match scan(header.as_bytes()) {
            Some(cmd) => {
                assert_eq!(Some(&cmd), general.as_ref().ok(), "scanner and general reader differ on {header}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn plain_runs_end_where_the_byte_by_byte_reading_ends() {
        let naive = |b: &[u8]| b.iter().position(|&c| STOPS[c as usize]).unwrap_or(b.len());
        let mut cases: Vec<Vec<u8>> = vec![b"".to_vec(), b"abc".to_vec(), "tópico-ünïcode\"x".into()];
        for stop in [b'"', b'\\', 0x00, 0x1f, 0x0a] {
            for at in 0..20 {
                let mut text: Vec<u8> = (0..24).map(|i| [b'a', 0x7f, 0x80, 0xff, b' ', 0x21, 0x5b][i % 7]).collect();
                text[at] = stop;
                cases.push(text.clone());
                text[at + 3] = b'"';
                cases.push(text);
            }
        }
        for case in cases {
            assert_eq!(plain_len(&case), naive(&case), "{case:?}");
        }
    }

    #[test]
    fn reads_the_headers_clients_send() {
        for header in [
            r#"{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":42,"serializeTypeCurrentRPC":"JSON","version":479}"#,
            r#"{"code":322,"flag":0,"language":"RUST","opaque":-7,"version":0,"remark":"r"}"#,
            r#" { "code" : 904 , "extFields" : { } , "opaque" : 2147483647 } "#,
            r#"{"code":105,"extFields":{"topic":"a","topic":"b"},"unknown":null,"other":true,"n":-12}"#,
            r#"{"language":"KLINGON","code":-2147483648}"#,
            "{}",
        ] {
            assert!(agrees(header), "should be read by the scanner: {header}");
        }
        let cmd = scan(br#"{"code":105,"extFields":{"topic":"T"},"opaque":9}"#).unwrap();
        assert_eq!((cmd.code, cmd.opaque, cmd.ext("topic")), (105, 9, Some("T")));
    }

    #[test]
    fn gives_up_on_anything_unexpected() {
        for header in [
            r#"{"code":1,"code":2}"#,
            r#"{"code":"1"}"#,
            r#"{"code":1.0}"#,
            r#"{"code":1e3}"#,
            r#"{"code":01}"#,
            r#"{"code":-0}"#,
            r#"{"code":2147483648}"#,
            r#"{"code":12345678901}"#,
            r#"{"remark":null}"#,
            r#"{"language":9}"#,
            r#"{"extFields":null}"#,
            r#"{"extFields":{"n":5}}"#,
            r#"{"extFields":{"t":"a\"b"}}"#,
            r#"{"x":[1]}"#,
            r#"{"x":{"y":1}}"#,
            r#"{"co\u0064e":1}"#,
            "{\"t\":\"a\tb\"}",
            r#"{"code":1} x"#,
            r#"{"code":1,}"#,
            r#"{"code":1"#,
            r#"["code"]"#,
            "",
        ] {
            assert!(!agrees(header), "should be left to the general reader: {header}");
        }
        assert!(scan(b"{\"t\":\"\xff\"}").is_none(), "not UTF-8");
    }

    #[test]
    fn agrees_with_the_general_reader_on_generated_headers() {
        let pieces = [
            "\"code\":105",
            "\"code\":-1",
            "\"opaque\":0",
            "\"flag\":3",
            "\"version\":479",
            "\"language\":\"GO\"",
            "\"remark\":\"x\"",
            "\"extFields\":{\"topic\":\"T\",\"k\":\"\"}",
            "\"extFields\":{}",
            "\"z\":\"JSON\"",
            "\"z\":false",
            "\"z\":7",
            "\"code\":1.5",
            "\"remark\":null",
            " ",
            "\"code\":007",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut read, mut left) = (0, 0);
        for _ in 0..20_000 {
            let mut header = String::from("{");
            for i in 0..next() % 5 {
                if i > 0 {
                    header.push(',');
                }
                header.push_str(pieces[(next() % pieces.len() as u64) as usize]);
            }
            header.push('}');
            if agrees(&header) {
                read += 1;
            } else {
                left += 1;
            }
        }
        assert!(read > 1000 && left > 1000, "both paths exercised: {read} read, {left} left");
    }
}
