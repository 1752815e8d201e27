//! What the binary logs, over real TCP: Java's boot line once listening, JSON lines when asked,
//! slow requests at WARN with their peer, and the periodic summary.

use std::time::Duration;

use crate::common::checks::assert_success;
use crate::common::process::{namesrv_command, Proc};
use crate::common::*;
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
    let start = lines.iter().find(|l| l["message"] == "starting namesrv").unwrap();
    for field in ["version", "commit", "listen", "kv_config_path", "config_store_path", "broker_timeout_ms", "tls_mode"]
    {
        assert!(!start[field].is_null(), "{field} is a field of the start line: {start}");
    }
    assert!(!stderr.contains("Settings {"), "no Debug dump of the settings:\n{stderr}");
}

#[test]
fn slow_requests_are_warned_with_their_code_and_peer_and_a_summary_is_logged() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0", "--set", "slow_request_ms=0", "--set", "log_summary_secs=1"]);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    let peer = client.local_addr().to_string();
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
    let peer = admin.local_addr().to_string();
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

// ---------------------------------------------------------------------------------------------
// Debug logging

const GET_ROUTEINFO_BY_TOPIC: i32 = 105;
const TOPIC_NOT_EXIST: i32 = 17;

fn route_query(client: &mut Client, topic: &str) {
    let resp = client.call(requests::request(GET_ROUTEINFO_BY_TOPIC, &[("topic", topic)]));
    assert_eq!(resp.code, TOPIC_NOT_EXIST);
}

fn request_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("DEBUG") && l.contains("namesrv::connection: handled")).collect()
}

#[test]
fn debug_request_lines_carry_the_route_querys_topic_and_the_response_code() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0", "--set", "log_filter=info,namesrv::connection=debug"]);
    let mut proc = Proc::spawn(cmd);
    route_query(&mut Client::connect(proc.addr()), "NoSuchTopic");
    let wanted = |l: &&str| {
        l.contains("msg=\"GET_ROUTEINFO_BY_TOPIC\"")
            && l.contains("topic=\"NoSuchTopic\"")
            && l.contains("response_code=17")
    };
    assert!(eventually(WAIT, || request_lines(&proc.stderr()).iter().any(wanted)), "{}", proc.stderr());
}

#[test]
fn debug_request_lines_are_rate_limited_and_say_how_many_were_left_out() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0", "--set", "log_filter=info,namesrv::connection=debug"]);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    let started = std::time::Instant::now();
    let (batches, batch) = (40, 50);
    for _ in 0..batches {
        for _ in 0..batch {
            client.send(&requests::request(GET_ROUTEINFO_BY_TOPIC, &[("topic", "Flood")]));
        }
        for _ in 0..batch {
            assert_eq!(client.read_frame().expect("a reply").code, TOPIC_NOT_EXIST);
        }
    }
    let windows = started.elapsed().as_secs() + 2;
    let noted =
        |stderr: &str| request_lines(stderr).iter().any(|l| l.contains("suppressed=") && !l.contains("suppressed=0"));
    // The next line written after a full window reports how many were left out.
    assert!(
        eventually(WAIT, || {
            route_query(&mut client, "After");
            noted(&proc.stderr())
        }),
        "no line says how many were left out:\n{}",
        proc.stderr()
    );
    let written = request_lines(&proc.stderr()).len() as u64;
    let limit = u64::from(namesrv::ratelog::DEBUG_LINES_PER_SECOND);
    assert!(written < batches * batch, "{written} lines for {} requests", batches * batch);
    assert!(written <= limit * (windows + WAIT.as_secs()), "{written} lines in about {windows} s");
}

#[test]
fn sighup_applies_a_new_log_filter() {
    let dir = temp_dir();
    let file = dir.join("namesrv.toml");
    let base = "bind_address = \"127.0.0.1\"\nlisten_port = 0\n";
    std::fs::write(&file, base).unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    route_query(&mut client, "Before");
    std::fs::write(&file, format!("{base}log_filter = \"info,namesrv::connection=debug\"\n")).unwrap();
    proc.hangup();
    proc.wait_for_line(&["INFO", "log filter changed", "old=info", "namesrv::connection=debug"]);
    proc.wait_for_line(&["setting reloaded", "key=log_filter"]);
    route_query(&mut client, "After");
    let after = |l: &&str| l.contains("topic=\"After\"");
    assert!(eventually(WAIT, || request_lines(&proc.stderr()).iter().any(after)), "{}", proc.stderr());
    assert!(!proc.stderr().contains("topic=\"Before\""), "info before the SIGHUP:\n{}", proc.stderr());
}
