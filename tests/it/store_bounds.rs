//! What peers can make the server hold, counted at its real cost: KV entries with their
//! overhead in memory, the ORDER_TOPIC_CONFIG table every REGISTER_BROKER reply carries, and
//! distinct topics across every broker. Past each bound a peer gets SYSTEM_ERROR with a remark
//! naming the setting, and nothing of the refused request is applied.

use crate::common::kv_config::{put_kv, put_ok, SUCCESS, SYSTEM_ERROR};
use crate::common::requests::request;
use crate::common::*;

const ORDER_TOPIC_CONFIG: &str = "ORDER_TOPIC_CONFIG";

#[test]
fn order_topic_config_past_its_default_bound_is_refused_and_never_reaches_register_replies() {
    let server = TestServer::start();
    let mut client = server.client();
    let big = "x".repeat(600 * 1024);
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicA", &big);
    let resp = put_kv(&mut client, ORDER_TOPIC_CONFIG, "TopicB", &big);
    assert_eq!(resp.code, SYSTEM_ERROR);
    let remark = resp.remark.unwrap_or_default();
    assert!(
        remark.contains("ORDER_TOPIC_CONFIG full") && remark.contains("max 1048576 (kv_max_order_topic_config_bytes)"),
        "{remark}"
    );
    put_ok(&mut client, "elsewhere", "TopicB", &big);
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicA", "broker-a:4");

    let broker = Broker::new("DefaultCluster", "broker-a", 0, "127.0.0.1:10911").topics(&["TopicA", "TopicX"]);
    let reply = client.register(&broker);
    assert_eq!(reply.code, SUCCESS);
    assert_eq!(reply.body.as_deref(), Some(&br#"{"table":{"TopicA":"broker-a:4"}}"#[..]), "only what was accepted");
}

#[test]
fn tiny_kv_entries_count_their_overhead_against_the_store_bound() {
    let server = TestServer::with(|s| {
        s.limits.kv_max_store_bytes = 64 * 1024;
        s.limits.kv_max_value_bytes = 1024;
    });
    let mut client = server.client();
    let mut stored = 0;
    let refused = loop {
        let resp = put_kv(&mut client, "tiny", &format!("k{stored:04}"), "v");
        if resp.code != SUCCESS || stored == 2_000 {
            break resp;
        }
        stored += 1;
    };
    assert_eq!(refused.code, SYSTEM_ERROR, "2,000 entries of 6 bytes fit 64 KiB only if counted by their bytes");
    let remark = refused.remark.unwrap_or_default();
    assert!(
        remark.contains("kv store full") && remark.contains("(kv_max_store_bytes; each entry counts 160 bytes"),
        "{remark}"
    );
    // 4 + 160 for the namespace, then 6 + 160 per entry.
    assert_eq!(stored, (64 * 1024 - 164) / 166, "stored {stored} entries");
}

#[test]
fn a_registration_past_the_global_topic_bound_is_refused_whole() {
    let server = TestServer::with(|s| s.limits.max_topics_total = 5);
    let mut client = server.client();
    let a = Broker::new("c", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2", "T3"]);
    let b = Broker::new("c", "broker-b", 0, "127.0.0.1:10912").topics(&["T3", "T4", "T5"]);
    assert_eq!(client.register(&a).code, SUCCESS);
    assert_eq!(client.register(&b).code, SUCCESS, "five distinct topics: at the bound");

    let c = Broker::new("c", "broker-c", 0, "127.0.0.1:10913").topics(&["T1", "T6"]);
    let resp = client.register(&c);
    assert_eq!(resp.code, SYSTEM_ERROR);
    let remark = resp.remark.unwrap_or_default();
    assert_eq!(remark, "too many topics in the route tables: 6 with this registration, max 5 (max_topics_total)");
    assert_eq!(client.route("T6").err(), Some(17), "TOPIC_NOT_EXIST: nothing of it applied");
    let route = client.route("T1").unwrap();
    assert!(!route.to_string().contains("broker-c"), "broker-c was not registered: {route}");
    let info = client.cluster_info();
    assert!(!info.to_string().contains("broker-c"), "{info}");

    let topic = |name: &str| {
        let body = r#"{"brokerDatas":[],"queueDatas":[{"brokerName":"broker-a","readQueueNums":4,"writeQueueNums":4,"perm":6,"topicSysFlag":0}]}"#;
        request(217, &[("topic", name)]).with_body(body.as_bytes().to_vec())
    };
    let resp = client.call(topic("T7"));
    assert_eq!(
        (resp.code, resp.remark.as_deref()),
        (SYSTEM_ERROR, Some("too many topics in the route tables: 6 with this registration, max 5 (max_topics_total)"))
    );
    assert_eq!(client.route("T7").err(), Some(17), "REGISTER_TOPIC_IN_NAMESRV past the bound stores nothing");
    assert_eq!(client.call(topic("T4")).code, SUCCESS, "a held topic is never refused");

    assert_eq!(client.register(&a.bump()).code, SUCCESS, "re-registering held topics is never refused");
    let c = Broker::new("c", "broker-c", 0, "127.0.0.1:10913").topics(&["T1", "T5"]);
    assert_eq!(client.register(&c).code, SUCCESS, "nor is a broker with only held topics");
}

#[test]
fn queue_entries_across_broker_names_are_bounded_and_held_brokers_can_still_re_register() {
    let server = TestServer::with(|s| s.limits.max_queue_entries_total = 5_000);
    let topics: Vec<String> = (0..1_000).map(|t| format!("Shared{t:04}")).collect();
    let fan = |i: usize| Broker::new("C", &format!("fan-{i}"), 0, &format!("10.7.0.{i}:10911")).topics(&topics);
    let mut client = server.client();
    for i in 0..5 {
        assert_eq!(client.register(&fan(i)).code, SUCCESS, "fan-{i}: 1,000 entries each, 5,000 in all");
    }
    let refused = client.register(&fan(5));
    assert_eq!(refused.code, SYSTEM_ERROR, "the same topics under a sixth name cost 1,000 entries more");
    let remark = refused.remark.unwrap_or_default();
    assert!(remark.contains("too many queue entries") && remark.contains("(max_queue_entries_total)"), "{remark}");
    assert!(
        client.cluster_info().to_string().contains("fan-4") && !client.cluster_info().to_string().contains("fan-5")
    );
    assert_eq!(client.register(&fan(0).bump()).code, SUCCESS, "what a broker holds never counts against it");
}
