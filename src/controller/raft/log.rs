//! The Raft log and vote (openraft's `RaftLogStorage`): entries are kept in memory, readable at
//! once, and made durable by the `raft-io` thread, which tells openraft when they are synced.
//! The file holds appends, truncations and purges as records, replayed at start; a purge
//! rewrites the file with the entries left (a few after each snapshot). The vote is a file of
//! its own, replaced atomically before it is acknowledged.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io;
use std::ops::RangeBounds;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{
    Entry, EntryPayload, LogId, Membership, OptionalSend, RaftLogReader, StorageError, StorageIOError, Vote,
};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::io::{frame, IoHandle, LogFile};
use super::{Peer, RaftTypes};
use crate::persist::{exists, read_state_file};

/// Largest vote file read.
const MAX_VOTE_BYTES: u64 = 64 * 1024;

/// The controller's state files cannot be loaded; start-up stops.
#[derive(Debug, Error)]
pub enum StoreError {
    /// A file cannot be read or written.
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: io::Error },
    /// A file does not hold what the controller writes there.
    #[error("{path}: corrupt: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    /// The group on disk has other peers than `controller_peers` lists (membership is static).
    #[error(
        "{dir}: the controller group on disk has the peers [{stored}] but controller_peers lists [{configured}]: \
         peers cannot be added, removed or renamed; start with the peers the group was formed with"
    )]
    Membership { dir: PathBuf, stored: String, configured: String },
    /// This peer's signing key, its pins or the cluster secret cannot be read.
    #[error(transparent)]
    PeerAuth(#[from] super::auth::PeerAuthError),
}

impl StoreError {
    fn io(path: &Path, error: io::Error) -> Self {
        StoreError::Io { path: path.to_owned(), error }
    }

    fn corrupt(path: &Path, reason: impl ToString) -> Self {
        StoreError::Corrupt { path: path.to_owned(), reason: reason.to_string() }
    }
}

/// One change of the log, as written to the file.
#[derive(Debug, Serialize, Deserialize)]
enum Record {
    Append(Vec<Entry<RaftTypes>>),
    Truncate { since: u64 },
    Purge(LogId<u64>),
}

#[derive(Debug, Default)]
struct LogMem {
    log: BTreeMap<u64, Entry<RaftTypes>>,
    purged: Option<LogId<u64>>,
    vote: Option<Vote<u64>>,
}

impl LogMem {
    fn replay(&mut self, record: Record) {
        match record {
            Record::Append(entries) => self.log.extend(entries.into_iter().map(|e| (e.log_id.index, e))),
            Record::Truncate { since } => drop(self.log.split_off(&since)),
            Record::Purge(upto) => {
                self.purged = Some(upto);
                self.log = self.log.split_off(&(upto.index + 1));
            }
        }
    }
}

/// The log store: shared memory plus the I/O thread. Cheap to clone (openraft's reader is one).
#[derive(Debug, Clone)]
pub struct LogStore {
    mem: Arc<Mutex<LogMem>>,
    io: IoHandle,
    vote_path: PathBuf,
}

impl LogStore {
    /// Loads the log and vote from `dir` (made when missing) and starts the I/O thread.
    pub fn open(dir: &Path) -> Result<LogStore, StoreError> {
        let log_path = dir.join("raft-log");
        let (file, records) = LogFile::open(&log_path).map_err(|e| StoreError::io(&log_path, e))?;
        let mut mem = LogMem::default();
        for bytes in records {
            let record: Record = serde_json::from_slice(&bytes).map_err(|e| StoreError::corrupt(&log_path, e))?;
            mem.replay(record);
        }
        let vote_path = dir.join("raft-vote.json");
        if exists(&vote_path) {
            let bytes = read_state_file(&vote_path, MAX_VOTE_BYTES).map_err(|e| StoreError::io(&vote_path, e))?;
            mem.vote = Some(serde_json::from_slice(&bytes).map_err(|e| StoreError::corrupt(&vote_path, e))?);
        }
        let io = IoHandle::start(file).map_err(|e| StoreError::io(&log_path, e))?;
        Ok(LogStore { mem: Arc::new(Mutex::new(mem)), io, vote_path })
    }

    /// The I/O thread, shared with the state machine's snapshot writes.
    pub fn io(&self) -> IoHandle {
        self.io.clone()
    }

    /// The vote on record (for tests and the status view).
    pub fn vote(&self) -> Option<Vote<u64>> {
        self.mem().vote
    }

    /// How many entries are held.
    pub fn len(&self) -> usize {
        self.mem().log.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The voters of the newest membership entry held, by node id with their peers.
    pub fn last_membership(&self) -> Option<BTreeMap<u64, Peer>> {
        let mem = self.mem();
        mem.log.values().rev().find_map(|entry| match &entry.payload {
            EntryPayload::Membership(m) => Some(voters(m)),
            _ => None,
        })
    }

    fn mem(&self) -> MutexGuard<'_, LogMem> {
        // A panic while holding the lock leaves plain data behind: keep using it.
        self.mem.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The voters of `membership`, by node id with their peers.
pub fn voters(membership: &Membership<u64, Peer>) -> BTreeMap<u64, Peer> {
    let ids: std::collections::BTreeSet<u64> = membership.voter_ids().collect();
    membership.nodes().filter(|(id, _)| ids.contains(id)).map(|(id, peer)| (*id, peer.clone())).collect()
}

fn encode(record: &Record) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(record).map(|json| frame(&json))
}

fn write_error(e: impl std::error::Error + 'static) -> StorageError<u64> {
    StorageIOError::write_logs(&e).into()
}

impl RaftLogReader<RaftTypes> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry<RaftTypes>>, StorageError<u64>> {
        Ok(self.mem().log.range(range).map(|(_, e)| e.clone()).collect())
    }
}

impl RaftLogStorage<RaftTypes> for LogStore {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<RaftTypes>, StorageError<u64>> {
        let mem = self.mem();
        let last = mem.log.values().next_back().map(|e| e.log_id).or(mem.purged);
        Ok(LogState { last_purged_log_id: mem.purged, last_log_id: last })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<u64>) -> Result<(), StorageError<u64>> {
        let json = serde_json::to_vec(vote).map_err(|e| StorageIOError::write_vote(&e))?;
        self.io.replace(self.vote_path.clone(), json).await.map_err(|e| StorageIOError::write_vote(&e))?;
        self.mem().vote = Some(*vote);
        Ok(())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<u64>>, StorageError<u64>> {
        Ok(self.mem().vote)
    }

    async fn append<I>(&mut self, entries: I, callback: LogFlushed<RaftTypes>) -> Result<(), StorageError<u64>>
    where
        I: IntoIterator<Item = Entry<RaftTypes>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let batch: Vec<Entry<RaftTypes>> = entries.into_iter().collect();
        let record = Record::Append(batch);
        let bytes = encode(&record).map_err(write_error)?;
        let Record::Append(batch) = record else { return Ok(()) };
        self.mem().replay(Record::Append(batch));
        self.io.append(bytes, callback);
        Ok(())
    }

    async fn truncate(&mut self, log_id: LogId<u64>) -> Result<(), StorageError<u64>> {
        let record = Record::Truncate { since: log_id.index };
        let bytes = encode(&record).map_err(write_error)?;
        self.mem().replay(record);
        self.io.record(bytes).await.map_err(write_error)
    }

    async fn purge(&mut self, log_id: LogId<u64>) -> Result<(), StorageError<u64>> {
        let left: Vec<Entry<RaftTypes>> = {
            let mut mem = self.mem();
            mem.replay(Record::Purge(log_id));
            mem.log.values().cloned().collect()
        };
        let mut records = encode(&Record::Purge(log_id)).map_err(write_error)?;
        if !left.is_empty() {
            records.extend(encode(&Record::Append(left)).map_err(write_error)?);
        }
        self.io.rewrite(records).await.map_err(write_error)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fresh directory for one test.
    pub(crate) fn dir(name: &str) -> PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("namesrv-raft-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
