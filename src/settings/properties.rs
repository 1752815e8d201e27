//! Java `.properties` text: the format of Java NameServer config files, of the
//! UPDATE_NAMESRV_CONFIG body and of GET_NAMESRV_CONFIG's answer.

use std::borrow::Cow;

use thiserror::Error;

/// Text that `java.util.Properties.load` would reject.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PropertiesError {
    /// A `\u` escape without four hex digits.
    #[error("malformed \\uXXXX escape in line {line}")]
    BadUnicodeEscape { line: usize },
}

/// The text of a properties file's bytes: a UTF-8 byte-order mark is dropped; bytes that are not
/// UTF-8 are read as ISO-8859-1, one character per byte, as `Properties.load(InputStream)` reads
/// every file (a Java NameServer's file saved by a Latin-1 editor loads as it does there).
pub fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// A value as Java's `MixAll.properties2Object` applies it: `String.trim()`, which drops every
/// character up to U+0020 at both ends (so `listenPort=9876 ` is 9876 and `enableTopicList=false `
/// is false).
pub fn java_trim(value: &str) -> &str {
    value.trim_matches(|c: char| c <= ' ')
}

/// The text of a saved `mqnamesrv -p` output as the properties it prints, or `text` as it is.
///
/// Java's `NamesrvStartup` prints `load config properties file OK, <file>` (stdout, no prefix)
/// when given `-c`, then each setting through its console logger, whose pattern
/// (`rmq.namesrv.logback.xml`: `%d{yyy-MM-dd HH:mm:ss,GMT+8} %p %t - %m%n`) puts
/// `2025-01-02 10:00:00 INFO main - ` before `listenPort=9876`. When every other non-blank line
/// carries that prefix, the prefixes and the `load config` line go; otherwise nothing is changed.
pub fn strip_java_console(text: &str) -> Cow<'_, str> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    if lines.peek().is_some_and(|l| l.starts_with(LOAD_CONFIG_LINE)) {
        lines.next();
    }
    let stripped: Option<Vec<&str>> = lines.map(console_message).collect();
    match stripped {
        Some(lines) if !lines.is_empty() => Cow::Owned(lines.iter().map(|l| format!("{l}\n")).collect()),
        _ => Cow::Borrowed(text),
    }
}

/// What Java's `NamesrvStartup` prints before `-p`'s lines when given `-c`.
const LOAD_CONFIG_LINE: &str = "load config properties file OK, ";

/// The message of a console log line, `<date> <time> <LEVEL> <thread> - <message>`.
fn console_message(line: &str) -> Option<&str> {
    let mut parts = line.splitn(5, ' ');
    let (date, time, level, thread) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let message = parts.next()?.strip_prefix("- ")?;
    let digits =
        |s: &str, n: std::ops::RangeInclusive<usize>| n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
    let date_ok = matches!(date.split('-').collect::<Vec<_>>()[..], [y, m, d] if digits(y, 3..=4) && digits(m, 2..=2) && digits(d, 2..=2));
    let (clock, millis) = time.split_once(',').unwrap_or((time, "0"));
    let time_ok = matches!(clock.split(':').collect::<Vec<_>>()[..], [h, m, s] if [h, m, s].iter().all(|p| digits(p, 2..=2)))
        && digits(millis, 1..=9);
    let level_ok = !level.is_empty() && level.bytes().all(|b| b.is_ascii_uppercase());
    (date_ok && time_ok && level_ok && !thread.is_empty()).then_some(message)
}

/// Parses properties text into (key, value) pairs in file order.
///
/// Follows `Properties.load`: `#`/`!` comments, `=`, `:` or whitespace as separator, trailing
/// backslash continues a line, and `\t \n \r \f \uXXXX` escapes (any other `\x` is `x`).
pub fn parse(text: &str) -> Result<Vec<(String, String)>, PropertiesError> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((number, first)) = lines.next() {
        let mut logical = first.trim_start_matches(WHITESPACE).to_owned();
        if logical.is_empty() || logical.starts_with('#') || logical.starts_with('!') {
            continue;
        }
        while ends_with_odd_backslashes(&logical) {
            logical.pop();
            match lines.next() {
                Some((_, next)) => logical.push_str(next.trim_start_matches(WHITESPACE)),
                None => break,
            }
        }
        let (key, value) = split_key_value(&logical);
        out.push((unescape(key, number + 1)?, unescape(value, number + 1)?));
    }
    Ok(out)
}

/// What `Properties.LineReader` skips at the start of a line: space, tab and form feed only,
/// not every Unicode space (`str::trim_start` would drop a key's leading U+00A0, Java keeps it).
const WHITESPACE: [char; 3] = [' ', '\t', '\u{c}'];

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1
}

/// Splits at the first unescaped `=`, `:` or whitespace; the separator and spaces around go.
fn split_key_value(line: &str) -> (&str, &str) {
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' | ' ' | '\t' | '\u{c}' => {
                let rest = line[i..].trim_start_matches(WHITESPACE);
                let rest = rest
                    .strip_prefix(['=', ':'])
                    .filter(|_| c.is_whitespace())
                    .unwrap_or(if c.is_whitespace() { rest } else { &line[i + 1..] });
                return (&line[..i], rest.trim_start_matches(WHITESPACE));
            }
            _ => {}
        }
    }
    (line, "")
}

fn unescape(s: &str, line: usize) -> Result<String, PropertiesError> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 4);
                let ch = code.and_then(char::from_u32).ok_or(PropertiesError::BadUnicodeEscape { line })?;
                out.push(ch);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

/// Writes `key=value` lines sorted by key, escaping what `Properties.load` would misread.
pub fn write(pairs: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = pairs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let escape = |s: &str, key: bool| {
        let mut out = String::with_capacity(s.len());
        for (i, c) in s.chars().enumerate() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                // As `Properties.saveConvert`: a raw form feed would end a key or vanish before a value.
                '\u{c}' => out.push_str("\\f"),
                '=' | ':' | '#' | '!' if key => {
                    out.push('\\');
                    out.push(c);
                }
                ' ' if key || i == 0 => out.push_str("\\ "),
                c => out.push(c),
            }
        }
        out
    };
    sorted.iter().map(|(k, v)| format!("{}={}\n", escape(k, true), escape(v, false))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_mqnamesrv_p_output_loses_its_log_prefixes() {
        let saved = "load config properties file OK, /opt/ns.conf\n\
                     2025-01-02 10:00:00 INFO main - listenPort=9876\n\
                     2025-01-02 10:00:00,123 INFO main - rocketmqHome=\n";
        assert_eq!(strip_java_console(saved), "listenPort=9876\nrocketmqHome=\n");
        let plain = "listenPort=9876\n2025-01-02 10:00:00 INFO main - rocketmqHome=\n";
        assert!(matches!(strip_java_console(plain), Cow::Borrowed(_)), "a mixed file is left as it is");
        assert!(matches!(strip_java_console("a=1\n"), Cow::Borrowed(_)));
    }

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text).unwrap()
    }

    #[test]
    fn reads_javas_separators_comments_and_continuations() {
        let text = "# comment\n! also\n  a=1\nb : 2\nc 3\nd=x\\\n   y\ne=\\u00e9\\tz\nf\n{key=value}\n";
        assert_eq!(
            pairs(text),
            vec![
                ("a".into(), "1".into()),
                ("b".into(), "2".into()),
                ("c".into(), "3".into()),
                ("d".into(), "xy".into()),
                ("e".into(), "é\tz".into()),
                ("f".into(), "".into()),
                ("{key".into(), "value}".into()),
            ]
        );
        assert!(parse("a=\\u12").is_err());
    }

    #[test]
    fn a_byte_order_mark_is_dropped_and_bytes_that_are_not_utf8_are_latin1() {
        assert_eq!(decode(b"\xef\xbb\xbflistenPort=9877\n"), "listenPort=9877\n");
        assert_eq!(pairs(&decode(b"\xef\xbb\xbflistenPort=9877\n")), vec![("listenPort".into(), "9877".into())]);
        assert_eq!(decode(b"rocketmqHome=/opt/caf\xe9\n"), "rocketmqHome=/opt/caf\u{e9}\n");
        assert_eq!(decode("home=/opt/caf\u{e9}".as_bytes()), "home=/opt/caf\u{e9}", "UTF-8 stays UTF-8");
    }

    #[test]
    fn values_are_trimmed_as_java_trims_them() {
        assert_eq!(java_trim("9876  \t"), "9876");
        assert_eq!(java_trim("\u{1} false \u{c}"), "false");
        assert_eq!(java_trim("a b"), "a b");
        assert_eq!(java_trim("x\u{a0}"), "x\u{a0}", "String.trim keeps characters above U+0020");
    }

    #[test]
    fn written_text_reads_back() {
        let original = vec![("b key".to_owned(), " v=1\n".to_owned()), ("a".to_owned(), "c:\\d".to_owned())];
        let text = write(&original);
        assert!(text.starts_with("a="));
        let mut back = pairs(&text);
        back.sort();
        let mut expected = original.clone();
        expected.sort();
        assert_eq!(back, expected);
    }

    #[test]
    fn form_feeds_and_leading_unicode_spaces_survive_write_and_parse() {
        // Found by the properties fuzz target: a form feed ended a written key, and a key's
        // leading U+00A0 was trimmed, where Java's LineReader skips only space, tab and form feed.
        let original = vec![("b\u{c}".to_owned(), "\u{c}v".to_owned()), ("\u{a0}k".to_owned(), "\u{2003}".to_owned())];
        let mut expected = original.clone();
        expected.sort();
        assert_eq!(pairs(&write(&original)), expected);
        assert_eq!(pairs("\u{a0}a=1"), vec![("\u{a0}a".to_owned(), "1".to_owned())]);
        assert_eq!(pairs(" \t\u{c}a=1"), vec![("a".to_owned(), "1".to_owned())]);
    }
}
