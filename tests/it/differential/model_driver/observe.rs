//! The queries asked after every step, each with the model's answer: routes of every pool topic
//! (5.x client, old client, two zones), cluster info, every topic list, member groups, and the
//! live table through QUERY_DATA_VERSION.

use namesrv::protocol::{ExtFields, RemotingCommand};

use std::collections::BTreeSet;

use super::ops::{CLUSTERS, NAMES, TOPICS};
use super::wire::request;
use crate::differential::java_model::queries::UnitList;
use crate::differential::java_model::register::ORDER_TOPIC_CONFIG;
use crate::differential::java_model::{Answer, Model};

/// A cluster name no broker uses.
pub const UNKNOWN_CLUSTER: &str = "c9";

/// How the raw body must be written, beyond what the parsed JSON shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Anything fastjson can read.
    Any,
    /// Standard JSON (quoted keys), for clients from 4.9.4 on.
    Standard,
    /// fastjson's default: broker ids as bare numeric keys, for older clients.
    BareKeys,
}

/// One query and what it must answer.
pub struct Probe {
    pub label: String,
    pub request: RemotingCommand,
    pub expected: Answer,
    pub encoding: Encoding,
}

fn route_request(topic: &str, version: i32, zone: Option<(&str, &str)>) -> RemotingCommand {
    let mut ext = ExtFields::new().with("topic", topic);
    if let Some((mode, name)) = zone {
        ext.insert("__ZONE_MODE", mode);
        ext.insert("__ZONE_NAME", name);
    }
    let mut cmd = RemotingCommand::request(105, Some(ext));
    cmd.version = version;
    cmd
}

fn probe(label: String, request: RemotingCommand, expected: Answer) -> Probe {
    Probe { label, request, expected, encoding: Encoding::Any }
}

/// Every query of one observation, with the answers `model` gives; `addrs` are the addresses
/// the sequence has used so far.
pub fn probes(model: &Model, addrs: &BTreeSet<String>) -> Vec<Probe> {
    let mut all = Vec::new();
    for topic in TOPICS {
        let route = model.route(topic, None);
        let standard = Probe {
            encoding: Encoding::Standard,
            ..probe(format!("route {topic} v479"), route_request(topic, 479, None), route.clone())
        };
        let old = Probe {
            encoding: Encoding::BareKeys,
            ..probe(format!("route {topic} v400"), route_request(topic, 400, None), route)
        };
        all.extend([standard, old]);
        for (mode, zone) in [("true", "Z1"), ("TRUE", "z2")] {
            let label = format!("route {topic} zone {zone}");
            all.push(probe(label, route_request(topic, 479, Some((mode, zone))), model.route(topic, Some(zone))));
        }
    }
    all.push(probe("cluster info".into(), RemotingCommand::request(106, None), model.cluster_info()));
    all.push(probe("all topics".into(), RemotingCommand::request(206, None), model.all_topics()));
    for cluster in CLUSTERS.into_iter().chain([UNKNOWN_CLUSTER]) {
        let label = format!("topics of {cluster}");
        all.push(probe(label, request(224, &[("cluster", cluster)]), model.topics_by_cluster(cluster)));
    }
    all.push(probe("system topics".into(), RemotingCommand::request(304, None), model.system_topics()));
    for (code, list) in [(311, UnitList::Unit), (312, UnitList::HasUnitSub), (313, UnitList::HasUnitSubNotUnit)] {
        all.push(probe(format!("unit list {code}"), RemotingCommand::request(code, None), model.unit_topics(list)));
    }
    for name in NAMES {
        let req = request(901, &[("clusterName", CLUSTERS[0]), ("brokerName", name)]);
        all.push(probe(format!("member group {name}"), req, model.member_group(CLUSTERS[0], name)));
    }
    let kv = request(219, &[("namespace", ORDER_TOPIC_CONFIG)]);
    all.push(probe("order topic configs".into(), kv, model.kv_list(ORDER_TOPIC_CONFIG)));
    all.extend(live_probes(model, addrs));
    all
}

/// QUERY_DATA_VERSION without a body for every cluster and used address: the live table, observed.
fn live_probes(model: &Model, addrs: &BTreeSet<String>) -> Vec<Probe> {
    let keys = CLUSTERS.iter().flat_map(|cluster| addrs.iter().map(move |addr| (cluster.to_string(), addr.clone())));
    keys.into_iter()
        .map(|(cluster, addr)| {
            let req = request(
                322,
                &[("brokerName", "x"), ("brokerAddr", &addr), ("clusterName", &cluster), ("brokerId", "0")],
            );
            let who = crate::differential::java_model::unregister::BrokerIdentity {
                cluster: cluster.clone(),
                addr: addr.clone(),
                name: "x".into(),
                id: 0,
            };
            probe(format!("data version {cluster}/{addr}"), req, model.query_data_version(&who, None))
        })
        .collect()
}
