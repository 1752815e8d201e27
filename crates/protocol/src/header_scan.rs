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
    let mut cursor = Cursor { bytes: header, at: 0 };
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
            // Keys are compared as bytes: a known one is plain ASCII, only others are checked.
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
                _ => std::str::from_utf8(key).ok().and_then(|_| cursor.skip_scalar()).map(|()| 0)?,
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

/// Stores a known field's value; its bit in the set of fields seen (`1 << index`).
fn field<T>(slot: &mut T, value: T, index: u8) -> u8 {
    *slot = value;
    1 << index
}

/// A position in a header.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes.get(self.at).copied()
    }

    /// The next byte after whitespace, consumed.
    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn eat(&mut self, expected: u8) -> Option<()> {
        (self.next()? == expected).then_some(())
    }

    /// A string without escapes or control characters, borrowed.
    fn string(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.raw_string()?).ok()
    }

    /// The bytes of a string without escapes or control characters, not checked for UTF-8.
    fn raw_string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let rest = &self.bytes[self.at..];
        let len = rest.iter().position(|&b| STOPS[b as usize])?;
        if rest[len] != b'"' {
            return None;
        }
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// An integer in JSON's grammar (no fraction or exponent) that fits an `i32`.
    fn int(&mut self) -> Option<i32> {
        self.skip_space();
        let negative = self.bytes.get(self.at) == Some(&b'-');
        self.at += usize::from(negative);
        let digits = self.bytes[self.at..].iter().take_while(|b| b.is_ascii_digit()).count();
        let text = &self.bytes[self.at..self.at + digits];
        if digits == 0 || digits > 10 || (digits > 1 && text[0] == b'0') {
            return None;
        }
        self.at += digits;
        if let Some(b'.' | b'e' | b'E') = self.bytes.get(self.at) {
            return None;
        }
        let magnitude = text.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
        if negative && magnitude == 0 {
            return None; // JSON readers take `-0` for a float
        }
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
            b'"' => self.string().map(drop),
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
