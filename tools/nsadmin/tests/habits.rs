//! Where mqadmin habits lead: `clusterList -c`, `topicRoute -l`, `updateOrderConf`, a mistyped
//! broker group that must not "succeed", and `--json` errors that still print JSON.

mod common;

use common::*;
use serde_json::Value;

#[test]
fn cluster_list_c_shows_one_cluster_and_names_an_unknown_one() {
    let server = TestServer::start();
    server.register(&Broker::new("Trade", "broker-a", 0, "10.0.1.1:10911").topics(&["T1", "T2"]));
    server.register(&Broker::new("Log", "broker-b", 0, "10.0.2.1:10911").topics(&["L1", "L2"]));
    let text = expect_exit(&nsadmin(&["clusterList", "-c", "Trade", "-n", &server.ns()]), 0);
    assert!(text.contains("broker-a") && !text.contains("broker-b"), "{text}");
    let nope = nsadmin(&["clusterList", "-c", "Nope", "-n", &server.ns()]);
    assert_eq!(code(&nope), 1);
    assert!(stderr(&nope).contains("no cluster \"Nope\""), "{}", stderr(&nope));
}

#[test]
fn topic_route_l_lists_one_row_per_broker_address() {
    let server = TestServer::start();
    server.register(&Broker::new("C", "broker-a", 0, "10.0.1.1:10911").topics(&["T1", "T2"]));
    server.register(&Broker::new("C", "broker-a", 1, "10.0.1.2:10911").topics(&["T1", "T2"]));
    let text = expect_exit(&nsadmin(&["topicRoute", "-t", "T1", "-l", "-n", &server.ns()]), 0);
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("broker-a")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows.iter().all(|r| r.contains("RW-")), "{text}");
    assert!(text.contains("10.0.1.1:10911") && text.contains("10.0.1.2:10911"), "{text}");
}

#[test]
fn update_order_conf_puts_gets_and_deletes_on_every_namesrv() {
    let (a, b) = (TestServer::start(), TestServer::start());
    let list = format!("{};{}", a.ns(), b.ns());
    let put = nsadmin(&["updateOrderConf", "-t", "Orders", "-m", "put", "-v", "broker-a:4;broker-b:4", "-n", &list]);
    assert_eq!(expect_exit(&put, 0).matches("  OK").count(), 2);
    let got = expect_exit(&nsadmin(&["updateOrderConf", "-t", "Orders", "-m", "get", "-n", &list]), 0);
    assert_eq!(got.matches("broker-a:4;broker-b:4").count(), 2, "{got}");
    let kv = expect_exit(&nsadmin(&["getKvConfig", "-s", "ORDER_TOPIC_CONFIG", "-k", "Orders", "-n", &b.ns()]), 0);
    assert!(kv.contains("broker-a:4;broker-b:4"), "{kv}");
    expect_exit(&nsadmin(&["updateOrderConf", "-t", "Orders", "-m", "delete", "-n", &list]), 0);
    let gone = nsadmin(&["updateOrderConf", "-t", "Orders", "-m", "get", "-n", &list]);
    assert_eq!(code(&gone), 1, "{}", stdout(&gone));
    let bad = nsadmin(&["updateOrderConf", "-t", "Orders", "-m", "put", "-n", &list]);
    assert_eq!(code(&bad), 1);
    assert!(stderr(&bad).contains("needs -v"), "{}", stderr(&bad));
}

#[test]
fn a_mistyped_broker_group_is_an_error_not_zero_topics() {
    let (a, b) = (TestServer::start(), TestServer::start());
    a.register(&Broker::new("C", "broker-a", 0, "10.0.1.1:10911").topics(&["T1", "T2"]));
    let list = format!("{};{}", a.ns(), b.ns());
    let out = nsadmin(&["wipeWritePerm", "-b", "broker-zz", "-n", &list]);
    let text = expect_exit(&out, 1);
    assert_eq!(text.matches("unknown broker group \"broker-zz\"").count(), 2, "{text}");
    // Known on one NameServer only: written there, an error for the other.
    let out = nsadmin(&["wipeWritePerm", "-b", "broker-a", "-n", &list]);
    let text = expect_exit(&out, 1);
    assert!(text.contains(&format!("{}  OK  wipeTopicCount=2", a.ns())), "{text}");
    assert!(text.contains(&format!("{}  FAILED", b.ns())) && text.contains("unknown broker group"), "{text}");
}

#[test]
fn json_errors_are_printed_as_json() {
    let server = TestServer::start();
    let out = nsadmin(&["topicRoute", "-t", "Nope", "--json", "-n", &server.ns()]);
    let text = expect_exit(&out, 1);
    let error: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not json ({e}): {text:?}"));
    assert!(error["error"].as_str().is_some_and(|e| e.contains("TOPIC_NOT_EXIST")), "{error}");
    assert_eq!(error["namesrv"], server.ns().as_str());
    let out = nsadmin(&["diff", "--json", "-n", &server.ns()]);
    let text = expect_exit(&out, 1);
    let error: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not json ({e}): {text:?}"));
    assert!(error["error"].as_str().is_some_and(|e| e.contains("two or more")), "{error}");
}
