//! Durable storage of the KV table: Java's `kvConfig.json`, plus an append-only journal beside
//! it (`kvConfig.json.journal`) once the table is large.
//!
//! While the table is under 1 MiB every change rewrites `kvConfig.json` (atomically, the
//! previous version kept as `.bak`), as Java does. Past that a change costs one small synced
//! journal append, whatever the table's size; when the journal outgrows a quarter of the
//! table (at least 1 MiB) it is renamed `.journal.old` and a background thread merges it into a
//! new snapshot, then deletes it (a failed merge is tried again when the journal is due next).
//! A journal that reaches four times that while a merge still runs waits for the merge, so the
//! files stay within a small multiple of the table however fast changes come. Loading
//! (`replay`) reads the snapshot, then `.journal.old`, then `.journal`. Start-up and a clean
//! shutdown write the whole table as the snapshot, so the file is Java's complete
//! `kvConfig.json` whenever namesrv is not running.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::thread::{self, JoinHandle};

use tracing::{error, info, warn};

pub use super::change::{Change, DeleteTag, PutTag};
use super::replay::{encode_snapshot, merge, read_snapshot, replay};
use super::segment::JournalFile;
use super::{KvError, KvTable};
use crate::persist::{exists, sibling, write_atomically};

/// Journals smaller than this are never compacted while running; tables smaller than this
/// are rewritten whole on every change, as Java does.
const COMPACT_FLOOR_BYTES: u64 = 1024 * 1024;

/// The snapshot and journal files of one KV store.
#[derive(Debug)]
pub struct KvFiles {
    snapshot: PathBuf,
    journal: PathBuf,
    old_journal: PathBuf,
    file: Option<JournalFile>,
    journal_bytes: u64,
    /// The table's size as of the latest change: the journal is merged at a quarter of it.
    table_bytes: u64,
    /// No file is read past this.
    max_read: u64,
    /// The background merge, while one runs.
    merging: Option<JoinHandle<()>>,
}

impl KvFiles {
    /// Loads the table (snapshot, then the journals) and writes it back as one snapshot; when
    /// that write fails (a full disk) the journals stay and changes go on appending to them.
    /// A missing or empty snapshot is an empty table; an unreadable or corrupt file, or one
    /// longer than `max_read`, is an error.
    pub fn open(path: &Path, max_read: u64) -> Result<(KvFiles, KvTable), KvError> {
        let mut files = KvFiles {
            snapshot: path.to_owned(),
            journal: sibling(path, ".journal"),
            old_journal: sibling(path, ".journal.old"),
            file: None,
            journal_bytes: 0,
            table_bytes: 0,
            max_read,
            merging: None,
        };
        let (mut table, coerced) = read_snapshot(path, max_read)?;
        let replayed =
            replay(&files.old_journal, &mut table, max_read)? + replay(&files.journal, &mut table, max_read)?;
        files.table_bytes = fs::metadata(path).map_or(0, |m| m.len());
        // Values that were not JSON strings are written back as strings, as Java's next persist
        // would write them.
        if coerced > 0 || replayed > 0 || exists(&files.journal) || exists(&files.old_journal) {
            if let Err(error) = files.write_snapshot(&table) {
                warn!(%error, "kv journal not folded into the snapshot at start-up; changes go on appending to it");
                files.journal_bytes = fs::symlink_metadata(&files.journal).map_or(0, |m| m.len()).max(1);
            }
        }
        Ok((files, table))
    }

    /// Makes `change`, already applied to `table`, durable: a whole new snapshot while the
    /// table is small and no journal is open, else a journal append (also when the snapshot
    /// cannot be written: a line needs less room than a table). On error nothing is
    /// acknowledged and the caller undoes the change.
    pub fn persist(&mut self, change: &Change, table: &KvTable, table_bytes: usize) -> Result<(), KvError> {
        self.table_bytes = table_bytes as u64;
        if self.journal_bytes == 0 && self.table_bytes < COMPACT_FLOOR_BYTES && !exists(&self.old_journal) {
            match self.write_snapshot(table) {
                Err(KvError::Write { path, error }) if error.kind() == io::ErrorKind::StorageFull => {
                    warn!(path = %path.display(), %error, "kv snapshot not written; the change goes to the journal");
                }
                written => return written,
            }
        }
        self.append(change)
    }

    /// Appends `change` and syncs it; on error nothing is acknowledged and the journal is as
    /// it was (or, if it could not be cut back, reopened, which cuts the torn line off).
    pub(super) fn append(&mut self, change: &Change) -> Result<(), KvError> {
        let mut line =
            serde_json::to_vec(change).map_err(|error| KvError::Encode { path: self.journal.clone(), error })?;
        line.push(b'\n');
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(
                JournalFile::open(&self.journal)
                    .map_err(|error| KvError::Write { path: self.journal.clone(), error })?,
            ),
        };
        if let Err(failed) = file.append(&line) {
            if !failed.restored {
                self.file = None;
            }
            return Err(KvError::Write { path: self.journal.clone(), error: failed.error });
        }
        self.journal_bytes += line.len() as u64;
        self.maybe_compact();
        Ok(())
    }

    /// Writes `table` as the snapshot and empties the journals (start-up and shutdown).
    pub fn write_snapshot(&mut self, table: &KvTable) -> Result<(), KvError> {
        if let Some(merging) = self.merging.take() {
            let _ = merging.join();
        }
        let body = encode_snapshot(table, &self.snapshot)?;
        write_atomically(&self.snapshot, &body)
            .map_err(|error| KvError::Write { path: self.snapshot.clone(), error })?;
        self.file = None;
        for journal in [&self.journal, &self.old_journal] {
            match fs::remove_file(journal) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(KvError::Write { path: journal.clone(), error: e });
                }
                _ => {}
            }
        }
        self.journal_bytes = 0;
        Ok(())
    }

    /// Hands the journal to a background merge when it has grown past a quarter of the table
    /// and none is running; a `.journal.old` a failed merge left is merged again first. A
    /// journal grown to four times that while a merge runs waits for it.
    fn maybe_compact(&mut self) {
        let limit = COMPACT_FLOOR_BYTES.max(self.table_bytes / 4);
        if self.journal_bytes <= limit {
            return;
        }
        if let Some(merging) = self.merging.take_if(|m| m.is_finished() || self.journal_bytes >= 4 * limit) {
            let _ = merging.join();
        }
        if self.merging.is_some() {
            return;
        }
        if !exists(&self.old_journal) {
            if let Err(error) = fs::rename(&self.journal, &self.old_journal) {
                error!(path = %self.journal.display(), %error, "cannot rotate the kv journal");
                return;
            }
            self.file = None;
            self.journal_bytes = 0;
        }
        let (snapshot, old_journal, max_read) = (self.snapshot.clone(), self.old_journal.clone(), self.max_read);
        self.merging = Some(thread::spawn(move || match merge(&snapshot, &old_journal, max_read) {
            Ok(changes) => info!(path = %snapshot.display(), changes, "kv journal merged into the snapshot"),
            Err(error) => {
                error!(%error, "kv journal merge failed; it stays, is merged again later and replayed at start-up")
            }
        }));
    }
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
