//! `namesrv --export-kv`: a backup of the whole KV store, journal included, taken while the
//! server runs (a copy of kvConfig.json alone misses what the journal holds).

use crate::common::kv_config::put_kv;
use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
use serde_json::Value;

#[test]
fn export_kv_holds_the_changes_the_journal_has_and_the_snapshot_file_not_yet() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut server = Proc::spawn(cmd);
    let mut client = Client::connect(server.addr());
    // Past 1 MiB the store journals its changes instead of rewriting kvConfig.json.
    let big = "v".repeat(600 * 1024);
    for key in ["big1", "big2"] {
        assert_eq!(put_kv(&mut client, "bulk", key, &big).code, 0);
    }
    assert_eq!(put_kv(&mut client, "app", "recent", "in-the-journal").code, 0);
    let snapshot_file = std::fs::read_to_string(dir.join("kvConfig.json")).unwrap_or_default();
    assert!(!snapshot_file.contains("in-the-journal"), "the change is only in the journal yet");

    let mut export = namesrv_command(&dir);
    export.args(["--export-kv", "-"]);
    let (status, stdout, stderr) = run_to_exit(export);
    assert!(status.success(), "{stderr}");
    let exported: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not json ({e}): {stderr}"));
    assert_eq!(exported["configTable"]["app"]["recent"], "in-the-journal");
    assert_eq!(exported["configTable"]["bulk"]["big2"].as_str().map(str::len), Some(big.len()));
    assert!(server.is_running(), "the export took nothing from the running server");

    // To a file, and an unwritable target fails with the path named.
    let file = dir.join("backup.json");
    let export_to = |target: &str| {
        let mut cmd = namesrv_command(&dir);
        cmd.args(["--export-kv", target]);
        run_to_exit(cmd)
    };
    let (status, _, _) = export_to(&file.display().to_string());
    assert!(status.success());
    assert_eq!(serde_json::from_slice::<Value>(&std::fs::read(&file).unwrap()).unwrap(), exported);
    let (status, _, stderr) = export_to("/nonexistent/dir/x.json");
    assert!(!status.success());
    assert!(stderr.contains("/nonexistent/dir/x.json"), "{stderr}");
}
