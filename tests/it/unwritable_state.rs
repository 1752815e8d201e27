//! A state directory that cannot be written, on the real binary: read-only, or full. Routes
//! need no disk, so the server starts and serves; KV and config writes are refused with the
//! error and counted. The directory is made read-only or full for the server alone, in a mount
//! namespace of its own (`unshare`), so the test needs no privileges beyond user namespaces.

use std::path::Path;
use std::process::Command;

use crate::common::http::{get, sample};
use crate::common::kv_config::{put_kv, update_config};
use crate::common::process::{namesrv_command, Proc};
use crate::common::*;

/// `cmd` run in a user and mount namespace of its own after `setup` (a shell line, `$D` the
/// state directory) has changed what `dir` is for it; `None` (after saying why) when this
/// machine allows no such namespace, which fails the test under `CI=true`.
fn confined(cmd: &Command, dir: &Path, setup: &str) -> Option<Command> {
    let probe = Command::new("unshare").args(["--user", "--map-root-user", "--mount", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "unshare --user --mount is needed under CI=true");
        eprintln!("skipped: this machine allows no user and mount namespace (unshare)");
        return None;
    }
    let mut wrapped = Command::new("unshare");
    wrapped.args(["--user", "--map-root-user", "--mount", "sh", "-c", &format!("{setup} && exec \"$0\" \"$@\"")]);
    wrapped.arg(cmd.get_program()).args(cmd.get_args()).env("D", dir);
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(cwd) = cmd.get_current_dir() {
        wrapped.current_dir(cwd);
    }
    Some(wrapped)
}

/// Starts the server on `dir` as `setup` leaves it, and checks it serves routes, refuses a KV
/// put and a config update naming `error`, and counts the refused put.
fn serves_and_refuses_writes(setup: &str, error: &str) {
    let dir = temp_dir();
    std::fs::write(dir.join("kvConfig.json"), r#"{"configTable":{"NS":{"k":"before"}}}"#).unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let Some(cmd) = confined(&cmd, &dir, setup) else {
        return;
    };
    let mut proc = Proc::spawn(cmd);
    let http = proc.http_addr();
    let mut client = Client::connect(proc.addr());
    let broker = Broker::new("C", "b1", 0, "10.0.5.1:10911").topics(&["T1", "T2"]);
    assert_eq!(client.register(&broker).code, 0, "{}", proc.stderr());
    assert!(client.route("T1").is_ok(), "routes are served");
    let get_value = client.call(crate::common::requests::request(101, &[("namespace", "NS"), ("key", "k")]));
    assert_eq!(get_value.ext("value"), Some("before"), "the KV store was read");

    let put = put_kv(&mut client, "NS", "k", "after");
    assert_ne!(put.code, 0, "a put that cannot be stored is refused");
    assert!(put.remark.as_deref().unwrap_or_default().contains(error), "{:?}", put.remark);
    let metrics = get(http, "/metrics").body;
    assert!(sample(&metrics, "namesrv_kv_write_failures_total") >= Some(1.0), "{metrics}");
    let update = update_config(&mut client, Some("orderMessageEnable=true"));
    assert_ne!(update.code, 0, "a config update that cannot be stored is refused");
    assert!(update.remark.as_deref().unwrap_or_default().contains(error), "{:?}", update.remark);
    let metrics = get(http, "/metrics").body;
    assert_eq!(sample(&metrics, r#"namesrv_config_updates_total{result="refused"}"#), Some(1.0), "{metrics}");
    assert_eq!(sample(&metrics, "namesrv_config_write_failures_total"), Some(1.0), "{metrics}");
    assert!(client.route("T1").is_ok(), "and routes are still served");
}

#[test]
fn a_read_only_state_directory_does_not_stop_start_up() {
    serves_and_refuses_writes(r#"mount --bind "$D" "$D" && mount -o remount,bind,ro "$D""#, "Read-only file system");
}

#[test]
fn a_full_state_directory_does_not_stop_start_up() {
    // A 64 KiB file system, its kvConfig.json copied in, then filled to the last block.
    let setup = r#"cp "$D/kvConfig.json" /tmp/kv.$$ && mount -t tmpfs -o size=64k tmpfs "$D" && cp /tmp/kv.$$ "$D/kvConfig.json" && rm /tmp/kv.$$ && (dd if=/dev/zero of="$D/filler" bs=4k 2>/dev/null || true)"#;
    serves_and_refuses_writes(setup, "No space left on device");
}

#[test]
fn check_config_warns_of_a_read_only_state_directory_and_passes() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0", "--check-config"]);
    let Some(cmd) = confined(&cmd, &dir, r#"mount --bind "$D" "$D" && mount -o remount,bind,ro "$D""#) else {
        return;
    };
    let (status, stdout, stderr) = crate::common::process::run_to_exit(cmd);
    assert!(status.success(), "start-up would go on, so the check passes: {stdout}{stderr}");
    assert!(stdout.contains("is not writable (Read-only file system"), "{stdout}");
}
