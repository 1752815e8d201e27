//! REGISTER_BROKER: `DefaultRequestProcessor.registerBroker` and `RouteInfoManager.registerBroker`.

use std::collections::BTreeMap;

use serde_json::json;

use super::tables::{BrokerData, ConnId, Dv, Live, QueueData, Tables};
use super::{Answer, Body, Model};

/// `PermName.PERM_WRITE`.
pub const PERM_WRITE: i32 = 2;

/// The KV namespace of order-topic configs (`NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG`).
pub const ORDER_TOPIC_CONFIG: &str = "ORDER_TOPIC_CONFIG";

/// One `TopicConfig` of a registration body (only the fields the NameServer reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicConfig {
    pub name: String,
    pub queue: QueueData,
}

/// A REGISTER_BROKER request: header and decoded body.
#[derive(Debug, Clone)]
pub struct RegisterCall {
    pub cluster: String,
    pub addr: String,
    pub name: String,
    pub id: i64,
    pub ha: String,
    /// ext `__ZONE_NAME`.
    pub zone: Option<String>,
    /// Header `enableActingMaster`; `None` is a 4.x ("old version") broker.
    pub acting_master: Option<bool>,
    pub dv: Dv,
    /// `topicConfigTable`, one entry per topic name.
    pub topics: Vec<TopicConfig>,
    /// `filterServerList`; `None` when the body has none.
    pub filter_servers: Option<Vec<String>>,
}

/// What `registerBroker` decided.
enum Outcome {
    /// Java's null result: a first registration carrying exactly one topic.
    Refused,
    /// An older stateVersion than the live holder of this id: SUCCESS with nothing.
    Stale,
    /// Registered; a slave learns its live master.
    Registered { master: Option<(String, String)> },
}

impl Model {
    /// Applies a registration received over `conn` and returns the answer.
    pub fn register(&mut self, call: &RegisterCall, conn: ConnId) -> Answer {
        let replaced = if self.exceptions.one_broker_per_address {
            self.exception_one_broker_per_address(call)
        } else {
            Vec::new()
        };
        let outcome = self.register_broker(call, conn);
        self.after_change();
        if self.exceptions.close_replaced_connection {
            self.exception_close_replaced_connection(replaced, conn);
        }
        match outcome {
            // `createResponseCommand(RegisterBrokerResponseHeader.class)`: an empty header map.
            Outcome::Refused => {
                let ext = (!self.pending.register_failure_without_ext_fields).then(BTreeMap::new);
                Answer { ext, ..Answer::error(1, "register broker failed") }
            }
            Outcome::Stale => Answer { ext: Some(BTreeMap::new()), body: self.order_kv_body(), ..Answer::success() },
            Outcome::Registered { master } => {
                let ext = match master {
                    Some((addr, ha)) => [("haServerAddr".to_owned(), ha), ("masterAddr".to_owned(), addr)].into(),
                    None => BTreeMap::new(),
                };
                Answer { ext: Some(ext), body: self.order_kv_body(), ..Answer::success() }
            }
        }
    }

    /// Exception `one_broker_per_address`: the live registration at this address that belongs
    /// to another (cluster, name) is first unregistered, as UNREGISTER_BROKER of it would.
    /// Returns the connections the replaced registrations came over.
    fn exception_one_broker_per_address(&mut self, call: &RegisterCall) -> Vec<ConnId> {
        let others: Vec<(String, Live)> = self
            .tables
            .live
            .iter()
            .filter(|((cluster, addr), live)| {
                *addr == call.addr && (cluster != &call.cluster || live.name != call.name)
            })
            .map(|((cluster, _), live)| (cluster.clone(), live.clone()))
            .collect();
        for (cluster, live) in &others {
            self.unregister_broker(cluster, &call.addr, &live.name, live.id);
        }
        others.into_iter().map(|(_, live)| live.conn).collect()
    }

    /// Exception `close_replaced_connection`: a replaced broker's connection is closed by the
    /// server once no live registration is left on it (whether the registration is then
    /// accepted or refused), never the connection the registration came over.
    fn exception_close_replaced_connection(&mut self, replaced: Vec<ConnId>, registering: ConnId) {
        for conn in replaced {
            let spared = conn == registering && !self.pending.closes_registering_connection;
            let unused = self.tables.live.values().all(|l| l.conn != conn);
            if spared {
                continue;
            }
            if unused && !self.closed_by_server.contains(&conn) {
                self.closed_by_server.push(conn);
            }
        }
    }

    /// `ReturnOrderTopicConfigToBroker` (default true): the ORDER_TOPIC_CONFIG namespace as a
    /// `KVTable`, or no body when the namespace does not exist.
    fn order_kv_body(&self) -> Body {
        match self.tables.kv.get(ORDER_TOPIC_CONFIG) {
            Some(table) => Body::Json(json!({ "table": table })),
            None => Body::None,
        }
    }

    /// `RouteInfoManager.registerBroker`, step by step.
    fn register_broker(&mut self, call: &RegisterCall, conn: ConnId) -> Outcome {
        let t = &mut self.tables;
        t.clusters.entry(call.cluster.clone()).or_default().insert(call.name.clone());
        let mut register_first = !t.brokers.contains_key(&call.name);
        let group = t.brokers.entry(call.name.clone()).or_insert_with(|| BrokerData {
            cluster: call.cluster.clone(),
            name: call.name.clone(),
            addrs: BTreeMap::new(),
            zone: None,
            acting_master: false,
        });
        let old_version_broker = call.acting_master.is_none();
        group.acting_master = call.acting_master == Some(true);
        group.zone = call.zone.clone();
        // Slave to master switch: the address leaves any other id of this group.
        group.addrs.retain(|id, addr| *addr != call.addr || *id == call.id);
        if let Some(old) = group.addrs.get(&call.id).filter(|old| **old != call.addr) {
            let holder = t.live.get(&Tables::key(&call.cluster, old));
            if holder.is_some_and(|live| live.dv.state_version > call.dv.state_version) {
                t.live.remove(&Tables::key(&call.cluster, &call.addr));
                return Outcome::Stale;
            }
        }
        let group = t.brokers.get_mut(&call.name).expect("group created above");
        if !group.addrs.contains_key(&call.id) && call.topics.len() == 1 {
            return Outcome::Refused;
        }
        let old_addr = group.addrs.insert(call.id, call.addr.clone());
        register_first |= old_addr.is_none_or(|a| a.is_empty());
        let is_master = call.id == 0;
        let is_prime_slave = !old_version_broker && !is_master && group.min_id() == Some(call.id);
        let wipe_write = is_prime_slave && group.acting_master;
        if is_master || is_prime_slave {
            self.apply_topics(call, register_first, wipe_write);
        }
        let t = &mut self.tables;
        let live = Live { conn, dv: call.dv, ha: call.ha.clone(), name: call.name.clone(), id: call.id };
        t.live.insert(Tables::key(&call.cluster, &call.addr), live);
        match &call.filter_servers {
            None => {}
            Some(list) if list.is_empty() => {
                t.filters.remove(&Tables::key(&call.cluster, &call.addr));
            }
            Some(list) => {
                t.filters.insert(Tables::key(&call.cluster, &call.addr), list.clone());
            }
        }
        Outcome::Registered { master: self.master_of(call) }
    }

    /// The topics of a master or prime slave (`registerBroker`'s topic loop).
    fn apply_topics(&mut self, call: &RegisterCall, register_first: bool, wipe_write: bool) {
        let t = &mut self.tables;
        if self.config.delete_topic_with_broker_registration {
            // No static-topic mappings are ever sent, so the deletion always applies.
            let unlisted: Vec<String> = t
                .topics
                .iter()
                .filter(|(topic, queues)| {
                    queues.contains_key(&call.name) && !call.topics.iter().any(|tc| tc.name == **topic)
                })
                .map(|(topic, _)| topic.clone())
                .collect();
            for topic in unlisted {
                let queues = t.topics.get_mut(&topic).expect("listed above");
                queues.remove(&call.name);
                if queues.is_empty() {
                    t.topics.remove(&topic);
                }
            }
        }
        let stored = t.live.get(&Tables::key(&call.cluster, &call.addr)).map(|l| l.dv);
        let version_changed = stored != Some(call.dv);
        for tc in &call.topics {
            // `isTopicConfigChanged`: the version changed, or this group has no queues here.
            let lacking = t.topics.get(&tc.name).is_none_or(|q| q.is_empty() || !q.contains_key(&call.name));
            if register_first || version_changed || lacking {
                let mut queue = tc.queue;
                if wipe_write {
                    queue.perm &= !PERM_WRITE;
                }
                t.topics.entry(tc.name.clone()).or_default().insert(call.name.clone(), queue);
            }
        }
    }

    /// A slave's master address and the master's HA address, when the master is live.
    fn master_of(&self, call: &RegisterCall) -> Option<(String, String)> {
        if call.id == 0 {
            return None;
        }
        let master = self.tables.brokers.get(&call.name)?.addrs.get(&0)?;
        let live = self.tables.live.get(&Tables::key(&call.cluster, master))?;
        Some((master.clone(), live.ha.clone()))
    }
}
