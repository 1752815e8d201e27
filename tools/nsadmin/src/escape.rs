//! The one escaping of text a peer chose before it reaches a terminal. Everything nsadmin
//! prints as text that came from a server (names, addresses, remarks, errors) passes through
//! [`printable`]; JSON output needs none of it, serde escapes it already.

use std::borrow::Cow;

/// `text` as it may reach a terminal: every control character (escape sequences, carriage
/// returns, newlines inside a name) written as `\u{..}`, so a name a peer chose can neither
/// drive the terminal nor fake a line. Text without one is returned as it is, unallocated.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_unicode());
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_in_peer_names_are_escaped_for_the_terminal() {
        assert!(matches!(printable("Odd T2.é"), Cow::Borrowed("Odd T2.é")), "spaces, dots and letters stay");
        assert_eq!(printable("evil\x1b[2Jname\nfake"), "evil\\u{1b}[2Jname\\u{a}fake");
        assert_eq!(printable("a\r\tb\u{7f}\u{9b}"), "a\\u{d}\\u{9}b\\u{7f}\\u{9b}");
        assert_eq!(printable(&printable("x\x1by")), "x\\u{1b}y", "escaping twice changes nothing more");
    }
}
