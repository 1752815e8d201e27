//! Removing brokers: UNREGISTER_BROKER, connection close and expiry (spec §5.7, §5.8, §5.13),
//! and the heartbeat paths that keep them (spec §5.5).

use super::messages::ConnId;
use super::tables::{LiveKey, MinBrokerIdChange, RouteTables};
use crate::model::{DataVersion, MASTER_ID};

/// Identifies one broker instance to remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerRef {
    pub cluster: String,
    pub addr: String,
    pub broker_name: String,
    pub broker_id: i64,
}

/// An unregister refused because the broker's live registration came over another connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fenced {
    /// The connection of the live registration.
    pub registered_over: ConnId,
}

/// A broker removed by expiry, with how long it had been silent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    /// The removed instance.
    pub broker: BrokerRef,
    /// Time since its last registration or heartbeat.
    pub silent_ms: u64,
}

impl RouteTables {
    /// Removes one broker instance by address, and whatever it leaves empty. Returns true if
    /// the instance was live or listed in its group.
    pub fn unregister_broker(&mut self, b: &BrokerRef) -> bool {
        let key = (b.cluster.clone(), b.addr.clone());
        let was_live = self.live.remove(&key).is_some();
        if self.filter_servers.remove(&key).is_some() {
            self.touch_addr(&b.cluster, &b.addr);
        }
        let mut was_listed = false;
        let mut group_empty = false;
        if let Some(group) = self.brokers.get_mut(&b.broker_name) {
            let min_changed = group.min_id() == Some(b.broker_id);
            let before = group.broker_addrs.len();
            group.broker_addrs.retain(|_, addr| *addr != b.addr);
            was_listed = group.broker_addrs.len() != before;
            group_empty = group.broker_addrs.is_empty();
            let notify = self.options.notify_min_broker_id_changed && group.enable_acting_master;
            if notify && min_changed && !group_empty {
                self.outbox.push(MinBrokerIdChange::for_group(group, false, Some(b.addr.clone()), None));
            }
        }
        if was_listed {
            self.touch_broker(&b.broker_name);
        }
        if group_empty {
            self.brokers.remove(&b.broker_name);
            if let Some(names) = self.clusters.get_mut(&b.cluster) {
                names.remove(&b.broker_name);
                if names.is_empty() {
                    self.clusters.remove(&b.cluster);
                }
            }
            self.touch_clusters();
            for topic in self.topics_of(&b.broker_name) {
                self.remove_queue(&topic, &b.broker_name);
            }
            self.pruned.remove(&b.broker_name);
        } else {
            self.wipe_write_if_master_gone(&b.broker_name);
        }
        was_live || was_listed
    }

    /// An acting-master group left without a master stops taking writes (spec §5.7).
    fn wipe_write_if_master_gone(&mut self, broker: &str) {
        let Some(group) = self.brokers.get(broker) else {
            return;
        };
        let master_gone = group.min_id().is_none_or(|id| id > MASTER_ID);
        if group.enable_acting_master && master_gone {
            self.wipe_write_perm(broker);
        }
    }

    /// UNREGISTER_BROKER received over `conn`. A broker whose latest registration came over
    /// another connection has re-registered since this request was decided (a restart racing
    /// its own shutdown, apache/rocketmq#11043), so it is left alone. Returns whether it was removed.
    pub fn unregister_from(&mut self, conn: ConnId, b: &BrokerRef) -> Result<bool, Fenced> {
        match self.live.get(&(b.cluster.clone(), b.addr.clone())) {
            Some(live) if live.conn != conn => Err(Fenced { registered_over: live.conn }),
            _ => Ok(self.unregister_broker(b)),
        }
    }

    /// Removes exactly the brokers whose latest registration came over `conn` (spec §5.8).
    pub fn connection_closed(&mut self, conn: ConnId) -> Vec<BrokerRef> {
        let keys: Vec<LiveKey> = self.live.iter().filter(|(_, l)| l.conn == conn).map(|(k, _)| k.clone()).collect();
        keys.into_iter().filter_map(|key| self.remove_live(key)).collect()
    }

    /// Removes every broker silent past its timeout at `now_ms` (spec §5.13).
    pub fn expire(&mut self, now_ms: u64) -> Vec<Expired> {
        let stale: Vec<(LiveKey, u64)> = self
            .live
            .iter()
            .filter(|(_, l)| l.last_update_ms.saturating_add(l.timeout_ms) < now_ms)
            .map(|(k, l)| (k.clone(), now_ms - l.last_update_ms))
            .collect();
        stale
            .into_iter()
            .filter_map(|(key, silent_ms)| self.remove_live(key).map(|broker| Expired { broker, silent_ms }))
            .collect()
    }

    /// Unregisters the instance behind a live entry; an entry whose group forgot it just goes.
    fn remove_live(&mut self, key: LiveKey) -> Option<BrokerRef> {
        match self.find_broker(&key.0, &key.1) {
            Some((broker_name, broker_id)) => {
                let b = BrokerRef { cluster: key.0, addr: key.1, broker_name, broker_id };
                self.unregister_broker(&b);
                Some(b)
            }
            None => {
                self.live.remove(&key);
                self.filter_servers.remove(&key);
                None
            }
        }
    }

    /// BROKER_HEARTBEAT: refreshes a live instance. Returns false for an unknown one.
    pub fn heartbeat(&mut self, cluster: &str, addr: &str, now_ms: u64) -> bool {
        match self.live.get_mut(&(cluster.to_owned(), addr.to_owned())) {
            Some(live) => {
                live.last_update_ms = now_ms;
                true
            }
            None => false,
        }
    }

    /// QUERY_DATA_VERSION: whether `version` differs from the stored one (a missing one counts
    /// as changed), refreshing the instance as a heartbeat. Returns (changed, stored version).
    pub fn query_data_version(
        &mut self,
        cluster: &str,
        addr: &str,
        version: Option<&DataVersion>,
        now_ms: u64,
    ) -> (bool, Option<DataVersion>) {
        match self.live.get_mut(&(cluster.to_owned(), addr.to_owned())) {
            Some(live) => {
                live.last_update_ms = now_ms;
                (version != Some(&live.data_version), Some(live.data_version))
            }
            None => (true, None),
        }
    }
}
