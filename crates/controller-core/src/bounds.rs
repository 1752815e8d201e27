//! What the replicated tables may hold, the same on every peer: names as long as the NameServer
//! port takes them, a bounded number of groups and of replicas per group, and a bound on the
//! bytes of every name, address and check code together. A decision refuses what would pass a
//! bound (CONTROLLER_INVALID_REQUEST, with the bound named), and applying refuses it too, so a
//! replayed or forged log can never grow the tables past them: whatever the tables hold, their
//! snapshot loads at the next start.

use thiserror::Error;

/// Longest cluster name, broker name or broker address, in bytes (as the NameServer port takes
/// broker and cluster names).
pub const MAX_NAME_BYTES: usize = 255;
/// Longest register check code (`address;millis`), in bytes.
pub const MAX_CHECK_CODE_BYTES: usize = MAX_NAME_BYTES + 32;
/// The most broker groups the tables hold.
pub const MAX_GROUPS: usize = 16_384;
/// The most replicas one group holds (a group has a master and a few slaves).
pub const MAX_REPLICAS: usize = 16;
/// The most bytes of names, addresses and check codes the tables hold, with a fixed overhead
/// counted per group and per replica: a quarter of the largest snapshot a peer loads at start.
pub const MAX_TABLE_BYTES: usize = 64 * 1024 * 1024;
/// What a group counts besides its names.
pub(crate) const GROUP_OVERHEAD: usize = 64;
/// What a replica counts besides its address and check code.
pub(crate) const REPLICA_OVERHEAD: usize = 32;

/// Why a change would pass a bound; nothing of it is applied.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OverBound {
    /// A name, address or check code too long.
    #[error("{field} too long: {len} bytes, max {max}")]
    TooLong {
        /// Which field.
        field: &'static str,
        /// Its length.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// A name, address or check code with a control character, or empty.
    #[error("{field} is empty or contains a control character")]
    NotPrintable {
        /// Which field.
        field: &'static str,
    },
    /// A new group past [`MAX_GROUPS`].
    #[error("controller full: {MAX_GROUPS} broker groups")]
    Groups,
    /// A new replica past [`MAX_REPLICAS`] in its group.
    #[error("broker group full: {MAX_REPLICAS} replicas")]
    Replicas,
    /// More bytes than [`MAX_TABLE_BYTES`].
    #[error("controller full: {MAX_TABLE_BYTES} bytes of names and addresses")]
    Bytes,
}

/// Checks a name, address or check code a peer asks the tables to keep.
pub fn check_text(field: &'static str, value: &str, max: usize) -> Result<(), OverBound> {
    if value.len() > max {
        return Err(OverBound::TooLong { field, len: value.len(), max });
    }
    if value.is_empty() || value.chars().any(char::is_control) {
        return Err(OverBound::NotPrintable { field });
    }
    Ok(())
}

/// What a replica with this address and check code counts.
pub(crate) fn replica_bytes(address: &str, check_code: &str) -> usize {
    address.len() + check_code.len() + REPLICA_OVERHEAD
}

/// What a group named `name` of `cluster` counts besides its replicas.
pub(crate) fn group_bytes(name: &str, cluster: &str) -> usize {
    name.len() + cluster.len() + GROUP_OVERHEAD
}
