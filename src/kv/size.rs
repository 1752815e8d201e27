//! What the KV store counts against its limits. Each entry is counted at its cost in memory:
//! its key and value plus [`ENTRY_OVERHEAD_BYTES`], so `kv_max_store_bytes` bounds memory
//! however small the entries. ORDER_TOPIC_CONFIG, copied into every REGISTER_BROKER reply, is
//! also counted as that reply's table: keys and values plus their JSON quotes and separators.

use std::collections::BTreeMap;

use super::journal::Change;
use super::KvTable;
use crate::settings::Settings;

/// What one entry (or namespace) costs beyond its bytes: two heap strings and a B-tree slot,
/// measured at 150–166 bytes per entry for a million entries on x86-64 with glibc's allocator.
pub const ENTRY_OVERHEAD_BYTES: usize = 160;

/// JSON an entry adds in a reply's table beyond its key and value: `"k":"v",`.
const ENTRY_JSON_BYTES: usize = 6;

/// The bounds on the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvLimits {
    /// Most the whole store may count (`kv_max_store_bytes`).
    pub max_store_bytes: usize,
    /// Most the ORDER_TOPIC_CONFIG namespace may count (`kv_max_order_topic_config_bytes`).
    pub max_order_topic_bytes: usize,
}

impl From<&Settings> for KvLimits {
    fn from(s: &Settings) -> Self {
        KvLimits {
            max_store_bytes: s.limits.kv_max_store_bytes,
            max_order_topic_bytes: s.limits.kv_max_order_topic_config_bytes,
        }
    }
}

/// What an entry counts against `kv_max_store_bytes`.
pub fn entry_cost(key: &str, value: &str) -> usize {
    key.len() + value.len() + ENTRY_OVERHEAD_BYTES
}

/// What `table` counts against `kv_max_store_bytes`: every namespace name and entry at cost.
pub fn table_bytes(table: &KvTable) -> usize {
    table.iter().map(|(ns, keys)| entry_cost(ns, "") + keys.iter().map(|(k, v)| entry_cost(k, v)).sum::<usize>()).sum()
}

/// What a namespace's table counts in a reply (the ORDER_TOPIC_CONFIG bound).
pub fn reply_bytes(keys: &BTreeMap<String, String>) -> usize {
    keys.iter().map(|(k, v)| k.len() + v.len() + ENTRY_JSON_BYTES).sum()
}

/// The store's count after `change`, from `bytes` now.
pub fn store_bytes_after(table: &KvTable, bytes: usize, change: &Change) -> usize {
    let existing = |ns: &str, key: &str| table.get(ns).and_then(|keys| keys.get(key));
    match change {
        Change::Put(_, ns, key, value) => {
            let new_ns = if table.contains_key(ns) { 0 } else { entry_cost(ns, "") };
            let removed = existing(ns, key).map_or(0, |old| entry_cost(key, old));
            bytes + new_ns + entry_cost(key, value) - removed
        }
        Change::Delete(_, ns, key) => bytes - existing(ns, key).map_or(0, |old| entry_cost(key, old)),
    }
}

/// The reply table of namespace `ns` after `change` (a put into it), and before.
pub fn reply_bytes_after(table: &KvTable, ns: &str, key: &str, value: &str) -> (usize, usize) {
    let Some(keys) = table.get(ns) else { return (key.len() + value.len() + ENTRY_JSON_BYTES, 0) };
    let before = reply_bytes(keys);
    let removed = keys.get(key).map_or(0, |old| key.len() + old.len() + ENTRY_JSON_BYTES);
    (before + key.len() + value.len() + ENTRY_JSON_BYTES - removed, before)
}
