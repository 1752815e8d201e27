//! The write subcommands against namesrv over TCP: every NameServer of `-n` gets the write and
//! its result is printed.

mod common;

use common::*;
use serde_json::Value;

fn two_servers() -> (TestServer, TestServer, String) {
    let (a, b) = (TestServer::start(), TestServer::start());
    let list = format!("{};{}", a.ns(), b.ns());
    (a, b, list)
}

fn items(out: &std::process::Output, exit: i32) -> Vec<Value> {
    let text = expect_exit(out, exit);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not json ({e}): {text}"))
}

#[test]
fn kv_config_is_set_read_and_deleted_on_every_namesrv() {
    let (a, b, list) = two_servers();
    let put = expect_exit(&nsadmin(&["updateKvConfig", "-s", "NS", "-k", "key", "-v", "v1", "-n", &list]), 0);
    assert_eq!(put, format!("{}  OK\n{}  OK\n", a.ns(), b.ns()));
    for server in [&a, &b] {
        let answer = server.client().request(101, &[("namespace", "NS"), ("key", "key")]);
        assert_eq!(answer.ext("value"), Some("v1"), "{}", server.ns());
    }
    let got = items(&nsadmin(&["getKvConfig", "-s", "NS", "-k", "key", "--json", "-n", &list]), 0);
    assert_eq!((got[0]["result"].as_str(), got[1]["result"].as_str()), (Some("v1"), Some("v1")));
    let table = items(&nsadmin(&["getKvConfig", "-s", "NS", "--json", "-n", &list]), 0);
    assert_eq!(table[1]["result"]["table"]["key"], "v1");
    expect_exit(&nsadmin(&["deleteKvConfig", "-s", "NS", "-k", "key", "-n", &list]), 0);
    let gone = nsadmin(&["getKvConfig", "-s", "NS", "-k", "key", "-n", &list]);
    assert_eq!(code(&gone), 1);
    assert!(stderr(&gone).contains(&format!("{}: QUERY_NOT_FOUND (22)", b.ns())), "{}", stderr(&gone));
}

#[test]
fn a_write_reports_the_namesrv_it_could_not_reach_and_exits_1() {
    let a = TestServer::start();
    let dead = dead_addr();
    let out = nsadmin(&[
        "updateKvConfig",
        "-s",
        "NS",
        "-k",
        "k",
        "-v",
        "v",
        "--timeout-ms",
        "500",
        "-n",
        &format!("{};{dead}", a.ns()),
    ]);
    let text = expect_exit(&out, 1);
    assert!(text.contains(&format!("{}  OK", a.ns())), "{text}");
    assert!(text.contains(&format!("{dead}  FAILED  {dead}: cannot connect")), "{text}");
    assert_eq!(a.client().request(101, &[("namespace", "NS"), ("key", "k")]).ext("value"), Some("v"));
}

#[test]
fn namesrv_config_is_updated_everywhere_and_refusals_are_shown() {
    let (a, b, list) = two_servers();
    expect_exit(&nsadmin(&["updateNamesrvConfig", "-k", "orderMessageEnable", "-v", "true", "-n", &list]), 0);
    let configs = items(&nsadmin(&["getNamesrvConfig", "--json", "-n", &list]), 0);
    for item in &configs {
        assert_eq!(item["result"]["orderMessageEnable"], "true", "{item}");
    }
    let refused =
        items(&nsadmin(&["updateNamesrvConfig", "-k", "kvConfigPath", "-v", "/tmp/x", "--json", "-n", &list]), 1);
    assert_eq!(refused[0]["ok"], false);
    assert!(refused[1]["error"].as_str().expect("error").contains("NO_PERMISSION (16)"), "{refused:?}");
    drop((a, b));
}

#[test]
fn write_perm_is_wiped_and_added_back_with_counts() {
    let (a, b, list) = two_servers();
    for server in [&a, &b] {
        server.register(&Broker::new("C", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
    }
    let wiped = items(&nsadmin(&["wipeWritePerm", "-b", "broker-a", "--json", "-n", &list]), 0);
    assert_eq!((wiped[0]["wipeTopicCount"].as_i64(), wiped[1]["wipeTopicCount"].as_i64()), (Some(2), Some(2)));
    let route = json_ok(&nsadmin(&["topicRoute", "-t", "T1", "--json", "-n", &b.ns()]));
    assert_eq!(route["queueDatas"][0]["perm"], 4, "write bit wiped: {route}");
    let added = expect_exit(&nsadmin(&["addWritePerm", "-b", "broker-a", "-n", &list]), 0);
    assert_eq!(added, format!("{}  OK  addTopicCount=2\n{}  OK  addTopicCount=2\n", a.ns(), b.ns()));
    let route = json_ok(&nsadmin(&["topicRoute", "-t", "T1", "--json", "-n", &a.ns()]));
    assert_eq!(route["queueDatas"][0]["perm"], 6);
}

#[test]
fn delete_topic_removes_the_route_everywhere_or_from_one_cluster() {
    let (a, b, list) = two_servers();
    for server in [&a, &b] {
        server.register(&Broker::new("C", "broker-c", 0, "127.0.0.1:10911").topics(&["T", "U"]));
        server.register(&Broker::new("D", "broker-d", 0, "127.0.0.1:10921").topics(&["U", "V"]));
    }
    expect_exit(&nsadmin(&["deleteTopic", "-t", "T", "-n", &list]), 0);
    for server in [&a, &b] {
        assert_eq!(code(&nsadmin(&["topicRoute", "-t", "T", "-n", &server.ns()])), 1, "T gone on {}", server.ns());
    }
    expect_exit(&nsadmin(&["deleteTopic", "-t", "U", "-c", "D", "-n", &list]), 0);
    let route = json_ok(&nsadmin(&["topicRoute", "-t", "U", "--json", "-n", &b.ns()]));
    let names: Vec<&str> =
        route["queueDatas"].as_array().expect("queues").iter().filter_map(|q| q["brokerName"].as_str()).collect();
    assert_eq!(names, ["broker-c"]);
}
