//! Limits on what a peer can make the server store: names and KV entries (topic names are
//! bounded only by the frame, body and topic-count limits, as Java validates none on its paths). A
//! request over a limit is refused with SYSTEM_ERROR and a remark saying which limit.

use thiserror::Error;

/// Longest broker, cluster, address, zone, KV namespace or KV key.
pub const MAX_NAME_BYTES: usize = 255;

/// A value over one of the limits.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LimitError {
    /// A name longer than [`MAX_NAME_BYTES`].
    #[error("{field} too long: {len} bytes, max {max}")]
    NameTooLong { field: &'static str, len: usize, max: usize },
    /// A name with a control character.
    #[error("{field} contains a control character")]
    ControlCharacter { field: &'static str },
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

#[cfg(test)]
mod tests {
    use super::*;

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
