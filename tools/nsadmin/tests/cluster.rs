//! `clusterList -m` (figures asked of each broker), `clusterList -i` (printed again every few
//! seconds), `topicClusterList` and `--version`, against namesrv over TCP.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use namesrv::protocol::{RemotingCommand, ResponseCode};
use namesrv_testkit::checks::version_commit;
use serde_json::Value;

/// A line's cells.
fn cells(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

/// A broker stand-in answering GET_BROKER_RUNTIME_INFO (28) with these put and get totals
/// (yesterday morning, this morning, now), and any other request with REQUEST_CODE_NOT_SUPPORTED.
fn runtime_info_broker(put: [u64; 3], get: [u64; 3]) -> String {
    let table = serde_json::json!({"table": {
        "msgPutTotalYesterdayMorning": put[0].to_string(),
        "msgPutTotalTodayMorning": put[1].to_string(),
        "msgPutTotalTodayNow": put[2].to_string(),
        "msgGetTotalYesterdayMorning": get[0].to_string(),
        "msgGetTotalTodayMorning": get[1].to_string(),
        "msgGetTotalTodayNow": get[2].to_string(),
        "brokerVersionDesc": "V5_3_1",
    }});
    let body = serde_json::to_vec(&table).expect("json");
    stand_in(move |req| {
        if req.code == 28 {
            RemotingCommand::response(ResponseCode::Success, None).with_body(body.clone())
        } else {
            RemotingCommand::response(ResponseCode::RequestCodeNotSupported, Some("stand-in".into()))
        }
    })
}

#[test]
fn cluster_list_m_shows_each_brokers_message_counts_and_marks_a_silent_one() {
    let server = TestServer::start();
    let master = runtime_info_broker([100, 250, 260], [10, 40, 45]);
    let slave = dead_addr();
    server.register(&Broker::new("C", "broker-a", 0, &master).topics(&["T1", "T2"]));
    server.register(&Broker::new("C", "broker-a", 1, &slave).topics(&["T1", "T2"]));
    let out = nsadmin(&["clusterList", "-m", "-n", &server.ns(), "--timeout-ms", "1000"]);
    let text = expect_exit(&out, 1);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("# messages put (In) and got (Out)") && lines[0].contains("GET_BROKER_RUNTIME_INFO"));
    assert!(lines[1].starts_with("#Cluster Name") && lines[1].contains("#InTotalYest"), "{text}");
    assert_eq!(cells(lines[2]), ["C", "broker-a", "0", master.as_str(), "150", "30", "10", "5"], "{text}");
    assert_eq!(cells(lines[3]), ["C", "broker-a", "1", slave.as_str(), "-", "-", "-", "-"], "{text}");
    assert!(stderr(&out).contains(&format!("broker {slave}: {slave}: cannot connect")), "{}", stderr(&out));

    let out = nsadmin(&["clusterList", "-m", "--json", "-n", &server.ns(), "--timeout-ms", "1000"]);
    assert_eq!(code(&out), 1);
    let rows: Value = serde_json::from_str(stdout(&out).trim()).expect("json");
    assert_eq!(rows[0]["addr"], master.as_str());
    assert_eq!((rows[0]["inTotalYest"].as_i64(), rows[0]["outTotalToday"].as_i64()), (Some(150), Some(5)));
    assert!(rows[1]["error"].as_str().expect("error").contains("cannot connect"), "{rows}");

    // Every broker answering: exit 0.
    let server = TestServer::start();
    server.register(&Broker::new("C", "broker-a", 0, &master).topics(&["T1", "T2"]));
    let text = expect_exit(&nsadmin(&["clusterList", "-m", "-n", &server.ns()]), 0);
    let row = text.lines().nth(2).map(cells).unwrap_or_default();
    assert_eq!(row[4..], ["150", "30", "10", "5"], "{text}");
}

#[test]
fn cluster_list_i_prints_again_every_interval_until_the_count() {
    let server = TestServer::start();
    server.register(&Broker::new("C", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
    let started = Instant::now();
    let text = expect_exit(&nsadmin(&["clusterList", "-i", "1", "--count", "3", "-n", &server.ns()]), 0);
    let elapsed = started.elapsed();
    assert_eq!(text.lines().filter(|l| l.starts_with("#Cluster Name")).count(), 3, "{text}");
    assert_eq!(text.lines().filter(|l| l.contains("127.0.0.1:10911")).count(), 3, "{text}");
    assert!(elapsed >= Duration::from_secs(2), "two one-second pauses: {elapsed:?}");
    let json = expect_exit(&nsadmin(&["clusterList", "-i", "1", "--count", "2", "--json", "-n", &server.ns()]), 0);
    assert_eq!(json.lines().count(), 2, "one JSON document a round: {json}");
    let zero = nsadmin(&["clusterList", "-i", "0", "-n", &server.ns()]);
    assert_eq!(code(&zero), 2, "clap refuses a zero interval: {}", stderr(&zero));
    let bare = nsadmin(&["clusterList", "--count", "2", "-n", &server.ns()]);
    assert_eq!(code(&bare), 2, "--count needs -i: {}", stderr(&bare));
}

#[test]
fn cluster_list_i_keeps_printing_until_interrupted() {
    let server = TestServer::start();
    let mut child = Command::new(env!("CARGO_BIN_EXE_nsadmin"))
        .args(["clusterList", "-i", "1", "-n", &server.ns()])
        .env_remove("NAMESRV_ADDR")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(child.try_wait().expect("wait").is_none(), "still printing after the first rounds");
    child.kill().expect("kill");
    let out = child.wait_with_output().expect("output");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().filter(|l| l.starts_with("#Cluster Name")).count() >= 2, "{text}");
}

#[test]
fn topic_cluster_list_names_the_clusters_of_a_topics_groups() {
    let server = TestServer::start();
    server.register(&Broker::new("Trade", "broker-a", 0, "10.0.1.1:10911").topics(&["Shared", "OnlyA"]));
    server.register(&Broker::new("Log", "broker-b", 0, "10.0.2.1:10911").topics(&["Shared", "OnlyB"]));
    let text = expect_exit(&nsadmin(&["topicClusterList", "-t", "Shared", "-n", &server.ns()]), 0);
    assert_eq!(text, "Log\nTrade\n");
    let text = expect_exit(&nsadmin(&["topicClusterList", "-t", "OnlyA", "-n", &server.ns()]), 0);
    assert_eq!(text, "Trade\n");
    let json = json_ok(&nsadmin(&["topicClusterList", "-t", "Shared", "--json", "-n", &server.ns()]));
    assert_eq!(json, serde_json::json!(["Log", "Trade"]));
    let missing = nsadmin(&["topicClusterList", "-t", "Nope", "-n", &server.ns()]);
    assert_eq!(code(&missing), 1);
    assert!(stderr(&missing).contains("TOPIC_NOT_EXIST (17)"), "{}", stderr(&missing));
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = nsadmin(&["--version"]);
    let version = expect_exit(&out, 0).trim().to_owned();
    version_commit(&version, "nsadmin", env!("CARGO_PKG_VERSION"));
}
