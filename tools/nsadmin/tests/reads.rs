//! The read subcommands against namesrv over TCP.

mod common;

use common::*;

/// A server with a two-member group `broker-a` and a group `broker-b` in cluster C.
fn populated() -> TestServer {
    let server = TestServer::start();
    server.register(&Broker::new("C", "broker-a", 0, "127.0.0.1:10911").topics(&["TopicA", "Shared"]));
    server.register(&Broker::new("C", "broker-a", 1, "127.0.0.1:10921").topics(&["TopicA", "Shared"]));
    server.register(&Broker::new("C", "broker-b", 0, "127.0.0.1:10931").topics(&["Shared", "TopicB"]));
    server
}

#[test]
fn cluster_list_prints_every_member_as_a_table_and_as_json() {
    let server = populated();
    let text = expect_exit(&nsadmin(&["clusterList", "-n", &server.ns()]), 0);
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows[0].starts_with("#Cluster Name"), "{text}");
    assert_eq!(rows.len(), 4, "{text}");
    assert!(rows[2].contains("broker-a") && rows[2].contains(" 1 ") && rows[2].contains("127.0.0.1:10921"), "{text}");
    let info = json_ok(&nsadmin(&["clusterList", "--json", "-n", &server.ns()]));
    assert_eq!(info["brokerAddrTable"]["broker-a"]["brokerAddrs"]["1"], "127.0.0.1:10921");
    assert_eq!(info["clusterAddrTable"]["C"], serde_json::json!(["broker-a", "broker-b"]));
}

#[test]
fn topic_route_shows_broker_and_queue_datas() {
    let server = populated();
    let text = expect_exit(&nsadmin(&["topicRoute", "-t", "Shared", "-n", &server.ns()]), 0);
    assert!(text.contains("Queue datas:") && text.contains("RW- (6)"), "{text}");
    assert!(text.contains("127.0.0.1:10931"), "{text}");
    let route = json_ok(&nsadmin(&["topicRoute", "-t", "Shared", "--json", "-n", &server.ns()]));
    let queues = route["queueDatas"].as_array().expect("queueDatas");
    assert_eq!(queues.len(), 2);
    assert_eq!(queues[0]["writeQueueNums"], 8);
    assert_eq!(route["brokerDatas"][0]["brokerAddrs"]["0"], "127.0.0.1:10911");
}

#[test]
fn a_missing_topic_fails_naming_the_namesrv_and_the_code() {
    let server = populated();
    let out = nsadmin(&["topicRoute", "-t", "Nope", "-n", &server.ns()]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(err.contains(&server.ns()) && err.contains("TOPIC_NOT_EXIST (17)"), "{err}");
}

#[test]
fn topic_list_lists_all_topics_or_one_clusters() {
    let server = populated();
    server.register(&Broker::new("D", "broker-d", 0, "127.0.0.1:10941").topics(&["OnlyD", "OnlyD2"]));
    let all = expect_exit(&nsadmin(&["topicList", "-n", &server.ns()]), 0);
    for topic in ["TopicA", "Shared", "OnlyD"] {
        assert!(all.lines().any(|l| l == topic), "{topic} missing: {all}");
    }
    let only_c = expect_exit(&nsadmin(&["topicList", "-c", "C", "-n", &server.ns()]), 0);
    assert!(only_c.lines().any(|l| l == "Shared") && !only_c.contains("OnlyD"), "{only_c}");
    let json = json_ok(&nsadmin(&["topicList", "-c", "D", "--json", "-n", &server.ns()]));
    assert!(json["topicList"].as_array().expect("list").iter().any(|t| t == "OnlyD"), "{json}");
}

#[test]
fn broker_members_finds_the_cluster_itself() {
    let server = populated();
    let text = expect_exit(&nsadmin(&["brokerMembers", "-b", "broker-a", "-n", &server.ns()]), 0);
    assert!(text.contains("127.0.0.1:10911") && text.contains("127.0.0.1:10921"), "{text}");
    let json = json_ok(&nsadmin(&["brokerMembers", "-b", "broker-a", "-c", "C", "--json", "-n", &server.ns()]));
    assert_eq!(json["brokerMemberGroup"]["brokerAddrs"]["1"], "127.0.0.1:10921");
    let unknown = nsadmin(&["brokerMembers", "-b", "nobody", "-n", &server.ns()]);
    assert_eq!(code(&unknown), 1, "{}", stdout(&unknown));
    assert!(stderr(&unknown).contains("\"nobody\" is not listed"), "{}", stderr(&unknown));
}

#[test]
fn reads_go_to_the_first_answering_namesrv_and_errors_name_every_one() {
    let server = populated();
    let dead = dead_addr();
    let list = format!("{dead};{}", server.ns());
    let info = json_ok(&nsadmin(&["clusterList", "--json", "-n", &list]));
    assert!(info["brokerAddrTable"]["broker-b"].is_object(), "{info}");
    let other_dead = dead_addr();
    let out = nsadmin(&["clusterList", "-n", &format!("{dead};{other_dead}"), "--timeout-ms", "500"]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(err.contains("no NameServer answered") && err.contains(&dead) && err.contains(&other_dead), "{err}");
}

#[test]
fn all_reads_every_namesrv_and_marks_the_one_that_failed() {
    let (a, b) = (populated(), TestServer::start());
    let dead = dead_addr();
    let list = format!("{};{};{dead}", a.ns(), b.ns());
    let out = nsadmin(&["clusterList", "--all", "--json", "-n", &list]);
    assert_eq!(code(&out), 1, "one NameServer is down");
    let items: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("json");
    assert_eq!(items[0]["namesrv"], a.ns());
    assert!(items[0]["result"]["brokerAddrTable"]["broker-a"].is_object());
    assert_eq!(items[1]["result"]["brokerAddrTable"], serde_json::json!({}));
    assert!(items[2]["error"].as_str().expect("error").contains("cannot connect"), "{items}");
    let text = stdout(&nsadmin(&["clusterList", "--all", "-n", &format!("{};{}", a.ns(), b.ns())]));
    assert!(text.contains(&format!("== {}", a.ns())) && text.contains(&format!("== {}", b.ns())), "{text}");
}

#[test]
fn get_namesrv_config_prints_each_namesrv_settings() {
    let (a, b) = (TestServer::start(), TestServer::with(|s| s.routing.order_message_enable = true));
    let out = nsadmin(&["getNamesrvConfig", "--json", "-n", &format!("{};{}", a.ns(), b.ns())]);
    let items: serde_json::Value = serde_json::from_str(expect_exit(&out, 0).trim()).expect("json");
    assert_eq!(items[0]["result"]["orderMessageEnable"], "false");
    assert_eq!(items[1]["result"]["orderMessageEnable"], "true");
    let text = expect_exit(&nsadmin(&["getNamesrvConfig", "-n", &a.ns()]), 0);
    assert!(text.lines().any(|l| l.starts_with("orderMessageEnable") && l.ends_with("=  false")), "{text}");
}

#[test]
fn names_with_control_characters_cannot_drive_the_terminal() {
    let server = TestServer::start();
    server.register(&Broker::new("C", "broker-a", 0, "127.0.0.1:10911").topics(&["Plain", "Evil\x1b[2J\rFake"]));
    let text = expect_exit(&nsadmin(&["topicList", "-n", &server.ns()]), 0);
    assert!(!text.contains('\x1b') && !text.contains('\r'), "{text:?}");
    assert!(text.lines().any(|l| l == "Evil\\u{1b}[2J\\u{d}Fake"), "{text:?}");
    let listed = json_ok(&nsadmin(&["topicList", "--json", "-n", &server.ns()]));
    assert!(listed.to_string().contains("Evil\\u001b[2J\\rFake"), "JSON keeps the name, escaped as JSON: {listed}");
}
