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
use super::json_cursor::Cursor;

/// The command in `header` when it is a plain header, `None` when the general reader must decide.
pub fn scan(header: &[u8]) -> Option<RemotingCommand> {
    let mut cursor = Cursor::new(header)?;
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
    if !cursor.open_object()? {
        loop {
            let bit = match cursor.key()? {
                b"code" => field(&mut cmd.code, cursor.int()?, 0),
                b"version" => field(&mut cmd.version, cursor.int()?, 1),
                b"opaque" => field(&mut cmd.opaque, cursor.int()?, 2),
                b"flag" => field(&mut cmd.flag, cursor.int()?, 3),
                b"language" => field(&mut cmd.language, LanguageCode::from_name(cursor.string()?), 4),
                b"remark" => field(&mut cmd.remark, Some(cursor.string()?.to_owned()), 5),
                b"extFields" => field(&mut cmd.ext_fields, ext_fields(&mut cursor)?, 6),
                _ => cursor.skip_scalar().map(|()| 0)?,
            };
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            if !cursor.more(b'}')? {
                break;
            }
        }
    }
    cursor.at_end().then_some(cmd)
}

/// Stores a known field's value; its bit in the set of fields seen (`1 << index`).
fn field<T>(slot: &mut T, value: T, index: u8) -> u8 {
    *slot = value;
    1 << index
}

/// `extFields`: an object of string values, later keys replacing earlier ones.
fn ext_fields(cursor: &mut Cursor) -> Option<Option<ExtFields>> {
    let mut fields = ExtFields::new();
    if !cursor.open_object()? {
        loop {
            let key = cursor.string()?;
            cursor.eat(b':')?;
            fields.insert(key, cursor.string()?);
            if !cursor.more(b'}')? {
                break;
            }
        }
    }
    Some(Some(fields))
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
