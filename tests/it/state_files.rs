//! Accidents and plants in the state directory: a fresh directory, a disk that filled up mid
//! journal append and a crash after it, and files planted where the state files go (links,
//! FIFOs, devices). Start-up either serves every acknowledged change or stops with an error
//! naming the file, before the port is bound; writes never land outside the directory.

use std::path::Path;
use std::process::Command;

use crate::common::kv_config::{put_kv, put_ok, read_json, SUCCESS};
use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
use namesrv::protocol::{ExtFields, RemotingCommand};
use serde_json::json;

const GET_KV_CONFIG: i32 = 101;

fn get_value(client: &mut Client, namespace: &str, key: &str) -> Option<String> {
    let ext = ExtFields::new().with("namespace", namespace).with("key", key);
    client.call(RemotingCommand::request(GET_KV_CONFIG, Some(ext))).ext("value").map(str::to_owned)
}

fn spawn_in(dir: &Path) -> Proc {
    let mut cmd = namesrv_command(dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    Proc::spawn(cmd)
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn a_first_kv_change_of_a_mebibyte_in_a_fresh_state_directory_is_stored() {
    let mut settings = test_settings();
    let dir = temp_dir().join("state/not/created/yet");
    settings.state.kv_config_path = dir.join("kvConfig.json").display().to_string();
    let server = TestServer::with_settings(settings.clone());
    let mut client = server.client();
    let value = "v".repeat(1024 * 1024);
    let resp = put_kv(&mut client, "big", "first", &value);
    assert_eq!(resp.code, SUCCESS, "the journal's directory is created: {:?}", resp.remark);
    drop(client);
    drop(server);
    let server = TestServer::with_settings(settings);
    assert_eq!(get_value(&mut server.client(), "big", "first").map(|v| v.len()), Some(value.len()));
}

#[test]
fn a_put_after_a_crash_mid_append_survives_the_next_kill_9() {
    let dir = temp_dir();
    // A store past 1 MiB (so changes are journaled) whose journal ends in a torn line: the
    // crash came mid-append.
    let big = "b".repeat(1100 * 1024);
    std::fs::write(dir.join("kvConfig.json"), json!({"configTable": {"big": {"k": big}}}).to_string()).unwrap();
    std::fs::write(dir.join("kvConfig.json.journal"), br#"["put","crash","torn","never acknow"#).unwrap();
    let mut proc = spawn_in(&dir);
    let mut client = Client::connect(proc.addr());
    put_ok(&mut client, "crash", "after", "acknowledged");
    proc.kill_9();

    let mut proc = spawn_in(&dir);
    let mut client = Client::connect(proc.addr());
    assert_eq!(get_value(&mut client, "crash", "after").as_deref(), Some("acknowledged"));
    assert_eq!(get_value(&mut client, "crash", "torn"), None, "the torn line was never acknowledged");
    assert_eq!(get_value(&mut client, "big", "k").map(|v| v.len()), Some(big.len()));
}

#[test]
fn a_fifo_as_the_kv_file_stops_start_up_at_once_naming_it() {
    let dir = temp_dir();
    let kv = dir.join("kvConfig.json");
    mkfifo(&kv);
    let (status, _, stderr) = run_to_exit({
        let mut cmd = namesrv_command(&dir);
        cmd.args(["--listen", "127.0.0.1:0"]);
        cmd
    });
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains(&kv.display().to_string()) && stderr.contains("not a regular file (fifo)"), "{stderr}");
    assert!(!stderr.contains("listening"), "{stderr}");
}

#[test]
fn a_link_to_a_device_as_the_kv_file_stops_start_up_without_reading_it() {
    let dir = temp_dir();
    std::os::unix::fs::symlink("/dev/zero", dir.join("kvConfig.json")).unwrap();
    let (status, _, stderr) = run_to_exit({
        let mut cmd = namesrv_command(&dir);
        cmd.args(["--listen", "127.0.0.1:0"]);
        cmd
    });
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("is a symbolic link; state files are not opened through links"), "{stderr}");
}

#[test]
fn a_state_file_that_stops_start_up_does_so_before_the_port_is_bound() {
    // The port is taken: a server that binds before loading its state fails on the port; one
    // that loads first fails on the file, and never accepted a connection it could not serve.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = temp_dir();
    mkfifo(&dir.join("kvConfig.json"));
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", &taken.local_addr().unwrap().to_string()]);
    let (status, _, stderr) = run_to_exit(cmd);
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("kvConfig.json") && !stderr.contains("in use"), "the state file first:\n{stderr}");
}

#[test]
fn planted_bak_and_tmp_links_are_replaced_and_nothing_outside_the_state_directory_is_written() {
    let settings = test_settings();
    let outside = temp_dir().join("outside.txt");
    std::fs::write(&outside, "not namesrv's").unwrap();
    let kv = Path::new(&settings.state.kv_config_path).to_owned();
    std::fs::write(&kv, r#"{"configTable":{}}"#).unwrap();
    for suffix in [".bak", ".tmp"] {
        std::os::unix::fs::symlink(&outside, format!("{}{suffix}", kv.display())).unwrap();
    }
    let server = TestServer::with_settings(settings);
    let mut client = server.client();
    put_ok(&mut client, "ns", "a", "1");
    put_ok(&mut client, "ns", "b", "2");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not namesrv's");
    assert_eq!(read_json(&kv), json!({"configTable": {"ns": {"a": "1", "b": "2"}}}));
    assert_eq!(read_json(format!("{}.bak", kv.display())), json!({"configTable": {"ns": {"a": "1"}}}));
}

#[test]
fn a_fifo_as_the_runtime_updates_file_stops_start_up_at_once_naming_it() {
    let dir = temp_dir();
    let store = dir.join("namesrv.properties");
    mkfifo(&store);
    let (status, _, stderr) = run_to_exit({
        let mut cmd = namesrv_command(&dir);
        cmd.args(["--listen", "127.0.0.1:0"]);
        cmd
    });
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains(&store.display().to_string()) && stderr.contains("is not a regular file"), "{stderr}");
}

#[test]
fn unlinking_or_replacing_the_lock_file_does_not_let_a_second_server_run() {
    let dir = temp_dir();
    let mut first = spawn_in(&dir);
    first.addr();
    std::fs::remove_file(dir.join("namesrv.lock")).unwrap();
    let mut second = namesrv_command(&dir);
    second.args(["--listen", "127.0.0.1:0"]);
    let (status, stdout, stderr) = run_to_exit(second);
    assert_eq!(status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("in use by another namesrv"), "{stderr}");
    assert!(first.is_running());
    first.terminate();
    first.wait(std::time::Duration::from_secs(10));

    // A lock file planted as a link to a file elsewhere is replaced, never written through.
    let outside = temp_dir().join("keep.txt");
    std::fs::write(&outside, "keep").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("namesrv.lock")).unwrap();
    let mut third = spawn_in(&dir);
    third.addr();
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    assert_eq!(std::fs::read_to_string(dir.join("namesrv.lock")).unwrap(), format!("{}\n", third.pid()));
}
