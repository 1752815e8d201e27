//! What the NameServers of a fleet disagree about, from their snapshots: pure functions.
//!
//! Differences that a missing broker group explains (its topics' queues, topics only it serves)
//! are counted, not listed, so one broker that never reached a NameServer is one drift, not
//! one per topic.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::wire::{BrokerData, ClusterInfo, TopicRoute};

/// What one NameServer tells clients.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The NameServer.
    pub addr: String,
    /// Its GET_BROKER_CLUSTER_INFO.
    pub cluster: ClusterInfo,
    /// The route of every topic it has (topics it answered TOPIC_NOT_EXIST for are absent).
    pub routes: BTreeMap<String, TopicRoute>,
    /// Its ORDER_TOPIC_CONFIG KV namespace.
    pub order_conf: BTreeMap<String, String>,
}

/// The kind of a disagreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A broker group is listed by some NameServers only.
    BrokerMissing,
    /// A broker group's cluster, member addresses, zone or acting-master flag differ.
    BrokerDiffers,
    /// A topic has a route on some NameServers only.
    TopicMissing,
    /// A topic's queue counts or permissions on one broker group differ.
    QueuesDiffer,
    /// An ORDER_TOPIC_CONFIG entry differs or is missing on some.
    OrderConfDiffers,
}

impl Kind {
    /// The snake_case name used in text and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::BrokerMissing => "broker_missing",
            Kind::BrokerDiffers => "broker_differs",
            Kind::TopicMissing => "topic_missing",
            Kind::QueuesDiffer => "queues_differ",
            Kind::OrderConfDiffers => "order_conf_differs",
        }
    }
}

/// What one NameServer says about a drift's subject; `None` is "nothing" (absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seen {
    /// The NameServer.
    pub namesrv: String,
    /// Its value, or `None` when it has none.
    pub value: Option<String>,
}

/// One disagreement: what it is about and what each NameServer says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// The kind.
    pub kind: Kind,
    /// The broker group (`cluster/name`), topic, or `topic @ broker`.
    pub subject: String,
    /// Each NameServer's value, in `-n` order.
    pub seen: Vec<Seen>,
}

/// The outcome of comparing the snapshots.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Broker groups compared.
    pub brokers: usize,
    /// Topics compared.
    pub topics: usize,
    /// Order-topic configs compared.
    pub order_configs: usize,
    /// The disagreements, brokers first.
    pub drifts: Vec<Drift>,
    /// Topic and queue differences that a missing broker group explains (not listed).
    pub explained: usize,
}

/// A group as a diff shows it: `C: 0=host:port 1=host:port`, plus zone and acting master when set.
fn describe(info: &ClusterInfo, name: &str, group: &BrokerData) -> String {
    let cluster = info.cluster_of(name).unwrap_or(&group.cluster);
    let addrs: Vec<String> = group.broker_addrs.iter().map(|(id, a)| format!("{id}={a}")).collect();
    let mut text = format!("{cluster}: {}", addrs.join(" "));
    if let Some(zone) = &group.zone_name {
        text.push_str(&format!(" zone={zone}"));
    }
    if group.enable_acting_master {
        text.push_str(" actingMaster");
    }
    text
}

/// The drift for `subject` when the values are not all equal.
fn drift_if_unequal(kind: Kind, subject: String, seen: Vec<Seen>) -> Option<Drift> {
    let first = seen.first().map(|s| &s.value);
    (!seen.iter().all(|s| Some(&s.value) == first)).then_some(Drift { kind, subject, seen })
}

fn seen(snaps: &[Snapshot], value: impl Fn(&Snapshot) -> Option<String>) -> Vec<Seen> {
    snaps.iter().map(|s| Seen { namesrv: s.addr.clone(), value: value(s) }).collect()
}

/// Compares the snapshots of every NameServer.
pub fn compare(snaps: &[Snapshot]) -> Report {
    let mut report = Report::default();
    let names: BTreeSet<&str> =
        snaps.iter().flat_map(|s| s.cluster.broker_addr_table.keys().map(String::as_str)).collect();
    report.brokers = names.len();
    for name in names {
        let values = seen(snaps, |s| s.cluster.broker_addr_table.get(name).map(|g| describe(&s.cluster, name, g)));
        let missing = values.iter().any(|v| v.value.is_none());
        let cluster = snaps.iter().find_map(|s| s.cluster.cluster_of(name)).unwrap_or("?");
        let kind = if missing { Kind::BrokerMissing } else { Kind::BrokerDiffers };
        report.drifts.extend(drift_if_unequal(kind, format!("{cluster}/{name}"), values));
    }
    let topics: BTreeSet<&str> = snaps.iter().flat_map(|s| s.routes.keys().map(String::as_str)).collect();
    report.topics = topics.len();
    for topic in topics {
        compare_topic(snaps, topic, &mut report);
    }
    let keys: BTreeSet<&str> = snaps.iter().flat_map(|s| s.order_conf.keys().map(String::as_str)).collect();
    report.order_configs = keys.len();
    for key in keys {
        let values = seen(snaps, |s| s.order_conf.get(key).cloned());
        report.drifts.extend(drift_if_unequal(Kind::OrderConfDiffers, key.to_owned(), values));
    }
    report.drifts.sort_by(|a, b| (a.kind, &a.subject).cmp(&(b.kind, &b.subject)));
    report
}

/// True when `snap` does not list broker group `name` at all.
fn lacks_broker(snap: &Snapshot, name: &str) -> bool {
    !snap.cluster.broker_addr_table.contains_key(name)
}

/// Adds the drifts of one topic: present on some only, or queues that differ per broker group.
fn compare_topic(snaps: &[Snapshot], topic: &str, report: &mut Report) {
    let serving: BTreeSet<&str> = snaps
        .iter()
        .filter_map(|s| s.routes.get(topic))
        .flat_map(|r| r.queue_datas.iter().map(|q| q.broker_name.as_str()))
        .collect();
    let absent_unexplained = snaps
        .iter()
        .any(|s| !s.routes.contains_key(topic) && (serving.is_empty() || serving.iter().any(|b| !lacks_broker(s, b))));
    if snaps.iter().any(|s| !s.routes.contains_key(topic)) {
        if absent_unexplained {
            let values = seen(snaps, |s| {
                s.routes.get(topic).map(|r| {
                    let names: Vec<&str> = r.queue_datas.iter().map(|q| q.broker_name.as_str()).collect();
                    format!("served by {}", names.join(", "))
                })
            });
            report.drifts.push(Drift { kind: Kind::TopicMissing, subject: topic.to_owned(), seen: values });
        } else {
            report.explained += 1;
        }
        return;
    }
    for broker in serving {
        // A NameServer that lacks the group entirely is covered by its broker_missing drift.
        let compared: Vec<&Snapshot> = snaps.iter().filter(|s| !lacks_broker(s, broker)).collect();
        let values: Vec<Seen> = compared
            .iter()
            .map(|s| Seen {
                namesrv: s.addr.clone(),
                value: s
                    .routes
                    .get(topic)
                    .and_then(|r| r.queue_datas.iter().find(|q| q.broker_name == broker))
                    .map(|q| q.summary()),
            })
            .collect();
        let subject = format!("{topic} @ {broker}");
        match drift_if_unequal(Kind::QueuesDiffer, subject, values) {
            Some(drift) => report.drifts.push(drift),
            None if compared.len() < snaps.len() => report.explained += 1,
            None => {}
        }
    }
}
