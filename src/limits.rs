//! Limits on what a peer can make the server store: names (a broker registration's are
//! [`BrokerNames`]) and KV entries (topic names are bounded only by the frame, body and
//! topic-count limits, as Java validates none on its paths). A request over a limit is refused
//! with SYSTEM_ERROR and a remark saying which limit. And how much of what a peer named the
//! server repeats back in remarks and logs ([`shown`]).

use thiserror::Error;

use crate::protocol::header::RegisterBrokerHeader;

/// Longest broker, cluster, address, zone, KV namespace or KV key.
pub const MAX_NAME_BYTES: usize = 255;

/// At most this many characters of a peer-supplied name are repeated back.
const SHOWN_CHARS: usize = 64;

/// A peer-supplied name (an access key, a broker name, a field) as remarks and logs show it:
/// control characters escaped, cut short.
pub fn shown(text: &str) -> String {
    let mut out: String = text.chars().take(SHOWN_CHARS).flat_map(char::escape_debug).collect();
    if text.chars().nth(SHOWN_CHARS).is_some() {
        out.push_str("...");
    }
    out
}

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

/// The names a registration asks the server to keep: checked on the wire before its body is
/// decoded, and again on a registration read back from a snapshot, the same way.
#[derive(Debug, Clone, Copy)]
pub struct BrokerNames<'a> {
    /// `brokerName`.
    pub broker_name: &'a str,
    /// `clusterName`.
    pub cluster: &'a str,
    /// `brokerAddr`.
    pub addr: &'a str,
    /// `haServerAddr`.
    pub ha_server_addr: &'a str,
    /// `__ZONE_NAME`, when sent.
    pub zone_name: Option<&'a str>,
}

impl BrokerNames<'_> {
    /// Checks each name ([`check_name`]) under its request field's name, in the order above.
    pub fn check(&self) -> Result<(), LimitError> {
        let names = [
            ("brokerName", self.broker_name),
            ("clusterName", self.cluster),
            ("brokerAddr", self.addr),
            ("haServerAddr", self.ha_server_addr),
        ];
        for (field, value) in names.into_iter().chain(self.zone_name.map(|zone| ("__ZONE_NAME", zone))) {
            check_name(field, value)?;
        }
        Ok(())
    }
}

impl<'a> From<&'a RegisterBrokerHeader> for BrokerNames<'a> {
    fn from(h: &'a RegisterBrokerHeader) -> Self {
        BrokerNames {
            broker_name: &h.broker_name,
            cluster: &h.cluster_name,
            addr: &h.broker_addr,
            ha_server_addr: &h.ha_server_addr,
            zone_name: h.zone_name.as_deref(),
        }
    }
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

    #[test]
    fn peer_supplied_names_are_escaped_and_cut_short_in_remarks() {
        assert_eq!(shown("bad\nkey"), "bad\\nkey");
        let long = "k".repeat(1000);
        assert_eq!(shown(&long), format!("{}...", "k".repeat(64)));
        assert_eq!(shown("broker-ä"), "broker-ä");
    }
}
