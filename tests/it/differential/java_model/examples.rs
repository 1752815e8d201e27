//! The model on its own against hand-worked Java cases (the `RouteInfoManager*Test` suites and
//! the unregister/registerTopic/getSystemTopicList rules), and against each named exception.

use std::collections::BTreeSet;

use super::register::{RegisterCall, TopicConfig};
use super::unregister::BrokerIdentity;
use super::{Body, Config, Dv, Exceptions, Model, QueueData};

const JAVA: Exceptions = Exceptions::NONE;

fn reg(cluster: &str, name: &str, id: i64, addr: &str, topics: &[&str]) -> RegisterCall {
    let queue = QueueData { read: 8, write: 8, perm: 6, sys_flag: 0 };
    RegisterCall {
        cluster: cluster.into(),
        addr: addr.into(),
        name: name.into(),
        id,
        ha: format!("{addr}-ha"),
        zone: None,
        acting_master: Some(true),
        dv: Dv { counter: 1, state_version: 0, timestamp: 1 },
        topics: topics.iter().map(|t| TopicConfig { name: (*t).into(), queue }).collect(),
        filter_servers: None,
    }
}

fn who(cluster: &str, name: &str, id: i64, addr: &str) -> BrokerIdentity {
    BrokerIdentity { cluster: cluster.into(), addr: addr.into(), name: name.into(), id }
}

fn system_topics(model: &Model) -> BTreeSet<String> {
    match model.system_topics().body {
        Body::Topics { must, .. } => must,
        other => panic!("{other:?}"),
    }
}

#[test]
fn first_registration_with_one_topic_is_refused_but_leaves_an_empty_group() {
    let mut m = Model::new(Config::default(), JAVA);
    assert_eq!(m.register(&reg("c", "b", 0, "a:1", &["T"]), 1).code, 1);
    assert!(m.tables.brokers["b"].addrs.is_empty());
    assert_eq!(m.register(&reg("c", "b", 0, "a:1", &["T", "U"]), 1).code, 0);
}

#[test]
fn unregister_naming_the_wrong_cluster_leaves_the_live_entry_and_a_dangling_name() {
    let mut m = Model::new(Config::default(), JAVA);
    m.register(&reg("c1", "b", 0, "a:1", &["T", "U"]), 1);
    m.unregister(&who("c2", "b", 0, "a:1"), 1);
    assert!(m.tables.brokers.is_empty() && m.tables.topics.is_empty());
    assert!(m.tables.live.contains_key(&("c1".into(), "a:1".into())));
    assert!(system_topics(&m).contains("b"), "the name stays in c1's set");

    let mut m = Model::new(Config::default(), Exceptions { orphan_live_dropped: true, ..JAVA });
    m.register(&reg("c1", "b", 0, "a:1", &["T", "U"]), 1);
    m.unregister(&who("c2", "b", 0, "a:1"), 1);
    assert!(m.tables.live.is_empty());
}

#[test]
fn unregister_naming_another_group_keeps_the_address_unless_removal_is_complete() {
    for (exceptions, kept) in [(JAVA, true), (Exceptions { complete_removal: true, ..JAVA }, false)] {
        let mut m = Model::new(Config::default(), exceptions);
        m.register(&reg("c", "b1", 0, "a:1", &["T", "U"]), 1);
        m.register(&reg("c", "b2", 0, "a:2", &["T", "U"]), 2);
        m.unregister(&who("c", "b2", 0, "a:1"), 1);
        assert!(!m.tables.live.contains_key(&("c".into(), "a:1".into())));
        assert_eq!(m.tables.brokers.contains_key("b1"), kept);
    }
}

#[test]
fn acting_master_group_losing_its_master_is_read_only_and_routed_to_its_slave() {
    let config = Config { support_acting_master: true, ..Config::default() };
    let mut m = Model::new(config, JAVA);
    m.register(&reg("c", "b", 0, "a:0", &["T", "U"]), 1);
    m.register(&reg("c", "b", 1, "a:1", &["T", "U"]), 2);
    m.unregister(&who("c", "b", 0, "a:0"), 1);
    assert_eq!(m.tables.topics["T"]["b"].perm, 4);
    let Body::Route { route, .. } = m.route("T", None).body else { panic!("no route") };
    assert_eq!(route["brokerDatas"][0]["brokerAddrs"], serde_json::json!({"0": "a:1"}));
}

#[test]
fn register_topic_stores_nothing_new_past_an_unknown_broker_but_updates_an_existing_topic() {
    let mut m = Model::new(Config::default(), JAVA);
    m.register(&reg("c", "b", 0, "a:1", &["T", "U"]), 1);
    let q = QueueData { read: 1, write: 1, perm: 4, sys_flag: 0 };
    m.register_topic("N", &[("b".into(), q), ("x".into(), q)]);
    assert!(!m.tables.topics.contains_key("N"));
    m.register_topic("T", &[("b".into(), q), ("x".into(), q)]);
    assert_eq!(m.tables.topics["T"]["b"], q);
}

#[test]
fn close_removes_the_first_or_every_broker_of_the_connection() {
    for (exceptions, left) in [(JAVA, 1), (Exceptions { close_removes_all: true, ..JAVA }, 0)] {
        let mut m = Model::new(Config::default(), exceptions);
        m.register(&reg("c", "b1", 0, "a:1", &["T", "U"]), 7);
        m.register(&reg("c", "b2", 0, "a:2", &["T", "U"]), 7);
        m.connection_closed(7);
        assert_eq!(m.tables.brokers.len(), left);
    }
}

#[test]
fn a_second_name_at_a_live_address_first_unregisters_the_first() {
    for (exceptions, both) in [(JAVA, true), (Exceptions { one_broker_per_address: true, ..JAVA }, false)] {
        let mut m = Model::new(Config::default(), exceptions);
        m.register(&reg("c", "b1", 0, "a:1", &["T", "U"]), 1);
        m.register(&reg("c", "b2", 0, "a:1", &["T", "U"]), 1);
        assert_eq!(m.tables.brokers.contains_key("b1"), both);
        assert_eq!(m.tables.topics["T"].len(), if both { 2 } else { 1 });
    }
}

#[test]
fn system_topic_broker_address_is_the_first_group_by_name_at_its_lowest_id() {
    let mut m = Model::new(Config::default(), Exceptions::ALL);
    m.register(&reg("c", "b2", 0, "a:20", &["T", "U"]), 1);
    m.register(&reg("c", "b1", 2, "a:12", &["T", "U"]), 1);
    m.register(&reg("c", "b1", 1, "a:11", &[]), 1);
    let Body::Topics { broker_addr, must, .. } = m.system_topics().body else { panic!() };
    assert_eq!(broker_addr.as_deref(), Some("a:11"));
    assert_eq!(must, ["b1", "b2", "c"].map(String::from).into());
}

#[test]
fn closing_a_connection_carrying_a_group_under_two_clusters_has_two_outcomes() {
    let mut m = Model::new(Config::default(), Exceptions { close_removes_all: true, ..JAVA });
    m.register(&reg("c2", "b", 1, "a:1", &[]), 7);
    m.register(&reg("c1", "b", 0, "a:0", &["T", "U"]), 7);
    let outcomes = m.close_outcomes(7);
    assert_eq!(outcomes.len(), 2, "the dangling name stays in c1's or in c2's set");
    assert!(outcomes.iter().all(|o| o.tables.brokers.is_empty()));
}
