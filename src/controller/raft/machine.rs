//! The replicated state machine as openraft drives it (`RaftStateMachine`): applies committed
//! commands to the [`ReplicaTables`], shared with the controller actor (which reads them to
//! decide; the lock is never held across an await), and keeps the newest snapshot on disk
//! (`snapshot.json`, replaced atomically on the I/O thread), checked like wire input on load.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{
    Entry, EntryPayload, LogId, OptionalSend, RaftSnapshotBuilder, SnapshotMeta, StorageError, StorageIOError,
    StoredMembership,
};
use serde::{Deserialize, Serialize};

use super::io::IoHandle;
use super::log::StoreError;
use super::{Peer, RaftTypes};
use crate::persist::{exists, read_state_file};
use namesrv_controller_core::{Applied, ReplicaTables, COMMAND_FORMAT};

/// Largest snapshot file read back.
const MAX_SNAPSHOT_BYTES: u64 = 256 * 1024 * 1024;

/// What the state machine holds: the tables and how far they are applied.
#[derive(Debug, Default)]
pub struct Applier {
    /// The replicated tables.
    pub tables: ReplicaTables,
    /// The last entry applied.
    pub last_applied: Option<LogId<u64>>,
    /// The membership last applied.
    pub membership: StoredMembership<u64, Peer>,
    /// The newest snapshot: its meta and tables.
    snapshot: Option<(SnapshotMeta<u64, Peer>, ReplicaTables)>,
}

/// The snapshot file.
#[derive(Debug, Serialize, Deserialize)]
struct SnapshotFile {
    format: u8,
    meta: SnapshotMeta<u64, Peer>,
    tables: ReplicaTables,
}

/// The state machine: shared tables plus the I/O thread. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Machine {
    state: Arc<Mutex<Applier>>,
    io: IoHandle,
    path: PathBuf,
}

impl Machine {
    /// The machine for the state directory `dir`, from its snapshot when there is one.
    pub fn open(dir: &Path, io: IoHandle) -> Result<Machine, StoreError> {
        let path = dir.join("snapshot.json");
        let mut applier = Applier::default();
        if exists(&path) {
            let io_error = |error| StoreError::Io { path: path.clone(), error };
            let corrupt = |reason: String| StoreError::Corrupt { path: path.clone(), reason };
            let bytes = read_state_file(&path, MAX_SNAPSHOT_BYTES).map_err(io_error)?;
            let file: SnapshotFile = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
            if file.format != COMMAND_FORMAT {
                return Err(corrupt(format!("format {}, expected {COMMAND_FORMAT}", file.format)));
            }
            file.tables.check().map_err(|e| corrupt(e.to_string()))?;
            applier.tables = file.tables.clone();
            applier.last_applied = file.meta.last_log_id;
            applier.membership = file.meta.last_membership.clone();
            applier.snapshot = Some((file.meta, file.tables));
        }
        Ok(Machine { state: Arc::new(Mutex::new(applier)), io, path })
    }

    /// The voters of the membership the snapshot holds, if any.
    pub fn snapshot_membership(&self) -> Option<std::collections::BTreeMap<u64, Peer>> {
        let state = self.lock();
        state.membership.membership().voter_ids().next().map(|_| super::log::voters(state.membership.membership()))
    }

    /// The applied state, locked: read it and let go (never across an await).
    pub fn lock(&self) -> MutexGuard<'_, Applier> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    async fn persist(&self, meta: &SnapshotMeta<u64, Peer>, tables: &ReplicaTables) -> Result<(), StorageError<u64>> {
        let file = SnapshotFile { format: COMMAND_FORMAT, meta: meta.clone(), tables: tables.clone() };
        let fail = |e: &dyn std::error::Error| {
            StorageIOError::write_snapshot(Some(meta.signature()), &std::io::Error::other(e.to_string()))
        };
        let bytes = serde_json::to_vec(&file).map_err(|e| fail(&e))?;
        self.io.replace(self.path.clone(), bytes).await.map_err(|e| fail(&e).into())
    }
}

impl RaftSnapshotBuilder<RaftTypes> for Machine {
    async fn build_snapshot(&mut self) -> Result<Snapshot<RaftTypes>, StorageError<u64>> {
        let (meta, tables) = {
            let state = self.lock();
            let id = state.last_applied.map_or_else(|| "0-0".to_owned(), |l| format!("{}-{}", l.leader_id, l.index));
            let meta = SnapshotMeta {
                last_log_id: state.last_applied,
                last_membership: state.membership.clone(),
                snapshot_id: id,
            };
            (meta, state.tables.clone())
        };
        self.persist(&meta, &tables).await?;
        self.lock().snapshot = Some((meta.clone(), tables.clone()));
        Ok(Snapshot { meta, snapshot: Box::new(tables) })
    }
}

impl RaftStateMachine<RaftTypes> for Machine {
    type SnapshotBuilder = Self;

    async fn applied_state(&mut self) -> Result<(Option<LogId<u64>>, StoredMembership<u64, Peer>), StorageError<u64>> {
        let state = self.lock();
        Ok((state.last_applied, state.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Vec<Applied>>, StorageError<u64>>
    where
        I: IntoIterator<Item = Entry<RaftTypes>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut state = self.lock();
        let mut results = Vec::new();
        for entry in entries {
            state.last_applied = Some(entry.log_id);
            let result = match entry.payload {
                EntryPayload::Blank => Vec::new(),
                EntryPayload::Normal(cmd) if cmd.format != COMMAND_FORMAT => vec![Applied::Stale; cmd.events.len()],
                EntryPayload::Normal(cmd) => cmd.events.iter().map(|event| state.tables.apply(event)).collect(),
                EntryPayload::Membership(m) => {
                    state.membership = StoredMembership::new(Some(entry.log_id), m);
                    Vec::new()
                }
            };
            results.push(result);
        }
        Ok(results)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<ReplicaTables>, StorageError<u64>> {
        Ok(Box::default())
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<u64, Peer>,
        snapshot: Box<ReplicaTables>,
    ) -> Result<(), StorageError<u64>> {
        if let Err(broken) = snapshot.check() {
            let error = std::io::Error::new(std::io::ErrorKind::InvalidData, broken);
            return Err(StorageIOError::read_snapshot(Some(meta.signature()), &error).into());
        }
        self.persist(meta, &snapshot).await?;
        let mut state = self.lock();
        state.tables = (*snapshot).clone();
        state.last_applied = meta.last_log_id;
        state.membership = meta.last_membership.clone();
        state.snapshot = Some((meta.clone(), *snapshot));
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<RaftTypes>>, StorageError<u64>> {
        let state = self.lock();
        Ok(state
            .snapshot
            .as_ref()
            .map(|(meta, tables)| Snapshot { meta: meta.clone(), snapshot: Box::new(tables.clone()) }))
    }
}
