//! Runtime updates against the config file, with the real binary: an update holds while the
//! config file keeps the value it had, and an edit of that key in the file wins at SIGHUP and at
//! restart, dropping the update from `config_store_path`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::checks::assert_success;
use crate::common::kv_config::update_config;
use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
use namesrv::protocol::RemotingCommand;

const GET_NAMESRV_CONFIG: i32 = 319;
const BASE: &str = "bind_address = \"127.0.0.1\"\nlisten_port = 0\n";

fn broker_timeout(client: &mut Client) -> String {
    let resp = client.call(RemotingCommand::request(GET_NAMESRV_CONFIG, None));
    let body = String::from_utf8(resp.body.expect("GET_NAMESRV_CONFIG has a body").to_vec()).unwrap();
    let line = body.lines().find_map(|l| l.strip_prefix("broker_timeout_ms="));
    line.unwrap_or_else(|| panic!("no broker_timeout_ms in\n{body}")).to_owned()
}

fn write_config(dir: &Path, broker_timeout_ms: u64) -> PathBuf {
    let path = dir.join("namesrv.toml");
    std::fs::write(&path, format!("{BASE}broker_timeout_ms = {broker_timeout_ms}\n")).unwrap();
    path
}

fn command(dir: &Path, file: &Path) -> Command {
    let mut cmd = namesrv_command(dir);
    cmd.arg("-c").arg(file);
    cmd
}

fn store(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("namesrv.properties")).unwrap_or_default()
}

#[test]
fn a_config_file_edit_after_a_runtime_update_wins_at_sighup() {
    let dir = temp_dir();
    let file = write_config(&dir, 120_000);
    let mut proc = Proc::spawn(command(&dir, &file));
    let mut client = Client::connect(proc.addr());
    assert_success(&update_config(&mut client, Some("broker_timeout_ms=60000")));
    proc.hangup();
    proc.wait_for_line(&["config reloaded"]);
    assert_eq!(broker_timeout(&mut client), "60000", "the file still says what it said at the update");

    write_config(&dir, 90_000);
    proc.hangup();
    proc.wait_for_line(&["INFO", "runtime update is dropped", "key=broker_timeout_ms", "runtime=60000", "file=90000"]);
    proc.wait_for_line(&["setting reloaded", "key=broker_timeout_ms", "new=90000"]);
    assert_eq!(broker_timeout(&mut client), "90000", "the edited file wins over the older update");
    assert!(
        eventually(Duration::from_secs(5), || !store(&dir).contains("broker_timeout_ms")),
        "the stale update is dropped from the store:\n{}",
        store(&dir)
    );
}

#[test]
fn a_config_file_edit_after_a_runtime_update_wins_at_restart_and_check_config_names_overrides() {
    let dir = temp_dir();
    let file = write_config(&dir, 120_000);
    let mut proc = Proc::spawn(command(&dir, &file));
    let mut client = Client::connect(proc.addr());
    assert_success(&update_config(&mut client, Some("broker_timeout_ms=70000")));
    drop(client);
    drop(proc);

    let mut check = command(&dir, &file);
    check.arg("--check-config");
    let (status, stdout, stderr) = run_to_exit(check);
    assert!(status.success(), "{stderr}");
    let line = "runtime update overrides broker_timeout_ms=70000 (config files: 120000)";
    assert!(stdout.contains(line), "--check-config names the override:\n{stdout}");

    let mut proc = Proc::spawn(command(&dir, &file));
    assert_eq!(broker_timeout(&mut Client::connect(proc.addr())), "70000", "the update survives a restart");
    proc.wait_for_line(&["applying runtime updates over the config files", "broker_timeout_ms"]);
    drop(proc);

    write_config(&dir, 80_000);
    let mut proc = Proc::spawn(command(&dir, &file));
    assert_eq!(broker_timeout(&mut Client::connect(proc.addr())), "80000", "the edited file wins at restart");
    proc.wait_for_line(&["runtime update is dropped", "key=broker_timeout_ms"]);
    assert!(eventually(Duration::from_secs(5), || !store(&dir).contains("broker_timeout_ms")), "{}", store(&dir));
}
