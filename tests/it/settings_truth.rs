//! Settings that must not lie (issue 37): a value with a runtime floor has it from every source,
//! `--check-config` fails on what start-up or a reload would refuse, and works beside the
//! running server it checks.

use std::path::{Path, PathBuf};

use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
use namesrv::protocol::RemotingCommand;

const GET_NAMESRV_CONFIG: i32 = 319;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn config_value(client: &mut Client, key: &str) -> String {
    let resp = client.call(RemotingCommand::request(GET_NAMESRV_CONFIG, None));
    let body = String::from_utf8(resp.body.unwrap_or_default().to_vec()).unwrap();
    let prefix = format!("{key}=");
    body.lines().find_map(|l| l.strip_prefix(&prefix)).unwrap_or_else(|| panic!("no {key} in\n{body}")).to_owned()
}

// ---------------------------------------------------------------------------------------------
// broker_timeout_ms: the wire's floor from a file, the environment and a flag

#[test]
fn a_broker_timeout_in_seconds_fails_the_check_and_the_start() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--check-config", "--listen", "127.0.0.1:0", "--set", "broker_timeout_ms=120"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("broker_timeout_ms") && stderr.contains("runtime_min_broker_timeout_ms"), "{stderr}");

    let mut cmd = namesrv_command(&dir);
    cmd.env("NAMESRV_BROKER_TIMEOUT_MS", "120").args(["--listen", "127.0.0.1:0"]);
    let (status, _, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(2), "stderr:\n{stderr}");
    assert!(stderr.contains("NAMESRV_BROKER_TIMEOUT_MS") && !stderr.contains("listening"), "{stderr}");

    let mut cmd = namesrv_command(&dir);
    cmd.args(["--check-config", "--listen", "127.0.0.1:0", "--set", "broker_timeout_ms=3000"]);
    cmd.args(["--set", "runtime_min_broker_timeout_ms=1000"]);
    let (status, _, stderr) = run_to_exit(cmd);
    assert!(status.success(), "a lowered floor allows it: {stderr}");
}

#[test]
fn a_reload_with_a_broker_timeout_below_the_floor_changes_nothing() {
    let dir = temp_dir();
    let base = "bind_address = \"127.0.0.1\"\nlisten_port = 0\n";
    let file = write(&dir, "namesrv.toml", &format!("{base}broker_timeout_ms = 120000\n"));
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    assert_eq!(config_value(&mut client, "broker_timeout_ms"), "120000");
    write(&dir, "namesrv.toml", &format!("{base}broker_timeout_ms = 120\n"));
    proc.hangup();
    proc.wait_for_line(&["reload failed; settings unchanged", "broker_timeout_ms"]);
    assert_eq!(config_value(&mut client, "broker_timeout_ms"), "120000", "the reload applied nothing");
}

#[test]
fn a_log_filter_that_does_not_parse_fails_the_check() {
    let mut cmd = namesrv_command(&temp_dir());
    cmd.args(["--check-config", "--listen", "127.0.0.1:0", "--set", "log_filter=namesrv=[bogus"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("log_filter"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// --check-config beside the running server it checks

#[test]
fn check_config_passes_beside_the_running_server_that_holds_its_state() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr().to_string();
    let http = proc.wait_for_line(&["http endpoint up"]);
    let http = http.split("http_addr=").nth(1).and_then(|s| s.split_whitespace().next()).unwrap().to_owned();

    let mut cmd = namesrv_command(&dir);
    cmd.args(["--check-config", "--listen", &addr, "--set", &format!("http_listen={http}")]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let pid = format!("held by the running namesrv (pid {})", proc.pid());
    assert!(stdout.lines().any(|l| l.contains(&format!("listen address {addr}")) && l.contains(&pid)), "{stdout}");
    assert!(stdout.lines().any(|l| l.contains(&format!("http endpoint {http}")) && l.contains(&pid)), "{stdout}");

    let mut cmd = namesrv_command(&temp_dir());
    cmd.args(["--check-config", "--listen", &addr]);
    let (status, _, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(1), "another state directory's server is no excuse:\n{stderr}");

    let mut cmd = namesrv_command(&temp_dir());
    cmd.args(["--check-config", "--no-bind", "--listen", &addr]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success() && stdout.contains("not bound (--no-bind)"), "stdout:\n{stdout}\nstderr:\n{stderr}");
}

// ---------------------------------------------------------------------------------------------
// The state lock covers config_store_path

#[test]
fn two_servers_on_one_config_store_are_refused_whatever_their_kv_paths() {
    let (first_dir, second_dir) = (temp_dir(), temp_dir());
    let store = first_dir.join("shared.properties");
    let mut cmd = namesrv_command(&first_dir);
    cmd.env("NAMESRV_CONFIG_STORE_PATH", &store).args(["--listen", "127.0.0.1:0"]);
    let mut first = Proc::spawn(cmd);
    first.addr();

    let mut cmd = namesrv_command(&second_dir);
    cmd.env("NAMESRV_CONFIG_STORE_PATH", &store).args(["--listen", "127.0.0.1:0"]);
    let (status, _, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(1), "stderr:\n{stderr}");
    let named = format!("config_store_path {} is in use by another namesrv (pid {}", store.display(), first.pid());
    assert!(stderr.contains(&named), "{named} in\n{stderr}");
    assert!(stderr.contains("its own kv_config_path and config_store_path"), "{stderr}");
    assert!(!stderr.contains("listening"), "it never served:\n{stderr}");
}
