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
mod tests {
    use std::fs::OpenOptions;
    use std::io::Write;

    use super::*;

    const MAX_READ: u64 = 64 * 1024 * 1024;

    fn put(ns: &str, key: &str, value: &str) -> Change {
        Change::Put(PutTag::Put, ns.into(), key.into(), value.into())
    }

    fn dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "namesrv-journal-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn append_raw(path: &Path, bytes: &[u8]) {
        OpenOptions::new().create(true).append(true).open(sibling(path, ".journal")).unwrap().write_all(bytes).unwrap();
    }

    #[test]
    fn changes_survive_a_crash_through_the_journal_and_a_torn_line_is_ignored() {
        let path = dir().join("kvConfig.json");
        let (mut files, mut table) = KvFiles::open(&path, MAX_READ).unwrap();
        for change in
            [put("ns", "a", "1"), put("ns", "b", "2"), Change::Delete(DeleteTag::Delete, "ns".into(), "a".into())]
        {
            files.append(&change).unwrap();
            change.apply(&mut table);
        }
        assert_eq!(fs::read(&path).unwrap_or_default(), b"", "journaled: the snapshot is not rewritten");
        append_raw(&path, br#"["put","ns","torn""#);
        drop(files);
        let (_, loaded) = KvFiles::open(&path, MAX_READ).unwrap();
        assert_eq!(loaded, table);
        assert!(!sibling(&path, ".journal").exists(), "start-up folds the journal into the snapshot");
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text, r#"{"configTable":{"ns":{"b":"2"}}}"#, "Java's format");
    }

    #[test]
    fn a_full_disk_mid_append_leaves_the_journal_as_it_was_and_the_next_put_survives() {
        let path = dir().join("kvConfig.json");
        let (mut files, _) = KvFiles::open(&path, MAX_READ).unwrap();
        files.append(&put("ns", "a", "1")).unwrap();
        let journal = sibling(&path, ".journal");
        let before = fs::read(&journal).unwrap();
        files.file.as_mut().unwrap().space = Some(7);
        let err = files.append(&put("ns", "lost", "never acknowledged")).unwrap_err();
        assert!(matches!(&err, KvError::Write { error, .. } if error.kind() == io::ErrorKind::StorageFull), "{err}");
        assert_eq!(fs::read(&journal).unwrap(), before, "the torn line is cut off");
        files.file.as_mut().unwrap().space = None;
        files.append(&put("ns", "b", "2")).unwrap();
        drop(files);
        let (_, loaded) = KvFiles::open(&path, MAX_READ).unwrap();
        let expected: KvTable = [("ns".into(), [("a".into(), "1".into()), ("b".into(), "2".into())].into())].into();
        assert_eq!(loaded, expected, "every acknowledged put, not the refused one");
    }

    #[test]
    fn a_torn_journal_tail_is_cut_off_before_the_next_append() {
        let path = dir().join("kvConfig.json");
        append_raw(&path, b"[\"put\",\"ns\",\"a\",\"1\"]\n[\"put\",\"ns\",\"torn");
        let journal = JournalFile::open(&sibling(&path, ".journal")).unwrap();
        drop(journal);
        assert_eq!(fs::read(sibling(&path, ".journal")).unwrap(), b"[\"put\",\"ns\",\"a\",\"1\"]\n");
    }

    #[test]
    fn an_acknowledged_change_written_onto_a_torn_line_is_kept() {
        let path = dir().join("kvConfig.json");
        append_raw(
            &path,
            b"[\"put\",\"ns\",\"a\",\"1\"]\n[\"put\",\"ns\",\"torn\",\"x[\"put\",\"ns\",\"b\",\"[\\\"put\\\",\"]\n",
        );
        let (_, loaded) = KvFiles::open(&path, MAX_READ).unwrap();
        let expected: KvTable =
            [("ns".into(), [("a".into(), "1".into()), ("b".into(), "[\"put\",".into())].into())].into();
        assert_eq!(loaded, expected);
        append_raw(&path, b"[\"put\",\"ns\",\"c\"\n");
        assert!(matches!(KvFiles::open(&path, MAX_READ), Err(KvError::Corrupt { .. })), "nothing to salvage: corrupt");
    }

    #[test]
    fn the_journal_is_created_with_its_directory() {
        let path = dir().join("not/yet/kvConfig.json");
        let (mut files, _) = KvFiles::open(&path, MAX_READ).unwrap();
        files.append(&put("ns", "a", "1")).unwrap();
        assert!(sibling(&path, ".journal").exists());
    }

    #[test]
    fn a_grown_journal_is_merged_in_the_background() {
        let path = dir().join("kvConfig.json");
        let (mut files, mut table) = KvFiles::open(&path, MAX_READ).unwrap();
        let value = "v".repeat(64 * 1024);
        for i in 0..24 {
            let change = put("ns", &format!("k{i}"), &value);
            files.append(&change).unwrap();
            change.apply(&mut table);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while sibling(&path, ".journal.old").exists() && std::time::Instant::now() < deadline {
            thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!sibling(&path, ".journal.old").exists(), "merged and deleted");
        let (merged, _) = read_snapshot(&path, MAX_READ).unwrap();
        assert!(merged["ns"].len() >= 16, "the snapshot took the merged changes: {} keys", merged["ns"].len());
        drop(files);
        assert_eq!(KvFiles::open(&path, MAX_READ).unwrap().1, table);
    }

    #[test]
    fn an_empty_snapshot_is_an_empty_table_and_a_corrupt_or_oversized_one_an_error() {
        let path = dir().join("kvConfig.json");
        fs::write(&path, "").unwrap();
        assert!(KvFiles::open(&path, MAX_READ).unwrap().1.is_empty());
        fs::write(&path, "{\"configTable\":{").unwrap();
        assert!(matches!(KvFiles::open(&path, MAX_READ), Err(KvError::Corrupt { .. })));
        fs::write(&path, "{\"configTable\":{}}").unwrap();
        let err = KvFiles::open(&path, 10).unwrap_err().to_string();
        assert!(err.contains("too large: 18 bytes, max 10"), "{err}");
    }
}
