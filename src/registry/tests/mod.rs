//! Unit tests of the routing core, on `RouteTables` alone: no actor, no socket, an explicit
//! clock. `properties` runs seeded random operation sequences against the tables' invariants;
//! `actor` drives the `RouteRegistry` actor itself with short configured intervals.

mod actor;
mod admin;
mod listings;
mod liveness;
mod properties;
mod register;
mod snapshot;
mod view;

use serde_json::Value;

pub(super) use super::liveness::BrokerRef;
use super::options::RegistryOptions;
use super::register::{FingerprintedBody, RegisterOutcome, Registered, Registration};
use super::tables::RouteTables;
use crate::model::{DataVersion, QueueData, TopicConfig, TopicTable};
use crate::origin::ConnId;
use crate::protocol::body::RegisterBody;
use crate::protocol::json::lenient::quote_bare_keys;
use crate::protocol::json::JsonStyle;
use crate::settings::RoutingSettings;

/// One broker instance as a test registers it.
#[derive(Debug, Clone)]
pub(super) struct Reg {
    pub cluster: &'static str,
    pub name: &'static str,
    pub id: i64,
    pub addr: &'static str,
    pub topics: Vec<&'static str>,
    pub counter: i64,
    pub state_version: i64,
    pub conn: u64,
    pub acting_master: Option<bool>,
    pub timeout_ms: Option<u64>,
    pub filter_servers: Option<Vec<String>>,
}

/// A 5.x master `name` at `addr` in cluster `c`, over connection 1, with `topics`.
pub(super) fn broker(name: &'static str, addr: &'static str, topics: &[&'static str]) -> Reg {
    Reg {
        cluster: "c",
        name,
        id: 0,
        addr,
        topics: topics.to_vec(),
        counter: 1,
        state_version: 0,
        conn: 1,
        acting_master: Some(false),
        timeout_ms: None,
        filter_servers: None,
    }
}

impl Reg {
    /// The registration message.
    pub fn registration(&self) -> Registration {
        let mut topics = TopicTable::with_capacity(self.topics.len());
        for t in &self.topics {
            let config = TopicConfig {
                topic_name: Some((*t).to_owned()),
                read_queue_nums: 4,
                write_queue_nums: 4,
                ..TopicConfig::default()
            };
            topics.push(t, &config);
        }
        let body = RegisterBody {
            topics,
            data_version: DataVersion { counter: self.counter, state_version: self.state_version, timestamp: 1 },
            filter_servers: self.filter_servers.clone(),
            mappings: Vec::new(),
        };
        Registration {
            conn: ConnId(self.conn),
            version: 479,
            cluster: self.cluster.into(),
            addr: self.addr.into(),
            broker_name: self.name.into(),
            broker_id: self.id,
            access_key: None,
            ha_server_addr: format!("{}-ha", self.addr),
            zone_name: None,
            timeout_ms: self.timeout_ms,
            enable_acting_master: self.acting_master,
            body: FingerprintedBody::new(body),
        }
    }

    /// Its identity, for removal.
    pub fn broker_ref(&self) -> BrokerRef {
        BrokerRef {
            cluster: self.cluster.into(),
            addr: self.addr.into(),
            broker_name: self.name.into(),
            broker_id: self.id,
        }
    }
}

/// Empty tables with default options.
pub(super) fn tables() -> RouteTables {
    RouteTables::new(RegistryOptions::default())
}

/// Registers `reg` at `now_ms`, asserting it was accepted.
pub(super) fn register(tables: &mut RouteTables, reg: &Reg, now_ms: u64) {
    accepted(tables.register_broker(reg.registration(), now_ms));
}

/// What an accepted registration tells the broker; fails the test on a rejected one.
pub(super) fn accepted(registered: Registered) -> RegisterOutcome {
    match registered {
        Registered::Accepted(outcome) => outcome,
        rejected => panic!("registration not accepted: {rejected:?}"),
    }
}

/// The route of `topic` as a 5.x client reads it.
pub(super) fn route(tables: &mut RouteTables, topic: &str) -> Option<Value> {
    tables.route_body(topic, JsonStyle::Standard).map(|b| serde_json::from_slice(&b).expect("standard json"))
}

/// The broker names a route lists, in order.
pub(super) fn route_brokers(tables: &mut RouteTables, topic: &str) -> Vec<String> {
    route(tables, topic)
        .map(|r| {
            r["brokerDatas"].as_array().unwrap().iter().map(|b| b["brokerName"].as_str().unwrap().to_owned()).collect()
        })
        .unwrap_or_default()
}

/// The ClusterInfo, parsed (it has bare numeric keys).
pub(super) fn cluster_info(tables: &mut RouteTables) -> Value {
    serde_json::from_slice(&quote_bare_keys(&tables.cluster_info_body())).expect("cluster info json")
}

/// The queue data of `broker` in `topic`.
pub(super) fn queue(tables: &RouteTables, topic: &str, broker: &str) -> Option<QueueData> {
    tables.queues(topic).and_then(|q| q.get(broker)).copied()
}
