//! `diff` across two and three namesrv instances: planted drifts are found, an agreeing fleet
//! reports nothing, and a 10,000-topic fleet is compared in seconds.

mod common;

use std::time::Instant;

use common::*;
use serde_json::Value;

fn diff_json(list: &str, exit: i32) -> Value {
    let out = nsadmin(&["diff", "--json", "-n", list]);
    let text = expect_exit(&out, exit);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not json ({e}): {text}"))
}

fn drifts(report: &Value) -> Vec<(String, String)> {
    report["report"]["drifts"]
        .as_array()
        .expect("drifts")
        .iter()
        .map(|d| (d["kind"].as_str().unwrap_or("").to_owned(), d["subject"].as_str().unwrap_or("").to_owned()))
        .collect()
}

#[test]
fn an_agreeing_fleet_reports_no_drift_and_exits_0() {
    // Neither serves the all-topics list: diff asks them for each cluster's topics.
    let no_all_topics = |s: &mut namesrv::settings::Settings| s.routing.enable_all_topic_list = false;
    let (a, b) = (TestServer::with(no_all_topics), TestServer::with(no_all_topics));
    for server in [&a, &b] {
        server.register(&Broker::new("C", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
        server.register(&Broker::new("C", "broker-b", 0, "127.0.0.1:10921").topics(&["T2", "T3"]));
    }
    let list = format!("{};{}", a.ns(), b.ns());
    let text = expect_exit(&nsadmin(&["diff", "-n", &list]), 0);
    assert!(text.starts_with("no drift: 2 NameServers, 2 broker groups, "), "{text}");
    let report = diff_json(&list, 0);
    assert_eq!(report["agree"], true);
    assert_eq!(report["report"]["topics"], 3, "{report}");
}

#[test]
fn a_broker_on_one_namesrv_and_a_topic_deleted_on_one_are_both_found() {
    let (a, b) = (TestServer::start(), TestServer::start());
    let broker_a = Broker::new("C", "broker-a", 0, "127.0.0.1:10911").topics(&["Kept", "Deleted"]);
    a.register(&broker_a);
    b.register(&broker_a);
    // broker-b reaches only the first NameServer.
    a.register(&Broker::new("C", "broker-b", 0, "127.0.0.1:10921").topics(&["Kept", "OnlyB"]));
    // "Deleted" is deleted on the second NameServer only.
    assert_eq!(b.client().request(216, &[("topic", "Deleted")]).code, 0);
    let list = format!("{};{}", a.ns(), b.ns());

    let report = diff_json(&list, 2);
    assert_eq!(
        drifts(&report),
        [("broker_missing".to_owned(), "C/broker-b".to_owned()), ("topic_missing".to_owned(), "Deleted".to_owned())]
    );
    let seen = &report["report"]["drifts"][0]["seen"];
    assert_eq!(seen[0]["value"], "C: 0=127.0.0.1:10921");
    assert_eq!(seen[1]["value"], Value::Null);
    // Kept @ broker-b, OnlyB and the broker-b system topics follow from the missing broker.
    assert!(report["report"]["explained"].as_u64().expect("explained") >= 2, "{report}");

    let text = expect_exit(&nsadmin(&["diff", "-n", &list]), 2);
    assert!(text.contains("DRIFT broker_missing  C/broker-b"), "{text}");
    assert!(text.contains(&format!("    {}  (absent)", b.ns())), "{text}");
    assert!(text.contains("DRIFT topic_missing  Deleted"), "{text}");
    assert!(text.contains("2 drifts (1 broker_missing, 1 topic_missing)"), "{text}");
}

#[test]
fn queue_counts_permissions_and_order_configs_that_differ_are_found() {
    let (a, b) = (TestServer::start(), TestServer::start());
    let mut broker = Broker::new("C", "broker-a", 0, "127.0.0.1:10911").topics(&["Q", "P"]);
    a.register(&broker);
    broker.topics[0].2 = 4; // Q: 4 queues on the second NameServer
    broker.topics[1].1 = 4; // P: read-only on the second NameServer
    b.register(&broker);
    a.client().request(100, &[("namespace", "ORDER_TOPIC_CONFIG"), ("key", "Q"), ("value", "broker-a:8")]);
    let list = format!("{};{}", a.ns(), b.ns());
    let report = diff_json(&list, 2);
    assert_eq!(
        drifts(&report),
        [
            ("queues_differ".to_owned(), "P @ broker-a".to_owned()),
            ("queues_differ".to_owned(), "Q @ broker-a".to_owned()),
            ("order_conf_differs".to_owned(), "Q".to_owned()),
        ]
    );
    let q = &report["report"]["drifts"][1]["seen"];
    assert_eq!((q[0]["value"].as_str(), q[1]["value"].as_str()), (Some("r8 w8 RW-"), Some("r4 w4 RW-")));
}

#[test]
fn diff_needs_two_namesrvs() {
    let a = TestServer::start();
    let one = nsadmin(&["diff", "-n", &a.ns()]);
    assert_eq!(code(&one), 1);
    assert!(stderr(&one).contains("two or more"), "{}", stderr(&one));
}

/// With one NameServer down, the others are still compared (drift matters most then): the
/// drift between the two that answer is found, the dead one is reported by address, exit 2.
#[test]
fn with_one_namesrv_down_the_others_are_compared_and_the_dead_one_named() {
    let (a, b) = (TestServer::start(), TestServer::start());
    a.register(&Broker::new("DefaultCluster", "broker-a", 0, "10.0.0.1:10911").topics(&["T1", "T2"]));
    b.register(&Broker::new("DefaultCluster", "broker-a", 0, "10.0.0.1:10911").topics(&["T1", "T3"]));
    let dead = dead_addr();
    let list = format!("{};{dead};{}", a.ns(), b.ns());
    let down = nsadmin(&["diff", "--timeout-ms", "500", "-n", &list]);
    let text = expect_exit(&down, 2);
    assert!(text.contains(&format!("UNREACHABLE {dead}")), "{text}");
    assert!(text.contains("cannot connect"), "{text}");
    assert!(text.contains("2 NameServers") && text.contains("1 of 3 NameServers did not answer"), "{text}");
    let report = diff_json(&list, 2);
    assert_eq!(report["agree"], false);
    assert_eq!(report["unreachable"][0]["namesrv"], dead.as_str());
    assert!(drifts(&report).iter().any(|(_, subject)| subject.starts_with("T2")), "{report}");

    // Only the dead one differs from a fleet that agrees: still exit 2, no drift listed.
    let c = TestServer::start();
    c.register(&Broker::new("DefaultCluster", "broker-a", 0, "10.0.0.1:10911").topics(&["T1", "T2"]));
    let report = diff_json(&format!("{};{dead};{}", a.ns(), c.ns()), 2);
    assert!(drifts(&report).is_empty(), "{report}");
    assert_eq!(report["unreachable"].as_array().map(Vec::len), Some(1));
}

/// 10,000 topics served by 4 broker groups on each of 3 NameServers: 30,000 route queries.
#[test]
fn ten_thousand_topics_across_three_namesrvs_are_compared_in_seconds() {
    let topics: Vec<String> = (0..10_000).map(|i| format!("topic-{i:05}")).collect();
    let servers = [TestServer::start(), TestServer::start(), TestServer::start()];
    for server in &servers {
        for g in 0..4 {
            server.register(
                &Broker::new("C", &format!("broker-{g}"), 0, &format!("127.0.0.1:{}", 10911 + g)).topics(&topics),
            );
        }
    }
    let list = servers.iter().map(TestServer::ns).collect::<Vec<_>>().join(";");
    let started = Instant::now();
    let report = diff_json(&list, 0);
    let wall = started.elapsed();
    assert!(report["report"]["topics"].as_u64().expect("topics") >= 10_000, "{report}");
    println!(
        "diff of 10,000 topics x 3 NameServers: {} ms inside nsadmin, {} ms wall",
        report["elapsed_ms"],
        wall.as_millis()
    );
    // Generous for unoptimised test builds on 2 shared cores; the release figure is in the README.
    assert!(wall.as_secs() < 60, "diff took {wall:?}");
}
