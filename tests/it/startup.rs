//! What the real binary does at start-up with what an operator gives it: where the HTTP endpoint
//! listens when `http_listen` is not set, environment variables that are no setting,
//! `--check-config` against addresses that cannot be bound, and two servers on one state
//! directory.

use std::net::SocketAddr;
use std::process::Command;

use crate::common::http::get;
use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::temp_dir;

/// `namesrv` with its files in a fresh directory and `http_listen` left to its default.
fn namesrv_default_http() -> Command {
    let mut cmd = namesrv_command(&temp_dir());
    cmd.env_remove("NAMESRV_HTTP_LISTEN");
    cmd
}

/// The `http_addr` of the `listening` log line (`off` when the endpoint is off).
fn http_addr_of(proc: &mut Proc) -> String {
    let line = proc.wait_for_line(&["listening", "http_addr="]);
    let value = line.split("http_addr=").nth(1).unwrap_or_default();
    value.split_whitespace().next().unwrap_or_default().to_owned()
}

fn line_is(text: &str, line: &str) -> bool {
    text.lines().any(|l| l == line)
}

// ---------------------------------------------------------------------------------------------
// Where the HTTP endpoint listens

#[test]
fn the_http_endpoint_follows_the_listen_address_four_ports_up() {
    let mut cmd = namesrv_default_http();
    cmd.args(["--listen", "127.0.0.1:12000", "-p"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    assert!(line_is(&stdout, "http_listen = \"127.0.0.1:12004\""), "{stdout}");

    let mut cmd = namesrv_default_http();
    cmd.args(["--listen", "[::1]:9876", "-p", "--format", "properties"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    assert!(line_is(&stdout, "http_listen=[::1]:9880"), "{stdout}");
}

#[test]
fn an_explicit_http_listen_wins_and_empty_turns_it_off() {
    let mut cmd = namesrv_default_http();
    cmd.env("NAMESRV_HTTP_LISTEN", "127.0.0.1:7777").args(["--listen", "127.0.0.1:12000", "-p"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    assert!(line_is(&stdout, "http_listen = \"127.0.0.1:7777\""), "{stdout}");

    let mut cmd = namesrv_default_http();
    cmd.args(["--listen", "127.0.0.1:0", "--set", "http_listen="]);
    let mut proc = Proc::spawn(cmd);
    assert_eq!(http_addr_of(&mut proc), "off");
}

#[test]
fn two_servers_listening_on_loopback_each_serve_http_on_loopback() {
    let mut first = Proc::spawn({
        let mut cmd = namesrv_default_http();
        cmd.args(["--listen", "127.0.0.1:0"]);
        cmd
    });
    let mut second = Proc::spawn({
        let mut cmd = namesrv_default_http();
        cmd.args(["--listen", "127.0.0.1:0"]);
        cmd
    });
    for proc in [&mut first, &mut second] {
        let remoting = proc.addr();
        let http: SocketAddr = http_addr_of(proc).parse().expect("an address in the listening line");
        assert!(http.ip().is_loopback(), "HTTP on the remoting listener's address, not every interface: {http}");
        assert_ne!(http.port(), 0, "the ephemeral port actually bound is logged");
        assert_ne!(http.port(), remoting.port());
        assert_eq!(get(http, "/livez").status, 200);
    }
    assert!(first.is_running() && second.is_running());
}

// ---------------------------------------------------------------------------------------------
// Environment variables that are no setting

#[test]
fn a_mistyped_environment_variable_stops_start_up_and_says_what_was_meant() {
    let mut cmd = namesrv_command(&temp_dir());
    cmd.env("NAMESRV_LISTEN_PROT", "1").env("NAMESRV_ADDR", "127.0.0.1:9876").args(["--listen", "127.0.0.1:0"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(2), "a settings error; stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!stdout.contains("boot success"), "{stdout}");
    assert!(stderr.contains("environment") && stderr.contains("NAMESRV_LISTEN_PROT"), "{stderr}");
    assert!(stderr.contains("did you mean NAMESRV_LISTEN_PORT?"), "{stderr}");
    assert!(!stderr.contains("NAMESRV_ADDR"), "the clients' variable is no error: {stderr}");
}

#[test]
fn check_config_fails_on_a_mistyped_environment_variable_with_java_spelling() {
    let mut cmd = namesrv_command(&temp_dir());
    cmd.env("NAMESRV_SCANNOTACTIVEBROKERINTERVL", "700").arg("--check-config");
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!stdout.contains("configuration OK"), "{stdout}");
    assert!(stderr.contains("NAMESRV_SCANNOTACTIVEBROKERINTERVL (did you mean NAMESRV_SCAN_INTERVAL_MS?)"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// --check-config binds what the real start binds

/// `--check-config` with `args`: (exit code, stdout, stderr).
fn check_config(args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = namesrv_command(&temp_dir());
    cmd.arg("--check-config").args(args);
    let (status, stdout, stderr) = run_to_exit(cmd);
    (status.code(), stdout, stderr)
}

#[test]
fn check_config_fails_on_a_listen_port_in_use() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (code, stdout, stderr) = check_config(&["--listen", &addr]);
    assert_eq!(code, Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains(&format!("listen address {addr}")) && stderr.contains("in use"), "{stderr}");
}

#[test]
fn check_config_fails_on_a_listen_address_not_on_this_host() {
    // 192.0.2.1 (TEST-NET-1, RFC 5737) is assigned to no host.
    let (code, stdout, stderr) = check_config(&["--listen", "192.0.2.1:9876"]);
    assert_eq!(code, Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("listen address 192.0.2.1:9876"), "{stderr}");
}

#[test]
fn check_config_fails_on_an_http_address_in_use_and_passes_with_both_free() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (code, stdout, stderr) = check_config(&["--listen", "127.0.0.1:0", "--set", &format!("http_listen={addr}")]);
    assert_eq!(code, Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains(&format!("http_listen {addr}")) && stderr.contains("in use"), "{stderr}");

    let (code, stdout, stderr) = check_config(&["--listen", "127.0.0.1:0"]);
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(line_is(&stdout, "http endpoint 127.0.0.1:0: free") && line_is(&stdout, "configuration OK"), "{stdout}");
}

// ---------------------------------------------------------------------------------------------
// One server per state directory

#[test]
fn a_second_server_on_the_same_state_directory_stops_naming_the_first_ones_pid() {
    let dir = temp_dir();
    let mut first = Proc::spawn({
        let mut cmd = namesrv_command(&dir);
        cmd.args(["--listen", "127.0.0.1:0"]);
        cmd
    });
    first.addr();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let holder = format!("in use by another namesrv (pid {};", first.pid());
    assert!(stderr.contains(&holder) && stderr.contains(&dir.display().to_string()), "{stderr}");
    assert!(!stdout.contains("boot success"), "{stdout}");
    assert!(first.is_running());

    // The lock goes with its process, however it ends.
    first.kill_9();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut again = Proc::spawn(cmd);
    again.addr();
    let written = std::fs::read_to_string(dir.join("namesrv.lock")).unwrap();
    assert_eq!(written, format!("{}\n", again.pid()));
}
