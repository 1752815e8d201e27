//! One change to the KV table, as a journal line holds it.

use serde::{Deserialize, Serialize};

use super::KvTable;

/// One journaled change: `["put", ns, key, value]` or `["del", ns, key]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Change {
    /// A value set.
    Put(PutTag, String, String, String),
    /// A key removed.
    Delete(DeleteTag, String, String),
}

/// The `"put"` tag of a journal line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PutTag {
    #[serde(rename = "put")]
    Put,
}

/// The `"del"` tag of a journal line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeleteTag {
    #[serde(rename = "del")]
    Delete,
}

impl Change {
    /// Applies the change to `table`.
    pub fn apply(self, table: &mut KvTable) {
        match self {
            Change::Put(_, ns, key, value) => {
                table.entry(ns).or_default().insert(key, value);
            }
            Change::Delete(_, ns, key) => {
                if let Some(keys) = table.get_mut(&ns) {
                    keys.remove(&key);
                }
            }
        }
    }
}
