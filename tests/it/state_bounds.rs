//! The state files stay bounded and consistent under hostile or merely heavy use: a write that
//! fails midway (a file-size limit, as a full disk) leaves no temp file and loses nothing
//! acknowledged; the KV journal stays within a small multiple of the store however fast values
//! are overwritten; `--export-kv` taken while the journal is merged misses no acknowledged change.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::kv_config::{put_kv, SUCCESS};
use crate::common::process::{namesrv_command, prlimited, run_to_exit, Proc};
use crate::common::*;
use namesrv::protocol::{ExtFields, RemotingCommand};
use serde_json::Value;

const DELETE_KV_CONFIG: i32 = 102;

/// The bytes the KV files (`kvConfig.json*`) take on disk, each inode once.
fn kv_files_bytes(dir: &Path) -> u64 {
    let mut seen = HashSet::new();
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("kvConfig.json"))
        .filter_map(|e| e.metadata().ok())
        .filter(|m| seen.insert(m.ino()))
        .map(|m| m.len())
        .sum()
}

fn spawn(mut cmd: std::process::Command) -> Proc {
    cmd.args(["--listen", "127.0.0.1:0"]);
    Proc::spawn(cmd)
}

#[test]
fn a_write_that_fails_midway_leaves_no_temp_file_and_loses_nothing_acknowledged() {
    let dir = temp_dir();
    let mut server = spawn(prlimited("--fsize=2097152", &namesrv_command(&dir)));
    let mut client = Client::connect(server.addr());
    let value = "v".repeat(200 * 1024);
    let mut acknowledged = Vec::new();
    for n in 0..40 {
        let key = format!("k{n}");
        if put_kv(&mut client, "bulk", &key, &value).code != SUCCESS {
            break;
        }
        acknowledged.push(key);
    }
    assert!(acknowledged.len() < 40, "the file-size limit refused a put");
    assert!(server.is_running(), "a write past the limit fails; the process goes on");
    for leftover in ["kvConfig.json.tmp", "kvConfig.json.bak.tmp"] {
        assert!(!dir.join(leftover).exists(), "{leftover} left behind");
    }
    // What the refused write held is free again: deletes and a small put work.
    for key in acknowledged.drain(..3).collect::<Vec<_>>() {
        let ext = ExtFields::new().with("namespace", "bulk").with("key", &key);
        assert_eq!(client.call(RemotingCommand::request(DELETE_KV_CONFIG, Some(ext))).code, SUCCESS);
    }
    assert_eq!(put_kv(&mut client, "app", "small", &"s".repeat(1024)).code, SUCCESS);
    server.terminate();
    server.wait(Duration::from_secs(10));

    let mut again = spawn(namesrv_command(&dir));
    let mut export = namesrv_command(&dir);
    export.args(["--export-kv", "-"]);
    again.addr();
    let (status, stdout, stderr) = run_to_exit(export);
    assert!(status.success(), "{stderr}");
    let table: Value = serde_json::from_str(&stdout).unwrap();
    for key in &acknowledged {
        assert_eq!(table["configTable"]["bulk"][key].as_str().map(str::len), Some(value.len()), "{key} lost");
    }
    assert_eq!(table["configTable"]["app"]["small"].as_str().map(str::len), Some(1024));
}

#[test]
fn the_kv_journal_stays_within_a_small_multiple_of_the_store() {
    let dir = temp_dir();
    let mut server = spawn(namesrv_command(&dir));
    let mut client = Client::connect(server.addr());
    let value = |n: usize| format!("{n:08}").repeat(25 * 1024);
    let mut largest = 0;
    for n in 0..600 {
        assert_eq!(put_kv(&mut client, "bulk", &format!("k{}", n % 10), &value(n)).code, SUCCESS);
        largest = largest.max(kv_files_bytes(&dir));
    }
    // A 2 MB store: its snapshot, backup and a snapshot being written, a journal merged at a
    // quarter of it (at least 1 MiB) that waits for a running merge at four times that, and the
    // journal being merged: at most 3 x 2 MB + 2 x 4 MiB, whatever the merge thread's lag.
    assert!(largest <= 16 << 20, "the KV files reached {largest} bytes for a 2 MB store");
}

#[test]
fn export_kv_during_journal_merges_misses_no_acknowledged_change() {
    let dir = temp_dir();
    let mut server = spawn(namesrv_command(&dir));
    let addr = server.addr();
    const KEYS: usize = 32;
    // The latest acknowledged write of each key (its value is that number, repeated).
    let acknowledged: Arc<Vec<AtomicUsize>> = Arc::new((0..KEYS).map(|_| AtomicUsize::new(0)).collect());
    let writer = {
        let acknowledged = acknowledged.clone();
        std::thread::spawn(move || {
            let mut client = Client::connect(addr);
            // An 8 MB store overwritten 256 KB at a time: the journal is merged every 8 changes.
            for n in 1..=800 {
                let value = format!("{n:08}").repeat(32 * 1024);
                assert_eq!(put_kv(&mut client, "bulk", &format!("k{}", n % KEYS), &value).code, SUCCESS);
                acknowledged[n % KEYS].store(n, Ordering::SeqCst);
            }
        })
    };
    let mut exports = 0;
    while !writer.is_finished() {
        let known: Vec<usize> = acknowledged.iter().map(|a| a.load(Ordering::SeqCst)).collect();
        let mut export = namesrv_command(&dir);
        export.args(["--export-kv", "-"]);
        let (status, stdout, stderr) = run_to_exit(export);
        assert!(status.success(), "{stderr}");
        let table: Value = serde_json::from_str(&stdout).unwrap();
        let exported = |k: usize| -> usize {
            let value = table["configTable"]["bulk"][format!("k{k}")].as_str().unwrap_or("0");
            value.get(..8).unwrap_or("0").parse().unwrap()
        };
        let stale: Vec<usize> = (0..KEYS).filter(|k| exported(*k) < known[*k]).collect();
        assert!(stale.is_empty(), "export {exports} is older than what was acknowledged for keys {stale:?}");
        exports += 1;
    }
    writer.join().unwrap();
    assert!(exports >= 10, "only {exports} exports ran while the journal was merged");
    assert!(server.is_running());
}
