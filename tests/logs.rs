//! What the binary logs, over real TCP: Java's boot line once listening, JSON lines when asked,
//! slow requests at WARN with their peer, and the periodic summary.

mod common;

use std::time::Duration;

use common::checks::assert_success;
use common::process::{namesrv_command, Proc};
use common::*;
use namesrv::protocol::RemotingCommand;

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn the_boot_line_java_users_wait_for_is_printed_once_listening() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    let line = format!("The Name Server boot success. serializeType=JSON, address 127.0.0.1:{}", addr.port());
    assert!(eventually(WAIT, || proc.stdout().lines().any(|l| l == line)), "stdout:\n{}", proc.stdout());
}

#[test]
fn json_logs_are_one_object_per_line_with_the_span_fields() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]).env("NAMESRV_LOG_FORMAT", "json");
    let mut proc = Proc::spawn(cmd);
    let addr = proc.json_addr();
    let mut conn = Client::connect(addr);
    assert_success(&conn.register(&Broker::new("c", "b1", 0, "127.0.0.1:1").topics(&["T1", "T2"])));
    assert!(eventually(WAIT, || proc.stderr().contains("broker registered")));
    let stderr = proc.stderr();
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect();
    let registered = lines.iter().find(|l| l["message"] == "broker registered").unwrap();
    assert_eq!((registered["broker"].as_str(), registered["level"].as_str()), (Some("b1"), Some("INFO")));
    assert_eq!(registered["span"]["actor"], "registry", "{registered}");
}

#[test]
fn slow_requests_are_warned_with_their_code_and_peer_and_a_summary_is_logged() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0", "--set", "slow_request_ms=0", "--set", "log_summary_secs=1"]);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    let peer = client.stream.local_addr().unwrap().to_string();
    assert_eq!(client.call(RemotingCommand::request(106, None)).code, 0);
    let slow = |l: &&str| l.contains("WARN") && l.contains("slow request") && l.contains("GET_BROKER_CLUSTER_INFO");
    assert!(eventually(WAIT, || proc.stderr().lines().any(|l| slow(&l) && l.contains(&peer))), "{}", proc.stderr());
    let summary = |l: &&str| l.contains("INFO") && l.contains("summary") && l.contains("requests_per_second=");
    assert!(eventually(WAIT, || proc.stderr().lines().any(|l| summary(&l))), "{}", proc.stderr());
}

#[test]
fn admin_writes_are_logged_at_info_with_the_peer_that_sent_them() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let mut broker = Client::connect(proc.addr());
    assert_success(&broker.register(&Broker::new("c", "b1", 0, "127.0.0.1:1").topics(&["T1", "T2"])));
    let mut admin = Client::connect(proc.addr());
    let peer = admin.stream.local_addr().unwrap().to_string();
    kv_config::put_ok(&mut admin, "NS", "k", "v");
    assert_eq!(admin.call(requests::request(205, &[("brokerName", "b1")])).code, 0);
    assert_eq!(requests::delete_topic(&mut admin, "T2", None).code, 0);
    for message in ["kv config put", "WIPE_WRITE_PERM_OF_BROKER", "topic deleted"] {
        let logged = |l: &str| l.contains("INFO") && l.contains(message) && l.contains(&peer);
        assert!(
            eventually(WAIT, || proc.stderr().lines().any(logged)),
            "no INFO {message:?} with {peer}:\n{}",
            proc.stderr()
        );
    }
}

#[test]
fn a_kv_change_that_cannot_be_made_durable_is_refused_and_logged_at_error() {
    let dir = temp_dir();
    let kv_dir = dir.join("kv");
    std::fs::create_dir_all(&kv_dir).unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]).env("NAMESRV_KV_CONFIG_PATH", kv_dir.join("kvConfig.json"));
    let mut proc = Proc::spawn(cmd);
    let mut admin = Client::connect(proc.addr());
    kv_config::put_ok(&mut admin, "NS", "first", "stored");
    // The store's directory becomes a plain file: nothing can be written under it any more.
    std::fs::remove_dir_all(&kv_dir).unwrap();
    std::fs::write(&kv_dir, b"not a directory").unwrap();
    let refused = kv_config::put_kv(&mut admin, "NS", "second", "lost");
    assert_ne!(refused.code, kv_config::SUCCESS, "a change that is not durable must not be acknowledged");
    let logged = |l: &str| l.contains("ERROR") && l.contains("kv");
    assert!(eventually(WAIT, || proc.stderr().lines().any(logged)), "no ERROR line:\n{}", proc.stderr());
}
