//! The binary under a service manager: SIGHUP reloads, `Type=notify` readiness, `--check-config`,
//! state without `HOME`, `-p --format properties`, and the KV file's empty and corrupt cases.

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
use namesrv::protocol::RemotingCommand;

const GET_ALL_TOPIC_LIST: i32 = 206;

fn all_topic_list_remark(client: &mut Client) -> Option<String> {
    client.call(RemotingCommand::request(GET_ALL_TOPIC_LIST, None)).remark
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

// ---------------------------------------------------------------------------------------------
// SIGHUP

#[test]
fn sighup_reloads_runtime_keys_warns_about_restart_keys_and_keeps_serving() {
    let dir = temp_dir();
    let base = "bind_address = \"127.0.0.1\"\nlisten_port = 0\n";
    let file = write(&dir, "namesrv.toml", base);
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    assert_eq!(all_topic_list_remark(&mut client), None);

    write(&dir, "namesrv.toml", &format!("{base}enable_all_topic_list = false\nscan_interval_ms = 1234\n"));
    proc.hangup();
    proc.wait_for_line(&["config reloaded", "applied=1", "needs_restart=1"]);
    assert_eq!(all_topic_list_remark(&mut client).as_deref(), Some("disable"), "the runtime key applies");
    proc.wait_for_line(&["setting reloaded", "key=enable_all_topic_list", "old=true", "new=false"]);
    proc.wait_for_line(&["needs a restart", "key=scan_interval_ms", "new=1234"]);

    write(&dir, "namesrv.toml", "listen_port = \"not a port\"\n");
    proc.hangup();
    proc.wait_for_line(&["reload failed", &file.display().to_string()]);
    assert!(proc.is_running(), "a SIGHUP never ends the process");
    assert_eq!(all_topic_list_remark(&mut client).as_deref(), Some("disable"), "a failed reload changes nothing");
}

// ---------------------------------------------------------------------------------------------
// Type=notify

#[test]
fn the_service_manager_is_told_ready_once_listening_and_stopping_at_shutdown() {
    let dir = temp_dir();
    let socket_path = dir.join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.env("NOTIFY_SOCKET", &socket_path).args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let mut buf = [0u8; 256];
    let n = socket.recv(&mut buf).expect("READY=1 within 10 s");
    let message = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(message.lines().any(|l| l == "READY=1"), "{message:?}");
    let mut client = Client::connect(proc.addr());
    assert_eq!(client.call(RemotingCommand::request(106, None)).code, 0, "ready means serving");
    proc.terminate();
    let n = socket.recv(&mut buf).expect("STOPPING=1 at shutdown");
    assert_eq!(String::from_utf8_lossy(&buf[..n]), "STOPPING=1\n");
    assert!(proc.wait(Duration::from_secs(10)).success());
}

// ---------------------------------------------------------------------------------------------
// --check-config

#[test]
fn check_config_passes_a_good_configuration_without_serving() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--check-config", "--listen", "127.0.0.1:9876"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    assert!(stdout.lines().any(|l| l == "configuration OK"), "{stdout}");
    assert!(stdout.contains("listen address 127.0.0.1:9876"), "{stdout}");
    assert!(!stderr.contains("listening"), "it never served:\n{stderr}");
}

#[test]
fn check_config_fails_on_each_thing_start_up_would_fail_on() {
    let dir = temp_dir();
    let not_a_dir = write(&dir, "file", "");
    let corrupt = write(&dir, "corrupt.json", "{\"configTable\":{");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--set".into(), "no_such_key=1".into()], "no_such_key"),
        (vec!["--set".into(), "bind_address=no-such-host.invalid".into()], "does not resolve"),
        (vec!["--set".into(), format!("kv_config_path={}/kv.json", not_a_dir.display())], "not writable"),
        (vec!["--set".into(), format!("kv_config_path={}", corrupt.display())], "corrupt.json.bak"),
    ];
    for (args, expected) in cases {
        let mut cmd = namesrv_command(&dir);
        cmd.arg("--check-config").args(&args);
        let (status, stdout, stderr) = run_to_exit(cmd);
        assert_eq!(status.code(), Some(1), "{args:?}: stdout {stdout}\nstderr:\n{stderr}");
        assert!(stderr.contains(expected), "{args:?}: {expected:?} in\n{stderr}");
    }
}

// ---------------------------------------------------------------------------------------------
// State without HOME

/// The binary with an empty environment but for `vars`.
fn bare_command(vars: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_namesrv"));
    cmd.env_clear().envs(vars.iter().copied()).env("NAMESRV_HTTP_LISTEN", "127.0.0.1:0");
    cmd.current_dir(temp_dir()).arg("--config-dir").arg(temp_dir());
    cmd
}

fn printed_value(cmd: Command, key: &str) -> String {
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    let prefix = format!("{key}=");
    stdout.lines().find_map(|l| l.strip_prefix(&prefix)).unwrap_or_else(|| panic!("no {key} in\n{stdout}")).to_owned()
}

#[test]
fn without_home_state_goes_to_var_lib_namesrv_never_the_working_directory() {
    for vars in [&[][..], &[("HOME", "/")][..], &[("HOME", "")][..]] {
        let mut cmd = bare_command(vars);
        cmd.args(["-p", "--format", "properties"]);
        assert_eq!(printed_value(cmd, "kvConfigPath"), "/var/lib/namesrv/kvConfig.json", "{vars:?}");
    }
    let mut cmd = bare_command(&[("HOME", "/home/mq")]);
    cmd.args(["-p", "--format", "properties"]);
    assert_eq!(printed_value(cmd, "configStorePath"), "/home/mq/namesrv/namesrv.properties", "Java's ${{user.home}}");
}

#[test]
fn systemd_state_directory_holds_the_state_when_set() {
    let state = temp_dir();
    let state_text = state.display().to_string();
    let mut cmd = bare_command(&[("STATE_DIRECTORY", &state_text), ("HOME", "/root")]);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    crate::common::kv_config::put_ok(&mut client, "ns", "k", "v");
    assert!(state.join("kvConfig.json").exists(), "the KV file is in $STATE_DIRECTORY");
}

// ---------------------------------------------------------------------------------------------
// -p --format properties

#[test]
fn print_config_as_properties_uses_javas_names_to_diff_with_a_java_namesrv() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["-p", "--format", "properties", "--set", "rocketmq_home="]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "stderr:\n{stderr}");
    for line in ["listenPort=9876", "bindAddress=0.0.0.0", "scanNotActiveBrokerInterval=5000", "rocketmqHome="] {
        assert!(stdout.lines().any(|l| l == line), "{line} in\n{stdout}");
    }
    let (java, ours) = stdout.split_once("# namesrv settings without a Java counterpart\n").expect("both parts");
    assert!(!java.contains('_'), "Java's part has Java names only:\n{java}");
    assert!(ours.lines().any(|l| l == "max_frame_bytes=16777216"), "{ours}");
}

// ---------------------------------------------------------------------------------------------
// The KV file

#[test]
fn an_empty_kv_file_loads_as_empty_as_in_java() {
    let dir = temp_dir();
    write(&dir, "kvConfig.json", "");
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    crate::common::kv_config::put_ok(&mut client, "ns", "k", "v");
}

#[test]
fn a_corrupt_kv_file_error_points_at_the_backup_beside_it() {
    let dir = temp_dir();
    write(&dir, "kvConfig.json", "{\"configTable\":{\"ns\":");
    write(&dir, "kvConfig.json.bak", "{\"configTable\":{}}");
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let (status, _, stderr) = run_to_exit(cmd);
    assert!(!status.success());
    let bak = dir.join("kvConfig.json.bak").display().to_string();
    assert!(stderr.contains(&format!("the previous version is in {bak}")), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// systemd credentials (LoadCredential=)

#[test]
fn security_files_named_in_the_credentials_directory_load_from_it() {
    let (dir, credentials) = (temp_dir(), temp_dir());
    let accounts = crate::common::security::write_accounts(&credentials, crate::common::security::ACCOUNTS);
    let config = write(
        &dir,
        "namesrv.toml",
        "acl_enabled = true\nacl_accounts_file = \"${CREDENTIALS_DIRECTORY}/accounts.toml\"\n",
    );
    let check = |credentials_dir: Option<&Path>| {
        let mut cmd = namesrv_command(&dir);
        cmd.env_remove("CREDENTIALS_DIRECTORY").args(["--check-config", "--listen", "127.0.0.1:0", "-c"]).arg(&config);
        if let Some(c) = credentials_dir {
            cmd.env("CREDENTIALS_DIRECTORY", c);
        }
        run_to_exit(cmd)
    };
    let (status, stdout, stderr) = check(Some(&credentials));
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    assert!(stdout.contains(&format!("accounts file {}", accounts.display())), "{stdout}");
    // Outside systemd the variable is not set: start-up stops and says what to do.
    let (status, _, stderr) = check(None);
    assert!(!status.success());
    assert!(stderr.contains("acl_accounts_file") && stderr.contains("LoadCredential="), "{stderr}");
}
