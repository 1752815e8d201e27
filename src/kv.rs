//! The KV config store (spec §6): namespace → key → value, owned by the `KvStore` actor on its
//! own thread, so disk writes never stall the registry. Every change is on disk, in Java's
//! `kvConfig.json` format, before it is acknowledged; a failed write leaves memory unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use actix::prelude::*;
use serde::{Deserialize, Serialize};
use thiserror::Error;
use tracing::info;

use crate::mailbox::{Apply, ConnId, Mailbox};
use crate::persist::write_atomically;
use crate::registry::messages::SetOrderTopicConfig;
use crate::registry::RegistryHandle;
use crate::{logged_handler, request};

/// The namespace the NameServer itself reads: topic → `"brokerName:queueNum;..."`.
pub const ORDER_TOPIC_CONFIG: &str = "ORDER_TOPIC_CONFIG";

/// namespace → key → value, sorted so the file and the answers are deterministic.
pub type KvTable = BTreeMap<String, BTreeMap<String, String>>;

/// The file cannot be read or written.
#[derive(Debug, Error)]
pub enum KvError {
    /// The file exists but cannot be read.
    #[error("cannot read kv config {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    /// The file is not Java's `{"configTable":{...}}`.
    #[error("corrupt kv config {path}: {error}")]
    Corrupt { path: PathBuf, error: serde_json::Error },
    /// The new content could not be made durable.
    #[error("cannot write kv config {path}: {error}")]
    Write { path: PathBuf, error: std::io::Error },
}

/// Java's `KVConfigSerializeWrapper`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KvFile {
    #[serde(default)]
    config_table: KvTable,
}

/// Reads the KV file; a missing file is an empty store, an unreadable or corrupt one an error.
pub fn load(path: &Path) -> Result<KvTable, KvError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(KvTable::new()),
        Err(error) => return Err(KvError::Read { path: path.into(), error }),
    };
    let file: KvFile = serde_json::from_slice(&bytes).map_err(|error| KvError::Corrupt { path: path.into(), error })?;
    Ok(file.config_table)
}

/// The KV store actor.
pub struct KvStore {
    table: KvTable,
    path: PathBuf,
    registry: RegistryHandle,
    queued: Arc<AtomicUsize>,
}

/// The store's address, counting queued messages.
pub type KvHandle = Mailbox<KvStore>;

impl KvStore {
    /// Starts the store on `arbiter` (a thread of its own, so disk writes never stall the
    /// registry) and hands the registry the ORDER_TOPIC_CONFIG namespace.
    pub fn start(path: PathBuf, table: KvTable, registry: RegistryHandle, arbiter: &ArbiterHandle) -> KvHandle {
        let queued = Arc::new(AtomicUsize::new(0));
        let store = KvStore { table, path, registry, queued: queued.clone() };
        store.publish_order_topics();
        Mailbox::new(KvStore::start_in_arbiter(arbiter, |_| store), queued)
    }

    fn publish_order_topics(&self) {
        let table = self.table.get(ORDER_TOPIC_CONFIG).cloned();
        self.registry.tell(SetOrderTopicConfig { conn: ConnId(0), table });
    }

    /// Applies `change`, persists, and rolls back if the write fails.
    fn change(&mut self, namespace: &str, change: impl FnOnce(&mut KvTable)) -> Result<(), KvError> {
        let before = self.table.clone();
        change(&mut self.table);
        let body = serde_json::to_vec(&KvFile { config_table: self.table.clone() }).unwrap_or_default();
        if let Err(error) = write_atomically(&self.path, &body) {
            self.table = before;
            return Err(KvError::Write { path: self.path.clone(), error });
        }
        if namespace == ORDER_TOPIC_CONFIG {
            self.publish_order_topics();
        }
        Ok(())
    }
}

impl Actor for KvStore {
    type Context = Context<Self>;
}

logged_handler!(KvStore, "kv");

/// PUT_KV_CONFIG; answers once the change is on disk.
#[derive(Debug)]
pub struct PutKv {
    pub conn: ConnId,
    pub namespace: String,
    pub key: String,
    pub value: String,
}
request!(PutKv, Result<(), String>);

impl Apply<KvStore> for PutKv {
    fn apply(self, store: &mut KvStore) -> Result<(), String> {
        info!(namespace = %self.namespace, key = %self.key, "kv config put");
        let PutKv { namespace, key, value, .. } = self;
        store
            .change(&namespace.clone(), |t| {
                t.entry(namespace).or_default().insert(key, value);
            })
            .map_err(|e| e.to_string())
    }
}

/// GET_KV_CONFIG; answers the value, if any.
#[derive(Debug)]
pub struct GetKv {
    pub conn: ConnId,
    pub namespace: String,
    pub key: String,
}
request!(GetKv, Option<String>);

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
request!(DeleteKv, Result<(), String>);

impl Apply<KvStore> for DeleteKv {
    fn apply(self, store: &mut KvStore) -> Result<(), String> {
        info!(namespace = %self.namespace, key = %self.key, "kv config delete");
        store
            .change(&self.namespace, |t| {
                if let Some(ns) = t.get_mut(&self.namespace) {
                    ns.remove(&self.key);
                }
            })
            .map_err(|e| e.to_string())
    }
}

/// GET_KVLIST_BY_NAMESPACE; answers the namespace, if it exists.
#[derive(Debug)]
pub struct GetKvList {
    pub conn: ConnId,
    pub namespace: String,
}
request!(GetKvList, Option<BTreeMap<String, String>>);

impl Apply<KvStore> for GetKvList {
    fn apply(self, store: &mut KvStore) -> Self::Output {
        store.table.get(&self.namespace).cloned()
    }
}

/// Waits until every earlier message is handled (all writes are already durable).
#[derive(Debug)]
pub struct Flush {
    pub conn: ConnId,
}
request!(Flush, ());

impl Apply<KvStore> for Flush {
    fn apply(self, _: &mut KvStore) {}
}

/// The KVTable body (`{"table":{...}}`), as GET_KVLIST_BY_NAMESPACE and REGISTER_BROKER send it.
pub fn encode_kv_table(table: &BTreeMap<String, String>) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "table": table })).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_kv_file_round_trips() {
        let text = r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"broker-name":"default-broker","topic-name":"default-topic","cid":"default-consumer-name"}}}"#;
        let dir = std::env::temp_dir().join(format!("namesrv-kv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kvConfig.json");
        std::fs::write(&path, text).unwrap();
        let table = load(&path).unwrap();
        assert_eq!(table[ORDER_TOPIC_CONFIG]["cid"], "default-consumer-name");
        let written = serde_json::to_string(&KvFile { config_table: table.clone() }).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&written).unwrap(),
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
        assert!(load(&dir.join("missing.json")).unwrap().is_empty());
        std::fs::write(&path, "{\"configTable\":{").unwrap();
        assert!(matches!(load(&path), Err(KvError::Corrupt { .. })));
    }

    #[test]
    fn kv_table_body_is_javas_shape() {
        let table: BTreeMap<String, String> = [("TopicOrder".to_owned(), "broker-a:4;broker-b:4".to_owned())].into();
        assert_eq!(encode_kv_table(&table), br#"{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}"#);
    }
}
