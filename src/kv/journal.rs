//! Durable storage of the KV table: Java's `kvConfig.json`, plus an append-only journal beside
//! it (`kvConfig.json.journal`) once the table is large.
//!
//! While the table is under 1 MiB every change rewrites `kvConfig.json` (atomically, the
//! previous version kept as `.bak`), as Java does. Past that a change costs one small synced
//! journal append, whatever the table's size; when the journal outgrows a quarter of the
//! snapshot it is renamed `.journal.old` and a background thread merges it into a new snapshot,
//! then deletes it. Loading reads the snapshot, then `.journal.old`, then `.journal`; a torn
//! last line (a crash mid-append, never acknowledged) is ignored. Start-up and a clean
//! shutdown write the whole table as the snapshot, so the file is Java's complete
//! `kvConfig.json` whenever namesrv is not running.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread;

use serde::{Deserialize, Serialize};
use tracing::{error, info};

use super::{KvError, KvTable};
use crate::persist::{sibling, write_atomically};

/// Journals smaller than this are never compacted while running; tables smaller than this
/// are rewritten whole on every change, as Java does.
const COMPACT_FLOOR_BYTES: u64 = 1024 * 1024;

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

/// Java's `KVConfigSerializeWrapper`, as read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotIn {
    #[serde(default)]
    config_table: KvTable,
}

/// Java's `KVConfigSerializeWrapper`, as written: borrows the table, so writing copies nothing.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotOut<'a> {
    config_table: &'a KvTable,
}

/// The snapshot and journal files of one KV store.
#[derive(Debug)]
pub struct KvFiles {
    snapshot: PathBuf,
    journal: PathBuf,
    old_journal: PathBuf,
    file: Option<File>,
    journal_bytes: u64,
    snapshot_bytes: u64,
}

impl KvFiles {
    /// Loads the table (snapshot, then the journals) and writes it back as one snapshot.
    /// A missing or empty snapshot is an empty table; an unreadable or corrupt file is an error.
    pub fn open(path: &Path) -> Result<(KvFiles, KvTable), KvError> {
        let mut files = KvFiles {
            snapshot: path.to_owned(),
            journal: sibling(path, ".journal"),
            old_journal: sibling(path, ".journal.old"),
            file: None,
            journal_bytes: 0,
            snapshot_bytes: 0,
        };
        let mut table = read_snapshot(path)?;
        let replayed = replay(&files.old_journal, &mut table)? + replay(&files.journal, &mut table)?;
        if replayed > 0 {
            files.write_snapshot(&table)?;
        } else {
            files.snapshot_bytes = fs::metadata(path).map_or(0, |m| m.len());
        }
        Ok((files, table))
    }

    /// Makes `change`, already applied to `table`, durable: a whole new snapshot while the
    /// table is small and no journal is open, else a journal append. On error nothing is
    /// acknowledged and the caller undoes the change.
    pub fn persist(&mut self, change: &Change, table: &KvTable, table_bytes: usize) -> Result<(), KvError> {
        if self.journal_bytes == 0 && (table_bytes as u64) < COMPACT_FLOOR_BYTES && !self.old_journal.exists() {
            return self.write_snapshot(table);
        }
        self.append(change)
    }

    /// Appends `change` and syncs it; on error nothing is acknowledged.
    fn append(&mut self, change: &Change) -> Result<(), KvError> {
        let mut line =
            serde_json::to_vec(change).map_err(|error| KvError::Encode { path: self.journal.clone(), error })?;
        line.push(b'\n');
        let write = |file: &mut File| file.write_all(&line).and_then(|()| file.sync_data());
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(self.open_journal()?),
        };
        write(file).map_err(|error| KvError::Write { path: self.journal.clone(), error })?;
        self.journal_bytes += line.len() as u64;
        self.maybe_compact();
        Ok(())
    }

    /// Writes `table` as the snapshot and empties the journals (start-up and shutdown).
    pub fn write_snapshot(&mut self, table: &KvTable) -> Result<(), KvError> {
        let body = serde_json::to_vec(&SnapshotOut { config_table: table })
            .map_err(|error| KvError::Encode { path: self.snapshot.clone(), error })?;
        write_atomically(&self.snapshot, &body)
            .map_err(|error| KvError::Write { path: self.snapshot.clone(), error })?;
        self.snapshot_bytes = body.len() as u64;
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

    fn open_journal(&self) -> Result<File, KvError> {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.journal)
            .map_err(|error| KvError::Write { path: self.journal.clone(), error })
    }

    /// Hands the journal to a background merge when it has grown enough and none is running.
    fn maybe_compact(&mut self) {
        let due = self.journal_bytes > COMPACT_FLOOR_BYTES.max(self.snapshot_bytes / 4);
        if !due || self.old_journal.exists() {
            return;
        }
        if let Err(error) = fs::rename(&self.journal, &self.old_journal) {
            error!(path = %self.journal.display(), %error, "cannot rotate the kv journal");
            return;
        }
        self.file = None;
        self.snapshot_bytes += self.journal_bytes;
        self.journal_bytes = 0;
        let (snapshot, old_journal) = (self.snapshot.clone(), self.old_journal.clone());
        thread::spawn(move || match merge(&snapshot, &old_journal) {
            Ok(changes) => info!(path = %snapshot.display(), changes, "kv journal merged into the snapshot"),
            Err(error) => error!(%error, "kv journal merge failed; it stays and is replayed at start-up"),
        });
    }
}

/// The table as of the last acknowledged change (the snapshot, then the journals), written
/// nowhere: for checking a configuration without touching it.
pub fn read_table(path: &Path) -> Result<KvTable, KvError> {
    let mut table = read_snapshot(path)?;
    replay(&sibling(path, ".journal.old"), &mut table)?;
    replay(&sibling(path, ".journal"), &mut table)?;
    Ok(table)
}

/// Merges `old_journal` into the snapshot file and deletes it. Returns the changes merged.
fn merge(snapshot: &Path, old_journal: &Path) -> Result<usize, KvError> {
    let mut table = read_snapshot(snapshot)?;
    let changes = replay(old_journal, &mut table)?;
    let body = serde_json::to_vec(&SnapshotOut { config_table: &table })
        .map_err(|error| KvError::Encode { path: snapshot.to_owned(), error })?;
    write_atomically(snapshot, &body).map_err(|error| KvError::Write { path: snapshot.to_owned(), error })?;
    fs::remove_file(old_journal).map_err(|error| KvError::Write { path: old_journal.to_owned(), error })?;
    Ok(changes)
}

/// Reads a snapshot; missing or empty is an empty table (as Java's `KVConfigManager.load`).
fn read_snapshot(path: &Path) -> Result<KvTable, KvError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(KvTable::new()),
        Err(error) => return Err(KvError::Read { path: path.into(), error }),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(KvTable::new());
    }
    let file: SnapshotIn =
        serde_json::from_slice(&bytes).map_err(|error| KvError::Corrupt { path: path.into(), error })?;
    Ok(file.config_table)
}

/// Applies the complete lines of a journal to `table`; returns how many. A last line without
/// its newline was never acknowledged and is ignored.
fn replay(path: &Path, table: &mut KvTable) -> Result<usize, KvError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(KvError::Read { path: path.into(), error }),
    };
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let mut count = 0;
    for line in bytes[..complete].split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let change: Change =
            serde_json::from_slice(line).map_err(|error| KvError::Corrupt { path: path.into(), error })?;
        change.apply(table);
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn changes_survive_a_crash_through_the_journal_and_a_torn_line_is_ignored() {
        let path = dir().join("kvConfig.json");
        let (mut files, mut table) = KvFiles::open(&path).unwrap();
        for change in
            [put("ns", "a", "1"), put("ns", "b", "2"), Change::Delete(DeleteTag::Delete, "ns".into(), "a".into())]
        {
            files.append(&change).unwrap();
            change.apply(&mut table);
        }
        assert_eq!(fs::read(&path).unwrap_or_default(), b"", "journaled: the snapshot is not rewritten");
        let mut journal = OpenOptions::new().append(true).open(sibling(&path, ".journal")).unwrap();
        journal.write_all(br#"["put","ns","torn""#).unwrap();
        drop(files);
        let (_, loaded) = KvFiles::open(&path).unwrap();
        assert_eq!(loaded, table);
        assert!(!sibling(&path, ".journal").exists(), "start-up folds the journal into the snapshot");
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text, r#"{"configTable":{"ns":{"b":"2"}}}"#, "Java's format");
    }

    #[test]
    fn a_grown_journal_is_merged_in_the_background() {
        let path = dir().join("kvConfig.json");
        let (mut files, mut table) = KvFiles::open(&path).unwrap();
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
        let merged = read_snapshot(&path).unwrap();
        assert!(merged["ns"].len() >= 16, "the snapshot took the merged changes: {} keys", merged["ns"].len());
        drop(files);
        assert_eq!(KvFiles::open(&path).unwrap().1, table);
    }

    #[test]
    fn an_empty_snapshot_is_an_empty_table_and_a_corrupt_one_an_error() {
        let path = dir().join("kvConfig.json");
        fs::write(&path, "").unwrap();
        assert!(KvFiles::open(&path).unwrap().1.is_empty());
        fs::write(&path, "{\"configTable\":{").unwrap();
        assert!(matches!(KvFiles::open(&path), Err(KvError::Corrupt { .. })));
    }
}
