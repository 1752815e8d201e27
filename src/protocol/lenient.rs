//! Leniency for fastjson-written input: bare integer object keys (`{0:"a"}`, spec §3.4).

use std::borrow::Cow;

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
