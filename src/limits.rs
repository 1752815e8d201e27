//! Limits on what a peer can make the server store: names, topic names and KV entries. A
//! request over a limit is refused with SYSTEM_ERROR and a remark saying which limit.

use thiserror::Error;

/// Longest broker, cluster, address, zone, KV namespace or KV key.
pub const MAX_NAME_BYTES: usize = 255;

/// Longest topic name (Java's `TopicValidator.TOPIC_MAX_LENGTH`).
pub const MAX_TOPIC_CHARS: usize = 127;

/// Longest retry or dead-letter topic name (`%RETRY%` / `%DLQ%` plus a group of up to 255).
pub const MAX_SYSTEM_TOPIC_CHARS: usize = 255;

/// A value over one of the limits.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LimitError {
    /// A name longer than [`MAX_NAME_BYTES`].
    #[error("{field} too long: {len} bytes, max {max}")]
    NameTooLong { field: &'static str, len: usize, max: usize },
    /// A name with a control character.
    #[error("{field} contains a control character")]
    ControlCharacter { field: &'static str },
    /// A topic name Java's `TopicValidator` refuses.
    #[error("invalid topic name {name:?}: at most {MAX_TOPIC_CHARS} characters of [%|a-zA-Z0-9_-]")]
    InvalidTopic { name: String },
    /// A KV value over `kv_max_value_bytes`.
    #[error("kv value too large: {len} bytes, max {max}")]
    ValueTooLarge { len: usize, max: usize },
}

/// Checks a name a peer asks the server to keep.
pub fn check_name(field: &'static str, value: &str) -> Result<(), LimitError> {
    if value.len() > MAX_NAME_BYTES {
        return Err(LimitError::NameTooLong { field, len: value.len(), max: MAX_NAME_BYTES });
    }
    if value.chars().any(char::is_control) {
        return Err(LimitError::ControlCharacter { field });
    }
    Ok(())
}

/// Whether Java's `TopicValidator` accepts `name`: `^[%|a-zA-Z0-9_-]+$`, at most 127
/// characters, or 255 for retry and dead-letter topics.
pub fn valid_topic(name: &str) -> bool {
    let max =
        if name.starts_with("%RETRY%") || name.starts_with("%DLQ%") { MAX_SYSTEM_TOPIC_CHARS } else { MAX_TOPIC_CHARS };
    !name.is_empty()
        && name.len() <= max
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'%' | b'|' | b'_' | b'-'))
}

/// Checks a topic a peer asks the server to keep.
pub fn check_topic(name: &str) -> Result<(), LimitError> {
    if valid_topic(name) {
        Ok(())
    } else {
        Err(LimitError::InvalidTopic { name: name.chars().take(64).collect() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_follow_javas_validator() {
        for ok in ["TopicTest", "%RETRY%group-1", "a|b", "rmq_sys_SYNC_BROKER_MEMBER_b", &"t".repeat(127)] {
            assert!(valid_topic(ok), "{ok}");
        }
        for bad in ["", "a.b", "a b", "tópico", &"t".repeat(128), "x\n"] {
            assert!(!valid_topic(bad), "{bad:?}");
        }
        assert!(valid_topic(&format!("%DLQ%{}", "g".repeat(250))));
    }

    #[test]
    fn names_are_bounded_and_printable() {
        assert!(check_name("brokerName", &"b".repeat(255)).is_ok());
        assert_eq!(
            check_name("brokerName", &"b".repeat(256)),
            Err(LimitError::NameTooLong { field: "brokerName", len: 256, max: 255 })
        );
        assert_eq!(check_name("key", "a\u{0}b"), Err(LimitError::ControlCharacter { field: "key" }));
        assert_eq!(
            check_name("clusterName", &"c".repeat(1 << 20)).unwrap_err().to_string(),
            "clusterName too long: 1048576 bytes, max 255"
        );
    }
}
