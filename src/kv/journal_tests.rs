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
    for change in [put("ns", "a", "1"), put("ns", "b", "2"), Change::Delete(DeleteTag::Delete, "ns".into(), "a".into())]
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
    let expected: KvTable = [("ns".into(), [("a".into(), "1".into()), ("b".into(), "[\"put\",".into())].into())].into();
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
