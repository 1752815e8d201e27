//! Reading the KV files back: the snapshot, then the journals, each bounded in size. A torn
//! last line (a crash mid-append, never acknowledged) is dropped with a warning; so is a torn
//! append that an older version let the next acknowledged line land on.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tracing::warn;

use super::change::Change;
use super::{KvError, KvTable};
use crate::persist::{read_state_file, sibling, write_atomically};

/// Java's `KVConfigSerializeWrapper`, as read: each value as its JSON text, made a string as
/// fastjson makes it (see [`java_text`]).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotIn {
    #[serde(default)]
    config_table: BTreeMap<String, BTreeMap<String, Box<RawValue>>>,
}

/// Java's `KVConfigSerializeWrapper` with every value a string, as written.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StringSnapshotIn {
    #[serde(default)]
    config_table: KvTable,
}

/// A snapshot value as Java's `KVConfigManager.load` (fastjson 1.2.83, whose `StringCodec`
/// coerces into the `String` of `HashMap<String, String>`) reads it: a string as it is, a number
/// with its digits as written (`1.50` stays `1.50`, as `BigDecimal.toString`), `true`/`false`
/// as their text, an object or array as its JSON text; `None` for `null`, which Java keeps as a
/// null value (GET_KV_CONFIG answers not found) and drops at its next write. The bool says
/// whether the value was not a JSON string.
fn java_text(raw: &RawValue) -> Result<(Option<String>, bool), serde_json::Error> {
    let text = raw.get().trim();
    match text.as_bytes().first() {
        Some(b'"') => Ok((Some(serde_json::from_str(text)?), false)),
        _ if text == "null" => Ok((None, true)),
        _ => Ok((Some(text.to_owned()), true)),
    }
}

/// Java's `KVConfigSerializeWrapper`, as written: borrows the table, so writing copies nothing.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotOut<'a> {
    config_table: &'a KvTable,
}

/// The snapshot bytes of `table`, as Java writes `kvConfig.json`.
pub(super) fn encode_snapshot(table: &KvTable, path: &Path) -> Result<Vec<u8>, KvError> {
    serde_json::to_vec(&SnapshotOut { config_table: table })
        .map_err(|error| KvError::Encode { path: path.into(), error })
}

/// How many times [`read_table`] reads the files again when a merge or rotation changed them
/// while it read.
const READ_ATTEMPTS: usize = 20;

/// The table as of the last acknowledged change (the snapshot, then the journals), written
/// nowhere: for checking a configuration, or exporting it, without touching it. No file is read
/// past `max_read`. The three files are read one after another while a running server may merge
/// or rotate them, so each is identified before and after the reads (a merge replaces the
/// snapshot and removes `.journal.old`; a rotation renames `.journal`); a change means the reads
/// may not belong together, and they are made again. Appends only extend `.journal`, so what
/// was read of it is a consistent prefix.
pub fn read_table(path: &Path, max_read: u64) -> Result<KvTable, KvError> {
    let (old, journal) = (sibling(path, ".journal.old"), sibling(path, ".journal"));
    for _ in 0..READ_ATTEMPTS {
        let before = identities(path, &old, &journal);
        let (mut table, _) = read_snapshot(path, max_read)?;
        replay(&old, &mut table, max_read)?;
        replay(&journal, &mut table, max_read)?;
        if identities(path, &old, &journal) == before {
            return Ok(table);
        }
    }
    Err(KvError::KeptChanging { path: path.to_owned() })
}

/// What identifies each KV file: the snapshot and `.journal.old` by inode and change time (both
/// are only ever replaced or removed whole), `.journal` by inode alone (appends change its time).
fn identities(snapshot: &Path, old: &Path, journal: &Path) -> [Option<(u64, u64, i64, i64)>; 3] {
    use std::os::unix::fs::MetadataExt;
    let id = |path: &Path, with_time: bool| {
        fs::symlink_metadata(path).ok().map(|m| {
            let (secs, nanos) = if with_time { (m.ctime(), m.ctime_nsec()) } else { (0, 0) };
            (m.dev(), m.ino(), secs, nanos)
        })
    };
    [id(snapshot, true), id(old, true), id(journal, false)]
}

/// Merges `old_journal` into the snapshot file and deletes it. Returns the changes merged.
pub(super) fn merge(snapshot: &Path, old_journal: &Path, max_read: u64) -> Result<usize, KvError> {
    let (mut table, _) = read_snapshot(snapshot, max_read)?;
    let changes = replay(old_journal, &mut table, max_read)?;
    let body = encode_snapshot(&table, snapshot)?;
    write_atomically(snapshot, &body).map_err(|error| KvError::Write { path: snapshot.to_owned(), error })?;
    fs::remove_file(old_journal).map_err(|error| KvError::Write { path: old_journal.to_owned(), error })?;
    Ok(changes)
}

/// Reads a state file; `None` when it does not exist.
fn read(path: &Path, max_read: u64) -> Result<Option<Vec<u8>>, KvError> {
    match read_state_file(path, max_read) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(KvError::Read { path: path.into(), error }),
    }
}

/// Reads a snapshot; missing or empty is an empty table (as Java's `KVConfigManager.load`).
/// Also returns how many values were not JSON strings (read as Java reads them, with one WARN);
/// written back, they become strings.
pub(super) fn read_snapshot(path: &Path, max_read: u64) -> Result<(KvTable, usize), KvError> {
    let Some(bytes) = read(path, max_read)? else { return Ok((KvTable::new(), 0)) };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok((KvTable::new(), 0));
    }
    // Every value a string (what this server and Java write): read straight into the table.
    if let Ok(file) = serde_json::from_slice::<StringSnapshotIn>(&bytes) {
        return Ok((file.config_table, 0));
    }
    let corrupt = |error| KvError::Corrupt { path: path.into(), error };
    let file: SnapshotIn = serde_json::from_slice(&bytes).map_err(corrupt)?;
    let mut coerced = 0;
    let mut table = KvTable::new();
    for (namespace, entries) in file.config_table {
        let mut kept = BTreeMap::new();
        for (key, raw) in entries {
            let (value, not_a_string) = java_text(&raw).map_err(corrupt)?;
            coerced += usize::from(not_a_string);
            if let Some(value) = value {
                kept.insert(key, value);
            }
        }
        table.insert(namespace, kept);
    }
    if coerced > 0 {
        warn!(
            file = %path.display(),
            values = coerced,
            "kv config: values that were not JSON strings read as text, as Java reads them (null ones dropped); written back as strings"
        );
    }
    Ok((table, coerced))
}

/// Applies the complete lines of a journal to `table`; returns how many. A last line without
/// its newline was never acknowledged and is dropped.
pub(super) fn replay(path: &Path, table: &mut KvTable, max_read: u64) -> Result<usize, KvError> {
    let Some(bytes) = read(path, max_read)? else { return Ok(0) };
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if complete < bytes.len() {
        let torn = bytes.len() - complete;
        warn!(path = %path.display(), bytes = torn, "kv journal ends in a torn line (a write that never completed); dropped");
    }
    let mut count = 0;
    for line in bytes[..complete].split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        parse_line(line, path)?.apply(table);
        count += 1;
    }
    Ok(count)
}

/// One journal line. A line can only end in a newline once its whole change was written, so
/// what precedes a change's start (`["put",` or `["del",`, which never occur unescaped inside
/// a JSON string) on a line that does not parse is a torn append that was never acknowledged:
/// it is dropped with a warning and the change after it is kept. Anything else is corrupt.
fn parse_line(line: &[u8], path: &Path) -> Result<Change, KvError> {
    let error = match serde_json::from_slice(line) {
        Ok(change) => return Ok(change),
        Err(error) => error,
    };
    let start = [&b"[\"put\","[..], &b"[\"del\","[..]]
        .iter()
        .filter_map(|tag| line.windows(tag.len()).rposition(|w| w == *tag))
        .max()
        .filter(|i| *i > 0);
    match start.map(|i| (i, serde_json::from_slice::<Change>(&line[i..]))) {
        Some((torn, Ok(change))) => {
            warn!(path = %path.display(), bytes = torn, "kv journal line starts with a torn write; the change after it is kept");
            Ok(change)
        }
        _ => Err(KvError::Corrupt { path: path.into(), error }),
    }
}
