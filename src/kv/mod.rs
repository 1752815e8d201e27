//! The KV config store (Java's `KVConfigManager`): namespace → key → value, owned by the
//! `KvStore` actor on its own thread, so disk writes never stall the registry. Every change is
//! on disk (`journal`: Java's `kvConfig.json` plus an append-only journal) before it is
//! acknowledged; a failed write leaves memory unchanged. The store is bounded in bytes.

mod change;
pub mod journal;
mod replay;
mod segment;
pub mod size;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::prelude::*;
use thiserror::Error;
use tracing::error;

use crate::mailbox::{Apply, Mailbox};
use crate::metrics::Metrics;
use crate::origin::ConnId;
use crate::registry::messages::SetOrderTopicConfig;
use crate::registry::RegistryHandle;
use crate::{logged_handler, request};
use journal::{Change, DeleteTag, KvFiles, PutTag};
pub use size::KvLimits;

/// The namespace the NameServer itself reads: topic → `"brokerName:queueNum;..."`.
pub const ORDER_TOPIC_CONFIG: &str = "ORDER_TOPIC_CONFIG";

/// namespace → key → value, sorted so the file and the answers are deterministic.
pub type KvTable = BTreeMap<String, BTreeMap<String, String>>;

/// The KV file cannot be read, encoded or written, or a change does not fit.
#[derive(Debug, Error)]
pub enum KvError {
    /// The file exists but cannot be read.
    #[error("cannot read kv config {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    /// The file is not Java's `{"configTable":{...}}` (or the journal beside it is damaged);
    /// start-up stops rather than empty it.
    #[error("corrupt kv config {path}: {error}; {}", backup_hint(path))]
    Corrupt { path: PathBuf, error: serde_json::Error },
    /// The table could not be encoded; nothing was written.
    #[error("cannot encode kv config {path}: {error}")]
    Encode { path: PathBuf, error: serde_json::Error },
    /// The new content could not be made durable.
    #[error("cannot write kv config {path}: {error}")]
    Write { path: PathBuf, error: std::io::Error },
    /// The change would take the store past `kv_max_store_bytes` (each entry counted with
    /// its overhead in memory).
    #[error("kv store full: {size} bytes with this change, max {max} (kv_max_store_bytes; each entry counts {overhead} bytes more than its key and value)", overhead = size::ENTRY_OVERHEAD_BYTES)]
    StoreFull { size: usize, max: usize },
    /// The change would take ORDER_TOPIC_CONFIG, copied into every REGISTER_BROKER reply, past
    /// `kv_max_order_topic_config_bytes`.
    #[error("ORDER_TOPIC_CONFIG full: {size} bytes with this change, max {max} (kv_max_order_topic_config_bytes)")]
    OrderTopicsFull { size: usize, max: usize },
    /// A running server merged or rotated the files every time they were read.
    #[error(
        "kv files beside {path} kept changing while they were read (a running server merging its journal); try again"
    )]
    KeptChanging { path: PathBuf },
}

/// The most bytes read from one KV file for a store of at most `max_store_bytes`: every byte
/// escaped as `\u00XX` (six bytes) at worst, plus 1 MiB for the JSON around them. A state file
/// longer than this (or a FIFO, a device, a link) stops start-up with an error naming it.
pub fn max_file_bytes(max_store_bytes: usize) -> u64 {
    (max_store_bytes as u64).saturating_mul(6).saturating_add(1024 * 1024)
}

/// Reads the table as of the last acknowledged change without writing anything.
pub fn load(path: &Path, max_store_bytes: usize) -> Result<KvTable, KvError> {
    replay::read_table(path, max_file_bytes(max_store_bytes))
}

/// The whole store as of the last acknowledged change (the snapshot with its journal folded
/// in), encoded as Java's `kvConfig.json`, without writing anything: a backup that a copy of
/// `kvConfig.json` alone would not be once the store journals. Safe while a server runs on it (a
/// change being appended is left out).
pub fn export(path: &Path, max_store_bytes: usize) -> Result<Vec<u8>, KvError> {
    replay::encode_snapshot(&load(path, max_store_bytes)?, path)
}

/// Opens the KV files: the table as of the last acknowledged change.
pub fn open(path: &Path, max_store_bytes: usize) -> Result<(KvFiles, KvTable), KvError> {
    KvFiles::open(path, max_file_bytes(max_store_bytes))
}

/// Where to look when the KV file is corrupt: the previous version every write keeps beside it.
fn backup_hint(path: &Path) -> String {
    let mut bak = path.as_os_str().to_owned();
    bak.push(".bak");
    let bak = PathBuf::from(bak);
    if bak.exists() {
        format!("the previous version is in {} (copy it over the file to start with it)", bak.display())
    } else {
        format!("no previous version ({} does not exist)", bak.display())
    }
}

/// The KV store actor.
pub struct KvStore {
    /// namespace → key → value, as on disk.
    table: KvTable,
    /// What `table` counts against the store limit (see `size`).
    bytes: usize,
    /// The bounds on the store.
    limits: KvLimits,
    /// The snapshot and journal.
    files: KvFiles,
    /// Told whenever ORDER_TOPIC_CONFIG changes.
    registry: RegistryHandle,
    /// Counts changes that could not be made durable.
    metrics: Arc<Metrics>,
}

/// The store's address, counting queued messages.
pub type KvHandle = Mailbox<KvStore>;

impl KvStore {
    /// Starts the store on `arbiter` (a thread of its own, so disk writes never stall the
    /// registry) and hands the registry the ORDER_TOPIC_CONFIG namespace.
    pub fn start(
        (files, table): (KvFiles, KvTable),
        limits: KvLimits,
        registry: RegistryHandle,
        arbiter: &ArbiterHandle,
        metrics: Arc<Metrics>,
    ) -> KvHandle {
        let bytes = size::table_bytes(&table);
        let store = KvStore { table, bytes, limits, files, registry, metrics: metrics.clone() };
        store.publish_order_topics();
        Mailbox::new(KvStore::start_in_arbiter(arbiter, |_| store), "kv", metrics)
    }

    fn publish_order_topics(&self) {
        let table = self.table.get(ORDER_TOPIC_CONFIG).cloned();
        self.registry.tell(SetOrderTopicConfig { conn: ConnId::SERVER, table });
    }

    /// Refuses `change` when it would overfill the store or ORDER_TOPIC_CONFIG (a change that
    /// shrinks either is always taken, even over a limit lowered since); else the store's
    /// count after it.
    fn admit(&self, change: &Change) -> Result<usize, KvError> {
        let size = size::store_bytes_after(&self.table, self.bytes, change);
        let max = self.limits.max_store_bytes;
        if size > max && size > self.bytes {
            return Err(KvError::StoreFull { size, max });
        }
        if let Change::Put(_, ns, key, value) = change {
            if ns == ORDER_TOPIC_CONFIG {
                let (after, before) = size::reply_bytes_after(&self.table, ns, key, value);
                let max = self.limits.max_order_topic_bytes;
                if after > max && after > before {
                    return Err(KvError::OrderTopicsFull { size: after, max });
                }
            }
        }
        Ok(size)
    }

    /// Applies `change` and makes it durable, or leaves the table as it was; refused when it
    /// would overfill the store.
    fn change(&mut self, change: Change) -> Result<(), KvError> {
        let size = self.admit(&change)?;
        let undo = self.undo_of(&change);
        change.clone().apply(&mut self.table);
        if let Err(error) = self.files.persist(&change, &self.table, size) {
            undo.apply(&mut self.table);
            error!(%error, "kv change not made durable; refused");
            self.metrics.kv_write_failures.inc();
            return Err(error);
        }
        self.bytes = size;
        if matches!(&change, Change::Put(_, ns, ..) | Change::Delete(_, ns, _) if ns == ORDER_TOPIC_CONFIG) {
            self.publish_order_topics();
        }
        Ok(())
    }

    /// What puts the table back as it is now, once `change` is applied.
    fn undo_of(&self, change: &Change) -> Undo {
        let (Change::Put(_, ns, key, _) | Change::Delete(_, ns, key)) = change;
        Undo {
            previous: self.table.get(ns).and_then(|keys| keys.get(key)).cloned(),
            created_namespace: !self.table.contains_key(ns) && matches!(change, Change::Put(..)),
            namespace: ns.clone(),
            key: key.clone(),
        }
    }
}

/// The state of one key before a change, to put back if the change cannot be made durable.
struct Undo {
    namespace: String,
    key: String,
    previous: Option<String>,
    created_namespace: bool,
}

impl Undo {
    fn apply(self, table: &mut KvTable) {
        if self.created_namespace {
            table.remove(&self.namespace);
            return;
        }
        if let Some(keys) = table.get_mut(&self.namespace) {
            match self.previous {
                Some(value) => keys.insert(self.key, value),
                None => keys.remove(&self.key),
            };
        }
    }
}

impl Actor for KvStore {
    type Context = Context<Self>;
}

logged_handler!(KvStore);

/// PUT_KV_CONFIG; answers once the change is on disk.
#[derive(Debug)]
pub struct PutKv {
    pub conn: ConnId,
    pub namespace: String,
    pub key: String,
    pub value: String,
}
request!(PutKv, Result<(), KvError>);

impl Apply<KvStore> for PutKv {
    fn apply(self, store: &mut KvStore) -> Result<(), KvError> {
        store.change(Change::Put(PutTag::Put, self.namespace, self.key, self.value))
    }
}

/// GET_KV_CONFIG; answers the value, if any.
#[derive(Debug)]
pub struct GetKv {
    pub conn: ConnId,
    pub namespace: String,
    pub key: String,
}
request!(GetKv, Option<String>, query);

impl Apply<KvStore> for GetKv {
    fn apply(self, store: &mut KvStore) -> Option<String> {
        store.table.get(&self.namespace).and_then(|ns| ns.get(&self.key)).cloned()
    }
}

/// DELETE_KV_CONFIG; the namespace stays even when it empties. Answers once on disk.
#[derive(Debug)]
pub struct DeleteKv {
    pub conn: ConnId,
    pub namespace: String,
    pub key: String,
}
request!(DeleteKv, Result<(), KvError>);

impl Apply<KvStore> for DeleteKv {
    fn apply(self, store: &mut KvStore) -> Result<(), KvError> {
        store.change(Change::Delete(DeleteTag::Delete, self.namespace, self.key))
    }
}

/// GET_KVLIST_BY_NAMESPACE; answers the namespace, if it exists.
#[derive(Debug)]
pub struct GetKvList {
    pub conn: ConnId,
    pub namespace: String,
}
request!(GetKvList, Option<BTreeMap<String, String>>, query);

impl Apply<KvStore> for GetKvList {
    fn apply(self, store: &mut KvStore) -> Self::Output {
        store.table.get(&self.namespace).cloned()
    }
}

/// At shutdown: waits until every earlier message is handled (all are already durable) and
/// writes the whole table as the snapshot, so `kvConfig.json` is complete for Java too.
#[derive(Debug)]
pub struct Flush {
    pub conn: ConnId,
}
request!(Flush, Result<(), KvError>);

impl Apply<KvStore> for Flush {
    fn apply(self, store: &mut KvStore) -> Result<(), KvError> {
        store.files.write_snapshot(&store.table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_kv_file_loads_and_the_size_counts_names_values_and_entries() {
        let text = r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"broker-name":"default-broker","topic-name":"default-topic","cid":"default-consumer-name"}}}"#;
        let dir = std::env::temp_dir().join(format!("namesrv-kv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kvConfig.json");
        std::fs::write(&path, text).unwrap();
        let (_, table) = open(&path, 1 << 20).unwrap();
        assert_eq!(table[ORDER_TOPIC_CONFIG]["cid"], "default-consumer-name");
        assert_eq!(size::table_bytes(&table), 18 + 11 + 14 + 10 + 13 + 3 + 21 + 4 * size::ENTRY_OVERHEAD_BYTES);
        assert!(open(&dir.join("missing.json"), 1 << 20).unwrap().1.is_empty());
        std::fs::write(&path, "").unwrap();
        assert!(open(&path, 1 << 20).unwrap().1.is_empty(), "an empty file loads as empty, as in Java");
        std::fs::write(&path, "{\"configTable\":{").unwrap();
        let err = open(&path, 1 << 20).unwrap_err();
        assert!(matches!(err, KvError::Corrupt { .. }));
        assert!(err.to_string().contains("kvConfig.json.bak does not exist"), "{err}");
        std::fs::write(dir.join("kvConfig.json.bak"), text).unwrap();
        let err = open(&path, 1 << 20).unwrap_err().to_string();
        assert!(err.contains("the previous version is in") && err.contains("kvConfig.json.bak"), "{err}");
    }
}
