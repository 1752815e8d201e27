//! A cursor over plain JSON, for the hand-written readers of the hot inputs (request headers,
//! register bodies). It reads the common subset fast and gives up (`None`) on everything else:
//! escapes, control characters in strings, fractions and exponents, integers out of range,
//! nesting past a small depth. Its readers then leave the input to serde, so they can only be
//! faster than the general reader, never read something else.

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

/// How deep [`Cursor::skip_value`] follows objects and arrays before giving up.
const MAX_SKIP_DEPTH: u32 = 16;

/// How many bytes of `bytes` are plain string content: the index of the first [`STOPS`] byte
/// (or the length). Eight bytes at a time: a word's bytes are tested all at once for `"`, `\\`
/// and control characters with the usual carry tricks (a flag can be wrong only above a right
/// one, so the lowest flag is the first stop).
#[inline(always)]
pub(crate) fn plain_len(bytes: &[u8]) -> usize {
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

/// The integer at the start of `bytes` in JSON's grammar (no fraction or exponent) of at most
/// `max_digits` digits, and how many bytes it takes.
#[inline(always)]
pub(crate) fn plain_integer(bytes: &[u8], max_digits: usize) -> Option<(i64, usize)> {
    let negative = bytes.first() == Some(&b'-');
    let start = usize::from(negative);
    let (mut end, mut magnitude) = (start, 0i64);
    while let Some(&digit @ b'0'..=b'9') = bytes.get(end) {
        if end - start == max_digits {
            return None;
        }
        magnitude = magnitude * 10 + i64::from(digit - b'0');
        end += 1;
    }
    let digits = end - start;
    if digits == 0 || (digits > 1 && bytes[start] == b'0') || matches!(bytes.get(end), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    if negative && magnitude == 0 {
        return None; // JSON readers take `-0` for a float
    }
    Some((if negative { -magnitude } else { magnitude }, end))
}

/// A position in a JSON text known to be UTF-8.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

// The small steps are inlined into their callers: called a dozen times per header, their call
// overhead was most of a header's cost.
impl<'a> Cursor<'a> {
    /// A cursor at the start of `input`; `None` when it is not UTF-8 (one check for the whole
    /// input, after which every string is a slice of it, cut at quotes).
    pub(crate) fn new(input: &'a [u8]) -> Option<Self> {
        let text = std::str::from_utf8(input).ok()?;
        Some(Cursor { text, bytes: input, at: 0 })
    }

    /// How many bytes are left.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// True when only whitespace is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_space();
        self.at == self.bytes.len()
    }

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
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes.get(self.at).copied()
    }

    /// The next byte after whitespace, consumed.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    /// Consumes `expected`, the next byte after whitespace.
    #[inline(always)]
    pub(crate) fn eat(&mut self, expected: u8) -> Option<()> {
        (self.next()? == expected).then_some(())
    }

    /// Consumes `byte` when it comes next; whether it did.
    #[inline(always)]
    pub(crate) fn eat_if(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    /// Consumes `null` when it comes next; whether it did.
    #[inline(always)]
    pub(crate) fn null(&mut self) -> bool {
        let found = self.peek() == Some(b'n') && self.bytes[self.at..].starts_with(b"null");
        self.at += if found { 4 } else { 0 };
        found
    }

    /// Opens an object: true when it is empty (its `}` consumed too).
    #[inline(always)]
    pub(crate) fn open_object(&mut self) -> Option<bool> {
        self.eat(b'{')?;
        Some(self.eat_if(b'}'))
    }

    /// After a member or element: true for `,` (another follows), false for `close`.
    #[inline(always)]
    pub(crate) fn more(&mut self, close: u8) -> Option<bool> {
        match self.next()? {
            b',' => Some(true),
            b if b == close => Some(false),
            _ => None,
        }
    }

    /// A string without escapes or control characters, borrowed.
    #[inline(always)]
    pub(crate) fn string(&mut self) -> Option<&'a str> {
        let span = self.string_span()?;
        self.text.get(span)
    }

    /// The same string as bytes (for comparing keys).
    #[inline(always)]
    pub(crate) fn raw_string(&mut self) -> Option<&'a [u8]> {
        let span = self.string_span()?;
        self.bytes.get(span)
    }

    /// An object key: its plain string and the `:` after it.
    #[inline(always)]
    pub(crate) fn key(&mut self) -> Option<&'a [u8]> {
        let key = self.raw_string()?;
        self.eat(b':')?;
        Some(key)
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
    pub(crate) fn int(&mut self) -> Option<i32> {
        i32::try_from(self.integer(10)?).ok()
    }

    /// An integer in JSON's grammar (no fraction or exponent) of at most 18 digits.
    #[inline(always)]
    pub(crate) fn long(&mut self) -> Option<i64> {
        self.integer(18)
    }

    #[inline(always)]
    fn integer(&mut self, max_digits: usize) -> Option<i64> {
        self.skip_space();
        let (value, len) = plain_integer(self.bytes.get(self.at..)?, max_digits)?;
        self.at += len;
        Some(value)
    }

    /// Skips a plain string, integer or literal.
    pub(crate) fn skip_scalar(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string_span().map(drop),
            b't' | b'f' | b'n' => {
                let rest = &self.bytes[self.at..];
                let literal = [&b"true"[..], b"false", b"null"].into_iter().find(|l| rest.starts_with(l))?;
                self.at += literal.len();
                Some(())
            }
            _ => self.long().map(drop),
        }
    }

    /// Skips any value made of plain scalars, objects and arrays, nested at most
    /// [`MAX_SKIP_DEPTH`] deep.
    pub(crate) fn skip_value(&mut self) -> Option<()> {
        self.skip_nested(MAX_SKIP_DEPTH)
    }

    fn skip_nested(&mut self, depth: u32) -> Option<()> {
        let close = match self.peek()? {
            b'{' => b'}',
            b'[' => b']',
            _ => return self.skip_scalar(),
        };
        let depth = depth.checked_sub(1)?;
        self.at += 1;
        if self.eat_if(close) {
            return Some(());
        }
        loop {
            if close == b'}' {
                self.key()?;
            }
            self.skip_nested(depth)?;
            if !self.more(close)? {
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Whether `skip_value` skips all of `json`.
    fn skips(json: &str) -> bool {
        let mut cursor = Cursor::new(json.as_bytes()).unwrap();
        cursor.skip_value().is_some() && cursor.at_end()
    }

    #[test]
    fn skips_plain_values_and_gives_up_on_the_rest() {
        for json in [r#"{}"#, r#"[]"#, r#" { "a" : [ 1 , "x" , null , { } ] , "b" : { "c" : true } } "#, "-12", "false"]
        {
            assert!(skips(json), "{json}");
            assert!(serde_json::from_str::<serde::de::IgnoredAny>(json).is_ok(), "valid JSON: {json}");
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(skips(&deep(MAX_SKIP_DEPTH as usize)));
        for json in
            [r#"{"a":1,}"#, r#"[1 2]"#, r#"{"a"}"#, r#"{1:2}"#, r#""a\"b""#, "1.5", "1e3", "nul", "[", &deep(17)]
        {
            assert!(!skips(json), "{json}");
        }
    }
}
