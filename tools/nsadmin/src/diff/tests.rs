//! Unit tests of the comparison on hand-built snapshots.

use super::compare::{compare, Kind, Snapshot};
use crate::wire::{BrokerData, QueueData, TopicRoute};

fn group(cluster: &str, name: &str, addr: &str) -> BrokerData {
    BrokerData {
        cluster: cluster.into(),
        broker_name: name.into(),
        broker_addrs: vec![(0, addr.to_owned())],
        ..BrokerData::default()
    }
}

fn queue(broker: &str, queues: i32, perm: i32) -> QueueData {
    QueueData { broker_name: broker.into(), read_queue_nums: queues, write_queue_nums: queues, perm, topic_sys_flag: 0 }
}

/// A snapshot listing `groups` (cluster C) and `routes` (topic -> queues).
fn snap(addr: &str, groups: &[BrokerData], routes: &[(&str, Vec<QueueData>)]) -> Snapshot {
    let mut s = Snapshot { addr: addr.into(), ..Snapshot::default() };
    for g in groups {
        s.cluster.broker_addr_table.insert(g.broker_name.clone(), g.clone());
        s.cluster.cluster_addr_table.entry(g.cluster.clone()).or_default().insert(g.broker_name.clone());
    }
    for (topic, queues) in routes {
        let route = TopicRoute { queue_datas: queues.clone(), ..TopicRoute::default() };
        s.routes.insert((*topic).to_owned(), route);
    }
    s
}

#[test]
fn an_agreeing_fleet_has_no_drift() {
    let a = group("C", "a", "h:1");
    let routes = [("T", vec![queue("a", 8, 6)])];
    let report = compare(&[snap("ns1", std::slice::from_ref(&a), &routes), snap("ns2", &[a], &routes)]);
    assert!(report.drifts.is_empty(), "{report:?}");
    assert_eq!((report.brokers, report.topics, report.explained), (1, 1, 0));
}

#[test]
fn a_broker_on_one_namesrv_only_is_one_drift_and_explains_its_topics() {
    let (a, b) = (group("C", "a", "h:1"), group("C", "b", "h:2"));
    let full =
        snap("ns1", &[a.clone(), b], &[("T", vec![queue("a", 8, 6), queue("b", 8, 6)]), ("B", vec![queue("b", 1, 6)])]);
    let partial = snap("ns2", &[a], &[("T", vec![queue("a", 8, 6)])]);
    let report = compare(&[full, partial]);
    assert_eq!(report.drifts.len(), 1, "{report:?}");
    let drift = &report.drifts[0];
    assert_eq!((drift.kind, drift.subject.as_str()), (Kind::BrokerMissing, "C/b"));
    assert_eq!(drift.seen[0].value.as_deref(), Some("C: 0=h:2"));
    assert_eq!(drift.seen[1].value, None);
    // "T @ b" and topic "B" on ns2 follow from the missing group.
    assert_eq!(report.explained, 2);
}

#[test]
fn a_topic_deleted_on_one_namesrv_is_reported() {
    let a = group("C", "a", "h:1");
    let report = compare(&[
        snap("ns1", std::slice::from_ref(&a), &[("T", vec![queue("a", 8, 6)]), ("U", vec![queue("a", 8, 6)])]),
        snap("ns2", &[a], &[("U", vec![queue("a", 8, 6)])]),
    ]);
    assert_eq!(report.drifts.len(), 1, "{report:?}");
    assert_eq!((report.drifts[0].kind, report.drifts[0].subject.as_str()), (Kind::TopicMissing, "T"));
    assert_eq!(report.drifts[0].seen[0].value.as_deref(), Some("served by a"));
    assert_eq!(report.drifts[0].seen[1].value, None);
}

#[test]
fn addresses_queue_counts_permissions_and_order_configs_that_differ_are_reported() {
    let mut ns1 =
        snap("ns1", &[group("C", "a", "h:1")], &[("T", vec![queue("a", 8, 6)]), ("W", vec![queue("a", 4, 6)])]);
    let mut ns2 =
        snap("ns2", &[group("C", "a", "h:9")], &[("T", vec![queue("a", 4, 6)]), ("W", vec![queue("a", 4, 4)])]);
    ns1.order_conf.insert("T".into(), "a:8".into());
    ns2.order_conf.insert("T".into(), "a:4".into());
    ns1.order_conf.insert("O".into(), "a:1".into());
    let report = compare(&[ns1, ns2]);
    let found: Vec<(Kind, &str)> = report.drifts.iter().map(|d| (d.kind, d.subject.as_str())).collect();
    assert_eq!(
        found,
        [
            (Kind::BrokerDiffers, "C/a"),
            (Kind::QueuesDiffer, "T @ a"),
            (Kind::QueuesDiffer, "W @ a"),
            (Kind::OrderConfDiffers, "O"),
            (Kind::OrderConfDiffers, "T"),
        ]
    );
    let perm = &report.drifts[2].seen;
    assert_eq!((perm[0].value.as_deref(), perm[1].value.as_deref()), (Some("r4 w4 RW-"), Some("r4 w4 R--")));
    assert_eq!(report.order_configs, 2);
}

#[test]
fn a_group_in_another_cluster_differs() {
    let report = compare(&[snap("ns1", &[group("C", "a", "h:1")], &[]), snap("ns2", &[group("D", "a", "h:1")], &[])]);
    assert_eq!(report.drifts.len(), 1);
    assert_eq!(report.drifts[0].kind, Kind::BrokerDiffers);
    assert_eq!(report.drifts[0].seen[1].value.as_deref(), Some("D: 0=h:1"));
}
