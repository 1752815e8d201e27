//! Changing broker groups, cluster membership, liveness and filter servers, keeping the address
//! index and the cached bodies right.

use std::collections::BTreeSet;

use super::RouteTables;
use crate::model::BrokerData;
use crate::registry::live::LiveBroker;

/// Changing groups, clusters, liveness and filter servers.
impl RouteTables {
    /// Adds `broker` to `cluster`. Returns true if it was not a member.
    pub(in crate::registry) fn join_cluster(&mut self, cluster: &str, broker: &str) -> bool {
        let names = match self.clusters.get_mut(cluster) {
            Some(names) => names,
            None => self.clusters.entry(cluster.to_owned()).or_default(),
        };
        let added = !names.contains(broker) && names.insert(broker.to_owned());
        if added {
            self.changes += 1;
            self.cluster_info = None;
        }
        added
    }

    /// Edits group `name`, creating it (empty, in `cluster`) when absent; the group's cached
    /// bodies are dropped if it was created or `edit` changed it. Returns `edit`'s answer and
    /// whether the group was created.
    pub(in crate::registry) fn edit_group<R>(
        &mut self,
        name: &str,
        cluster: &str,
        edit: impl FnOnce(&mut BrokerData) -> R,
    ) -> (R, bool) {
        let created = !self.brokers.contains_key(name);
        if created {
            self.brokers.insert(name.to_owned(), BrokerData::new(cluster, name));
        }
        let answer = self.edit_existing_group(name, edit).expect("group exists");
        if created {
            self.touch_broker(name);
        }
        (answer, created)
    }

    /// Edits group `name` if it exists, dropping its cached bodies if `edit` changed it and
    /// keeping the address index in step.
    pub(in crate::registry) fn edit_existing_group<R>(
        &mut self,
        name: &str,
        edit: impl FnOnce(&mut BrokerData) -> R,
    ) -> Option<R> {
        let group = self.brokers.get_mut(name)?;
        let before = group.clone();
        let answer = edit(group);
        if *group == before {
            return Some(answer);
        }
        let after: BTreeSet<String> = group.broker_addrs.values().cloned().collect();
        for addr in before.broker_addrs.values().filter(|a| !after.contains(*a)) {
            self.unindex_addr(addr, name);
        }
        for addr in after {
            self.addr_groups.entry(addr).or_default().insert(name.to_owned());
        }
        self.touch_broker(name);
        Some(answer)
    }

    fn unindex_addr(&mut self, addr: &str, name: &str) {
        if let Some(names) = self.addr_groups.get_mut(addr) {
            names.remove(name);
            if names.is_empty() {
                self.addr_groups.remove(addr);
            }
        }
    }

    /// Removes group `name` with its queue data, and takes the name out of `cluster` (the
    /// cluster the removal named, as Java does), dropping that cluster when it empties.
    pub(in crate::registry) fn remove_group(&mut self, name: &str, cluster: &str) {
        let Some(group) = self.brokers.remove(name) else {
            return;
        };
        for addr in group.broker_addrs.values() {
            self.unindex_addr(addr, name);
        }
        if let Some(names) = self.clusters.get_mut(cluster) {
            names.remove(name);
            if names.is_empty() {
                self.clusters.remove(cluster);
            }
        }
        for topic in self.topics_of(name) {
            self.remove_queue(&topic, name);
        }
        self.pruned.remove(name);
        self.applied.remove(name);
        self.changes += 1;
        self.cluster_info = None;
    }

    /// Sets the live entry at `addr`.
    pub(in crate::registry) fn set_live(&mut self, addr: &str, live: LiveBroker) {
        match self.live.get_mut(addr) {
            Some(entry) => {
                if !entry.same_registration(&live) {
                    self.changes += 1;
                }
                *entry = live;
            }
            None => {
                self.changes += 1;
                self.live.insert(addr.to_owned(), live);
            }
        }
    }

    /// Removes and returns the live entry at `addr` if it registered in `cluster`.
    pub(in crate::registry) fn take_live(&mut self, cluster: &str, addr: &str) -> Option<LiveBroker> {
        self.live(cluster, addr)?;
        self.changes += 1;
        self.live.remove(addr)
    }

    /// The live entry at `addr` in `cluster`, to refresh it (liveness shapes no cached body).
    pub(in crate::registry) fn live_mut(&mut self, cluster: &str, addr: &str) -> Option<&mut LiveBroker> {
        self.live.get_mut(addr).filter(|l| l.cluster == cluster)
    }

    /// Every live entry, to refresh them all (liveness shapes no cached body).
    pub(in crate::registry) fn live_values_mut(&mut self) -> impl Iterator<Item = &mut LiveBroker> {
        self.live.values_mut()
    }

    /// Replaces (or with `None` removes) the filter servers of the broker at `addr` in `cluster`,
    /// dropping the cached bodies of every group of `cluster` that lists `addr` if they changed.
    pub(in crate::registry) fn set_filter_servers(&mut self, cluster: &str, addr: &str, servers: Option<Vec<String>>) {
        let key = (cluster.to_owned(), addr.to_owned());
        let previous = match servers.clone() {
            Some(list) => self.filter_servers.insert(key, list),
            None => self.filter_servers.remove(&key),
        };
        if previous != servers {
            let listing: Vec<String> = self
                .brokers
                .values()
                .filter(|b| b.cluster == cluster && b.broker_addrs.values().any(|a| a == addr))
                .map(|b| b.broker_name.clone())
                .collect();
            for name in listing {
                self.touch_broker(&name);
            }
        }
    }

    /// Drops every cached body that shows this broker group (its routes and cluster info).
    fn touch_broker(&mut self, broker: &str) {
        self.changes += 1;
        if let Some(topics) = self.broker_topics.get(broker) {
            for topic in topics.keys() {
                self.routes.forget(topic);
            }
        }
        self.cluster_info = None;
    }
}
