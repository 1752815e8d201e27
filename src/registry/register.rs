//! Applying a REGISTER_BROKER to the tables: Java's `RouteInfoManager.registerBroker` (spec §5.4).

use std::collections::HashSet;

use super::messages::ConnId;
use super::tables::{LiveBroker, LiveKey, MinBrokerIdChange, RouteTables};
use crate::model::{BrokerData, MASTER_ID, PERM_WRITE};
use crate::protocol::body::RegisterBody;

/// One broker registration, header and decoded body.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The connection it came over; a later close of that connection removes the broker.
    pub conn: ConnId,
    pub cluster: String,
    pub addr: String,
    pub broker_name: String,
    pub broker_id: i64,
    pub ha_server_addr: String,
    pub zone_name: Option<String>,
    /// `heartbeatTimeoutMillis`; `None` takes the configured default.
    pub timeout_ms: Option<u64>,
    /// `enableActingMaster`; `None` marks a 4.x ("old version") broker.
    pub enable_acting_master: Option<bool>,
    pub body: RegisterBody,
    /// `body.topics_fingerprint()`, computed by the sender so the registry need not.
    pub topics_fingerprint: u64,
}

/// What a successful registration tells the broker, and what the log says about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegisterOutcome {
    /// The group master's address, for a slave whose master is alive.
    pub master_addr: Option<String>,
    /// The master's HA address, likewise.
    pub ha_server_addr: Option<String>,
    /// True when the instance was not live before (first registration or after removal).
    pub newly_live: bool,
    /// The ORDER_TOPIC_CONFIG KVTable body, when configured to return it and it exists.
    pub order_topic_config: Option<bytes::Bytes>,
}

/// How a registration joined its broker group (steps 1-7).
enum Joined {
    /// Step 5: an older stateVersion than the live broker holding this id; nothing more happens.
    Stale,
    /// The broker is a member now, in this role.
    Member(Role),
}

/// A member's role in its group, which decides whether its topics shape routes.
struct Role {
    register_first: bool,
    is_master: bool,
    is_prime_slave: bool,
    acting_master: bool,
}

impl RouteTables {
    /// Registers a broker. `None` is Java's null result: a first registration with one topic.
    pub fn register_broker(&mut self, reg: Registration, now_ms: u64) -> Option<RegisterOutcome> {
        let live_key = (reg.cluster.clone(), reg.addr.clone());
        let newly_live = !self.live.contains_key(&live_key);
        let role = match self.join_group(&reg, &live_key)? {
            Joined::Stale => return Some(RegisterOutcome::default()),
            Joined::Member(role) => role,
        };

        // Steps 8-10: topics, from the master or the prime slave only.
        let applied_topics = (role.is_master || role.is_prime_slave).then(|| {
            self.apply_topics(&reg, &live_key, role.register_first, role.is_prime_slave && role.acting_master);
            reg.topics_fingerprint
        });

        // Step 11: liveness follows the latest registration and its connection.
        let live = LiveBroker {
            last_update_ms: now_ms,
            timeout_ms: reg.timeout_ms.unwrap_or(self.options.default_broker_timeout_ms),
            data_version: reg.body.data_version,
            conn: reg.conn,
            ha_server_addr: reg.ha_server_addr.clone(),
            applied_topics,
        };
        self.live.insert(live_key.clone(), live);
        self.update_filter_servers(&reg, live_key);
        Some(RegisterOutcome { newly_live, ..self.master_of(&reg) })
    }

    /// Steps 1-7 and 14: cluster and group membership. `None` rejects a first registration
    /// carrying a single topic (step 6), after the earlier steps took effect, as in Java.
    fn join_group(&mut self, reg: &Registration, live_key: &LiveKey) -> Option<Joined> {
        if self.clusters.entry(reg.cluster.clone()).or_default().insert(reg.broker_name.clone()) {
            self.touch_clusters();
        }
        let mut register_first = false;
        let group = self.brokers.entry(reg.broker_name.clone()).or_insert_with(|| {
            register_first = true;
            BrokerData::new(&reg.cluster, &reg.broker_name)
        });
        let before = group.clone();
        let old_version_broker = reg.enable_acting_master.is_none();
        group.enable_acting_master = reg.enable_acting_master == Some(true);
        group.zone_name = reg.zone_name.clone();
        let min_id_changed = reg.broker_id < group.min_id().unwrap_or(MASTER_ID);
        // Step 4: an address re-registering under a new id (slave to master) leaves its old id.
        group.broker_addrs.retain(|id, addr| *addr != reg.addr || *id == reg.broker_id);

        let holder = group.broker_addrs.get(&reg.broker_id).filter(|old| **old != reg.addr);
        let stale = holder.is_some_and(|old| {
            let live = self.live.get(&(reg.cluster.clone(), old.clone()));
            live.is_some_and(|l| l.data_version.state_version > reg.body.data_version.state_version)
        });
        let single_topic_first = !group.broker_addrs.contains_key(&reg.broker_id) && reg.body.topics.len() == 1;
        let joined = if stale || single_topic_first {
            None
        } else {
            let old_addr = group.broker_addrs.insert(reg.broker_id, reg.addr.clone());
            let is_master = reg.broker_id == MASTER_ID;
            Some(Role {
                register_first: register_first || old_addr.is_none_or(|a| a.is_empty()),
                is_master,
                is_prime_slave: !old_version_broker && !is_master && group.min_id() == Some(reg.broker_id),
                acting_master: group.enable_acting_master,
            })
        };
        if joined.is_some() && min_id_changed && self.options.notify_min_broker_id_changed {
            let others_only = group.broker_addrs.len() > 1;
            self.outbox.push(MinBrokerIdChange::for_group(group, others_only, None, Some(reg.ha_server_addr.clone())));
        }
        if register_first || *group != before {
            self.touch_broker(&reg.broker_name);
        }
        if stale {
            self.live.remove(live_key);
            return Some(Joined::Stale);
        }
        joined.map(Joined::Member)
    }

    /// Step 12: filter servers (legacy): `None` leaves them, empty removes, a list replaces.
    fn update_filter_servers(&mut self, reg: &Registration, live_key: LiveKey) {
        let Some(list) = &reg.body.filter_servers else {
            return;
        };
        let previous = if list.is_empty() {
            self.filter_servers.remove(&live_key)
        } else {
            self.filter_servers.insert(live_key, list.clone())
        };
        if previous.unwrap_or_default() != *list {
            self.touch_addr(&reg.cluster, &reg.addr);
        }
    }

    /// Step 13: a slave learns its group master's addresses, once the master is live.
    fn master_of(&self, reg: &Registration) -> RegisterOutcome {
        let master = (reg.broker_id != MASTER_ID)
            .then(|| self.brokers.get(&reg.broker_name).and_then(|g| g.broker_addrs.get(&MASTER_ID)))
            .flatten();
        let live = master.and_then(|m| self.live.get(&(reg.cluster.clone(), m.clone())).map(|l| (m, l)));
        match live {
            Some((master, live)) => RegisterOutcome {
                master_addr: Some(master.clone()),
                ha_server_addr: Some(live.ha_server_addr.clone()),
                ..RegisterOutcome::default()
            },
            None => RegisterOutcome::default(),
        }
    }

    /// Steps 8-10 for a master or prime slave.
    ///
    /// Java re-applies every topic when the dataVersion changed, and otherwise only topics that
    /// lack this group's queue data. A re-registration with an unchanged dataVersion and the same
    /// topic names as the last applied one (the 30 s heartbeat) can lack none, unless the group
    /// lost queue data since, so it skips the per-topic check and costs O(1) here.
    fn apply_topics(
        &mut self,
        reg: &Registration,
        live_key: &(String, String),
        register_first: bool,
        wipe_write: bool,
    ) {
        let previous = self.live.get(live_key);
        let version_changed = previous.is_none_or(|l| l.data_version != reg.body.data_version);
        let full = register_first || version_changed;
        let same_topics = previous.and_then(|l| l.applied_topics) == Some(reg.topics_fingerprint);
        let check_each = !full && (self.pruned.contains(&reg.broker_name) || !same_topics);

        if self.options.delete_topic_with_broker_registration && reg.body.mappings.is_empty() {
            let listed: HashSet<&str> = reg.body.topics.iter().map(|t| t.key).collect();
            for topic in self.topics_of(&reg.broker_name) {
                if !listed.contains(topic.as_str()) {
                    self.remove_queue(&topic, &reg.broker_name);
                }
            }
        }

        if full || check_each {
            for topic in reg.body.topics.iter() {
                let (name, mut queue) = (topic.name, topic.queue);
                if wipe_write {
                    queue.perm &= !PERM_WRITE;
                }
                if full {
                    self.put_queue(name, &reg.broker_name, queue);
                } else {
                    self.put_queue_if_absent(name, &reg.broker_name, queue);
                }
            }
            self.pruned.remove(&reg.broker_name);
        }

        if full {
            for (topic, info) in &reg.body.mappings {
                self.put_mapping(topic, info.clone());
            }
        }
    }
}
