//! Removing brokers: UNREGISTER_BROKER (`RouteInfoManager.unRegisterBroker`, one request per
//! batch), connection close (`onChannelDestroy` and `setupUnRegisterRequest`), and the
//! exceptions `close_removes_all`, `complete_removal` and `orphan_live_dropped`.

use std::collections::BTreeSet;

use super::register::PERM_WRITE;
use super::tables::{AddrKey, ConnId, Live, Tables};
use super::{Answer, Model};

/// The identity fields of UNREGISTER_BROKER and QUERY_DATA_VERSION.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerIdentity {
    pub cluster: String,
    pub addr: String,
    pub name: String,
    pub id: i64,
}

/// Names an unregister batch emptied (`removedBroker`) or only edited (`reducedBroker`).
#[derive(Debug, Default)]
struct Touched {
    removed: BTreeSet<String>,
    reduced: BTreeSet<String>,
}

impl Model {
    /// UNREGISTER_BROKER received over `conn`: queued, answered SUCCESS at once, applied whatever
    /// connection it came over (`DefaultRequestProcessor.unregisterBroker`).
    pub fn unregister(&mut self, b: &BrokerIdentity, conn: ConnId) -> Answer {
        let fenced = self.tables.live.get(&Tables::key(&b.cluster, &b.addr)).is_some_and(|l| l.conn != conn);
        if !(self.pending.unregister_fenced_by_connection && fenced) {
            self.unregister_broker(&b.cluster, &b.addr, &b.name, b.id);
            self.after_change();
        }
        Answer::success()
    }

    /// One unregister request. The id only decides the min-id notification, which is off.
    pub(super) fn unregister_broker(&mut self, cluster: &str, addr: &str, name: &str, _id: i64) {
        let key = Tables::key(cluster, addr);
        let was_live = self.tables.live.remove(&key).is_some();
        self.tables.filters.remove(&key);
        let mut touched = Touched::default();
        self.remove_from_group(name, addr, cluster, &mut touched);
        if was_live && self.exceptions.complete_removal {
            self.exception_complete_removal(name, addr, &mut touched);
        }
        self.clean_topics(&touched);
    }

    /// Exception `complete_removal`: the address also leaves every other group listing it; an
    /// emptied group leaves its own cluster's set.
    fn exception_complete_removal(&mut self, named: &str, addr: &str, touched: &mut Touched) {
        for other in self.tables.groups_listing(addr) {
            if other != named {
                let own_cluster = self.tables.brokers[&other].cluster.clone();
                self.remove_from_group(&other, addr, &own_cluster, touched);
            }
        }
    }

    /// The per-request part of `unRegisterBroker`: the group is found by name alone, the
    /// address leaves it under every id, and an emptied group leaves `cluster`'s set (the
    /// request's cluster, not the group's).
    fn remove_from_group(&mut self, name: &str, addr: &str, cluster: &str, touched: &mut Touched) {
        let t = &mut self.tables;
        let emptied = match t.brokers.get_mut(name) {
            Some(group) => {
                group.addrs.retain(|_, a| a != addr);
                group.addrs.is_empty()
            }
            None => false,
        };
        if !emptied {
            touched.reduced.insert(name.to_owned());
            return;
        }
        t.brokers.remove(name);
        if let Some(names) = t.clusters.get_mut(cluster) {
            names.remove(name);
            if names.is_empty() {
                t.clusters.remove(cluster);
            }
        }
        touched.removed.insert(name.to_owned());
    }

    /// `cleanTopicByUnRegisterRequests`: removed groups lose their queues, every empty topic
    /// goes, and a reduced acting-master group without a master loses write permission.
    fn clean_topics(&mut self, touched: &Touched) {
        let t = &mut self.tables;
        for queues in t.topics.values_mut() {
            for name in &touched.removed {
                queues.remove(name);
            }
        }
        t.drop_empty_topics();
        for name in &touched.reduced {
            // A reduced name with queues but no group would throw in Java (aborting the batch);
            // queues never outlive their group in these sequences, so it cannot happen here.
            let Some(group) = t.brokers.get(name) else { continue };
            let no_master = group.min_id().is_none_or(|id| id > 0);
            if group.acting_master && no_master {
                for queue in t.topics.values_mut().filter_map(|q| q.get_mut(name)) {
                    queue.perm &= !PERM_WRITE;
                }
            }
        }
    }

    /// Every distinct outcome of closing `conn`. Removing several brokers one after another can
    /// end differently by order (an emptied group leaves the cluster set its last unregister
    /// names), and no order is specified, so each order is an outcome.
    pub fn close_outcomes(&self, conn: ConnId) -> Vec<Model> {
        let carried = self.carried_by(conn);
        let mut outcomes: Vec<Model> = Vec::new();
        let orders = if self.exceptions.close_removes_all { permutations(carried) } else { vec![carried] };
        for order in orders {
            let mut model = self.clone();
            model.close_in_order(order);
            if !outcomes.iter().any(|m| m.tables == model.tables) {
                outcomes.push(model);
            }
        }
        outcomes
    }

    /// The live entries whose latest registration came over `conn`, by key.
    fn carried_by(&self, conn: ConnId) -> Vec<(AddrKey, Live)> {
        self.tables.live.iter().filter(|(_, l)| l.conn == conn).map(|(k, l)| (k.clone(), l.clone())).collect()
    }

    /// The connection `conn` closed (`BrokerHousekeepingService.onChannelClose`), its entries
    /// removed in key order.
    pub fn connection_closed(&mut self, conn: ConnId) {
        let carried = self.carried_by(conn);
        self.close_in_order(carried);
    }

    fn close_in_order(&mut self, carried: Vec<(AddrKey, Live)>) {
        if self.exceptions.close_removes_all {
            self.exception_close_removes_all(carried);
        } else if let Some((key, _)) = carried.first() {
            // Java takes the first entry in hash order; the sequences never rely on which.
            if let Some((name, id)) = self.setup_unregister_request(key) {
                self.unregister_broker(&key.0, &key.1, &name, id);
            }
        }
        self.after_change();
    }

    /// Exception `close_removes_all`: every live entry of the connection is removed as an
    /// UNREGISTER_BROKER with its (cluster, addr) and the name and id of the registration that
    /// wrote it would remove it.
    fn exception_close_removes_all(&mut self, carried: Vec<(AddrKey, Live)>) {
        for (key, live) in carried {
            if !self.pending.close_finds_group_by_cluster {
                self.unregister_broker(&key.0, &key.1, &live.name, live.id);
            } else if let Some((name, id)) = self.setup_unregister_request(&key) {
                self.unregister_broker(&key.0, &key.1, &name, id);
            } else {
                self.tables.live.remove(&key);
                self.tables.filters.remove(&key);
            }
        }
    }

    /// `setupUnRegisterRequest`: the first group of the live entry's cluster listing its
    /// address. Java walks `brokerAddrTable` in hash order; by name here (groups sharing an
    /// address within a cluster are ambiguous in Java).
    fn setup_unregister_request(&self, (cluster, addr): &AddrKey) -> Option<(String, i64)> {
        self.tables
            .brokers
            .values()
            .filter(|g| g.cluster == *cluster)
            .find_map(|g| g.addrs.iter().find(|(_, a)| *a == addr).map(|(id, _)| (g.name.clone(), *id)))
    }

    /// Runs after every change: exception `orphan_live_dropped`.
    pub(super) fn after_change(&mut self) {
        if !self.exceptions.orphan_live_dropped {
            return;
        }
        let listed: BTreeSet<String> = self.tables.brokers.values().flat_map(|g| g.addrs.values().cloned()).collect();
        let orphans: Vec<AddrKey> =
            self.tables.live.keys().filter(|(_, addr)| !listed.contains(addr)).cloned().collect();
        for key in orphans {
            // Dropped as an unregister would drop it: with its filter servers.
            self.tables.live.remove(&key);
            if !self.pending.orphan_drop_keeps_filter_servers {
                self.tables.filters.remove(&key);
            }
        }
    }
}

/// Every order of `items` (a connection carries a handful of registrations at most).
fn permutations<T: Clone>(items: Vec<T>) -> Vec<Vec<T>> {
    if items.len() <= 1 {
        return vec![items];
    }
    let mut all = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.clone();
        let first = rest.remove(i);
        for mut tail in permutations(rest) {
            tail.insert(0, first.clone());
            all.push(tail);
        }
    }
    all
}
