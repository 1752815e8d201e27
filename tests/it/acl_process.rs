//! Access control as an operator sees it, on the real binary: the warning per refusal and its
//! rate limit, reloading the accounts file (on change, on SIGHUP, a bad file kept out and
//! logged), start-up and `--check-config` with a bad file, and secrets kept out of every output.

use std::path::Path;
use std::time::Duration;

use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::requests::request;
use crate::common::security::{signed, write_accounts, ACCOUNTS};
use crate::common::*;
use namesrv::protocol::RemotingCommand;

const NO_PERMISSION: i32 = 16;
const SECRETS: [&str; 4] = ["ops-secret-1", "broker-a-secret", "any-broker-secret", "app-secret"];

/// The binary with access control on (`protect`), its accounts in `dir`, polling every `poll_ms`.
fn acl_command(dir: &Path, protect: &str, poll_ms: u64) -> std::process::Command {
    let accounts = write_accounts(dir, ACCOUNTS);
    let mut cmd = namesrv_command(dir);
    cmd.args(["--listen", "127.0.0.1:0"])
        .env("NAMESRV_ACL_ENABLED", "true")
        .env("NAMESRV_ACL_ACCOUNTS_FILE", &accounts)
        .env("NAMESRV_ACL_PROTECT", protect)
        .env("NAMESRV_SECURITY_RELOAD_INTERVAL_MS", poll_ms.to_string());
    cmd
}

fn put() -> RemotingCommand {
    request(100, &[("namespace", "ns"), ("key", "k"), ("value", "v")])
}

#[test]
fn refusals_are_warned_with_peer_and_access_key_at_most_twenty_per_window() {
    let dir = temp_dir();
    let mut proc = Proc::spawn(acl_command(&dir, "admin", 2000));
    let mut client = Client::connect(proc.addr());
    let peer = client.local_addr().to_string();
    let resp = client.call(signed(put(), "ops", "wrong-secret"));
    assert_eq!(resp.code, NO_PERMISSION);
    let line = proc.wait_for_line(&["WARN", "request refused by access control"]);
    for part in [
        peer.as_str(),
        "access_key=ops",
        "code=100",
        "signature refused for AccessKey ops (unknown key or wrong secret)",
    ] {
        assert!(line.contains(part), "{part:?} missing from {line}");
    }
    for _ in 0..99 {
        assert_eq!(client.call(put()).code, NO_PERMISSION);
    }
    assert_eq!(client.call(RemotingCommand::request(106, None)).code, 0, "the server keeps serving");
    let warned = || proc.stderr().lines().filter(|l| l.contains("request refused by access control")).count();
    // The lines come through the child's stderr pipe and a reader thread: wait for them, then a
    // little longer to see that no more follow.
    eventually(Duration::from_secs(3), || warned() >= 20);
    std::thread::sleep(Duration::from_millis(200));
    let (warned, stderr) = (warned(), proc.stderr());
    assert_eq!(warned, 20, "100 refusals within one 10 s window log 20 lines:\n{stderr}");
    assert!(SECRETS.iter().all(|s| !stderr.contains(s)), "no secret in the log:\n{stderr}");
}

#[test]
fn a_bad_accounts_file_is_logged_and_the_accounts_in_force_stay() {
    let dir = temp_dir();
    let mut proc = Proc::spawn(acl_command(&dir, "admin", 50));
    let mut client = Client::connect(proc.addr());
    write_accounts(&dir, "[[accounts]]\naccess_key = \"x\"\nsecret_key = \"hunter2\"\nrole = \"superuser\"\n");
    let line = proc.wait_for_line(&["ERROR", "accounts file not reloaded"]);
    assert!(line.contains("unknown role \"superuser\"") && line.contains("accounts.toml"), "{line}");
    assert!(!proc.stderr().contains("hunter2"));
    assert_eq!(client.call(signed(put(), "ops", "ops-secret-1")).code, 0, "the previous accounts stay in force");
    write_accounts(&dir, "[[accounts]]\naccess_key = \"x\"\nsecret_key = \"y\"\nrole = \"admin\"\n");
    proc.wait_for_line(&["INFO", "accounts reloaded", "accounts=1"]);
    assert_eq!(client.call(signed(put(), "ops", "ops-secret-1")).code, NO_PERMISSION);
    assert_eq!(client.call(signed(put(), "x", "y")).code, 0);
}

#[test]
fn sighup_rereads_the_accounts_file_when_polling_is_off() {
    let dir = temp_dir();
    let mut proc = Proc::spawn(acl_command(&dir, "admin", 0));
    let mut client = Client::connect(proc.addr());
    write_accounts(&dir, "[[accounts]]\naccess_key = \"new\"\nsecret_key = \"s\"\nrole = \"admin\"\n");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(client.call(signed(put(), "new", "s")).code, NO_PERMISSION, "not polled");
    proc.hangup();
    proc.wait_for_line(&["accounts reloaded", "requested=true"]);
    assert_eq!(client.call(signed(put(), "new", "s")).code, 0);
    assert!(proc.is_running());
}

#[test]
fn start_up_and_check_config_fail_on_a_bad_accounts_file_naming_it() {
    let dir = temp_dir();
    let mut cmd = acl_command(&dir, "all", 2000);
    write_accounts(
        &dir,
        "[[accounts]]\naccess_key = \"a\"\nsecret_key = \"s\"\nrole = \"admin\"\nallow = [\"10.0.0.0/40\"]\n",
    );
    let (status, _, stderr) = run_to_exit({
        cmd.arg("--check-config");
        cmd
    });
    assert!(!status.success());
    assert!(stderr.contains("accounts.toml, account 1") && stderr.contains("10.0.0.0/40"), "{stderr}");
    let mut serve = namesrv_command(&dir);
    serve
        .args(["--listen", "127.0.0.1:0"])
        .env("NAMESRV_ACL_ENABLED", "true")
        .env("NAMESRV_ACL_ACCOUNTS_FILE", dir.join("accounts.toml"));
    let (status, _, stderr) = run_to_exit(serve);
    assert!(!status.success() && stderr.contains("accounts.toml, account 1"), "{stderr}");
    let mut missing = namesrv_command(&dir);
    missing.args(["--listen", "127.0.0.1:0"]).env("NAMESRV_ACL_ENABLED", "true");
    let (status, _, stderr) = run_to_exit(missing);
    assert_eq!(status.code(), Some(2), "a settings error: {stderr}");
    assert!(stderr.contains("acl_accounts_file"), "{stderr}");
}

#[test]
fn secrets_appear_in_no_output_an_operator_sees() {
    let dir = temp_dir();
    let mut cmd = acl_command(&dir, "all", 2000);
    cmd.env("NAMESRV_HTTP_LISTEN", "127.0.0.1:0");
    let mut check = acl_command(&dir, "all", 2000);
    check.arg("--check-config");
    let (status, stdout, _) = run_to_exit(check);
    assert!(status.success() && stdout.contains("4 accounts"), "{stdout}");
    let mut print = acl_command(&dir, "all", 2000);
    print.arg("-p");
    let (status, stdout, _) = run_to_exit(print);
    assert!(status.success() && stdout.contains("acl_protect = \"all\""), "{stdout}");
    assert!(SECRETS.iter().all(|s| !stdout.contains(s)), "{stdout}");
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    let config = client.call(signed(RemotingCommand::request(319, None), "ops", "ops-secret-1"));
    let text = String::from_utf8(config.body.unwrap().to_vec()).unwrap();
    assert!(text.contains("acl_enabled=true"), "{text}");
    assert_eq!(client.call(signed(put(), "app", "wrong")).code, NO_PERMISSION);
    let all = format!("{text}{}{}", proc.stderr(), proc.stdout());
    assert!(SECRETS.iter().all(|s| !all.contains(s)), "{all}");
}

#[test]
fn a_brokers_access_key_binding_survives_a_restart() {
    let dir = temp_dir();
    let mut first = Proc::spawn(acl_command(&dir, "broker", 2000));
    let broker_a = Broker::new("C", "broker-a", 0, "127.0.0.1:10911").topics(&["TA1", "TA2"]);
    let mut conn = Client::connect(first.addr());
    assert_eq!(conn.call(signed(broker_a.register_request(), "broker-a-key", "broker-a-secret")).code, 0);
    first.terminate();
    assert!(first.wait(Duration::from_secs(10)).success());
    drop(conn);

    let mut second = Proc::spawn(acl_command(&dir, "broker", 2000));
    let mut client = Client::connect(second.addr());
    assert!(client.route("TA1").is_ok(), "loaded from the snapshot:\n{}", second.stderr());
    let taker = Broker::new("C", "broker-x", 0, "127.0.0.1:10911").topics(&["TX1", "TX2"]);
    let taken = client.call(signed(taker.register_request(), "any-broker-key", "any-broker-secret"));
    assert_eq!(taken.code, NO_PERMISSION, "another account cannot take broker-a's address: {:?}", taken.remark);
    let back = client.call(signed(broker_a.register_request(), "broker-a-key", "broker-a-secret"));
    assert_eq!(back.code, 0, "broker-a's own registration is accepted: {:?}", back.remark);
}

#[test]
fn protecting_every_code_with_the_http_endpoint_open_to_other_hosts_is_warned_at_start() {
    let dir = temp_dir();
    let mut cmd = acl_command(&dir, "all", 2000);
    cmd.env("NAMESRV_HTTP_LISTEN", "0.0.0.0:0");
    let mut proc = Proc::spawn(cmd);
    proc.addr();
    let line = proc.wait_for_line(&["WARN", "acl_protect = all, but the HTTP endpoint answers without credentials"]);
    assert!(line.contains("/api/v1/topics"), "{line}");

    let mut cmd = acl_command(&dir, "all", 2000);
    cmd.env("NAMESRV_HTTP_LISTEN", "0.0.0.0:0").arg("--check-config");
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "a warning, not a failure:\n{stdout}\n{stderr}");
    assert!(stdout.contains("warning: http endpoint 0.0.0.0:0: acl_protect = all"), "{stdout}");
    drop(proc);

    let mut proc = Proc::spawn(acl_command(&temp_dir(), "all", 2000));
    proc.addr();
    proc.wait_for_line(&["http endpoint up"]);
    assert!(!proc.stderr().contains("answers without credentials"), "loopback is fine:\n{}", proc.stderr());
}
