//! The route tables as plain maps (Java's `RouteInfoManager` tables), private to this module
//! and its children (`groups`: groups, clusters, liveness and filter servers; `extras`: options,
//! the order-topic namespace, notifications and the body cache).
//!
//! Every change goes through a method of this module, and each method that changes what a route
//! or the cluster info shows drops exactly the cached bodies it affects: no code elsewhere can
//! change a route and leave stale bytes behind. Nothing here does I/O or reads a clock.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;

use super::cache::RouteCache;
use super::live::LiveBroker;
use super::options::RegistryOptions;
use crate::model::{BrokerData, QueueData, TopicQueueMappingInfo};
use crate::notifier::MinBrokerIdChange;
use crate::origin::ConnId;
pub use queues::{BrokerName, TopicQueues};

#[cfg(test)]
mod check;
mod extras;
mod groups;
mod queues;

/// Maps keyed by peer-chosen names (topics, brokers) hash with a per-process random seed
/// (hashbrown's default hasher), several times faster than SipHash on short names.
type NameMap<K, V> = hashbrown::HashMap<K, V>;

/// One broker group's topics (the shared names its queue data is held under), each with the
/// `topicSysFlag` of that queue data. Held through an `Arc` and changed copy-on-write, so a
/// topic listing can take every group's set in O(groups) and build off the registry thread;
/// a set is copied only when it changes while a listing still holds it.
pub type GroupTopics = NameMap<Arc<str>, i32>;

/// All route state of the NameServer, owned by the registry actor.
#[derive(Debug, Default)]
pub struct RouteTables {
    options: RegistryOptions,
    /// topic → broker name → queues.
    topic_queues: NameMap<Arc<str>, TopicQueues>,
    /// broker name → group.
    brokers: BTreeMap<String, BrokerData>,
    /// cluster name → broker names.
    clusters: BTreeMap<String, BTreeSet<String>>,
    /// broker address → its live registration.
    live: HashMap<String, LiveBroker>,
    /// broker address → names of the groups that list it (index kept by the group edits).
    addr_groups: HashMap<String, BTreeSet<String>>,
    /// (cluster, addr) → filter server addresses.
    filter_servers: HashMap<(String, String), Vec<String>>,
    /// topic → hosting broker name → static-topic mapping; never pruned, as in Java.
    queue_mappings: HashMap<String, BTreeMap<String, TopicQueueMappingInfo>>,
    /// broker name → topics holding its queue data, with their sys flags (index for
    /// invalidation, clean-up and listings); its keys are the shared names the topics' queue
    /// data point to.
    broker_topics: NameMap<BrokerName, Arc<GroupTopics>>,
    /// Queue entries held: (topic, broker group) pairs with queue data.
    queue_entries: usize,
    /// broker names that lost queue data since their last full registration.
    pruned: HashSet<String>,
    /// broker name → fingerprint of the registration its queue data was last fully applied
    /// from; any other change to the group's queue data drops the entry.
    applied: NameMap<BrokerName, u64>,
    /// Encoded routes by topic and style.
    routes: RouteCache,
    /// The encoded ClusterInfo, until a group or cluster changes.
    cluster_info: Option<Bytes>,
    /// ORDER_TOPIC_CONFIG from the KV store: topic → `"brokerName:queueNum;..."`.
    order_topics: BTreeMap<String, String>,
    /// The same namespace as the KVTable body returned to registering brokers; `None` when
    /// the namespace does not exist.
    order_kv_body: Option<Bytes>,
    /// NOTIFY_MIN_BROKER_ID_CHANGE messages decided but not yet handed to the notifier.
    notifications: Vec<MinBrokerIdChange>,
    /// Connections decided to be closed (an expired or replaced broker's), not yet closed.
    closing: Vec<ConnId>,
    /// Bumped by every change a route snapshot would show (see `snapshot`); heartbeats and
    /// re-registrations that change nothing leave it.
    changes: u64,
}

/// Reading.
impl RouteTables {
    /// Empty tables with the given options.
    pub fn new(options: RegistryOptions) -> Self {
        Self { routes: RouteCache::new(options.routing.route_cache_max_bytes), options, ..Self::default() }
    }

    /// The options in force.
    pub fn options(&self) -> &RegistryOptions {
        &self.options
    }

    /// Each group's queues for `topic`, by broker name.
    pub fn queues(&self, topic: &str) -> Option<&TopicQueues> {
        self.topic_queues.get(topic)
    }

    /// Every topic with queue data, unsorted.
    pub fn topic_names(&self) -> impl Iterator<Item = &str> {
        self.topic_queues.keys().map(|t| &**t)
    }

    /// Every topic with queue data as the shared name the tables hold, unsorted.
    pub fn topic_arcs(&self) -> impl Iterator<Item = &Arc<str>> {
        self.topic_queues.keys()
    }

    /// Every topic with its queues, unsorted.
    pub fn topics(&self) -> impl Iterator<Item = (&str, &TopicQueues)> {
        self.topic_queues.iter().map(|(t, q)| (&**t, q))
    }

    /// The group named `name`.
    pub fn group(&self, name: &str) -> Option<&BrokerData> {
        self.brokers.get(name)
    }

    /// Every group, sorted by name.
    pub fn groups(&self) -> impl Iterator<Item = &BrokerData> {
        self.brokers.values()
    }

    /// Every cluster with its broker names, sorted.
    pub fn clusters(&self) -> impl Iterator<Item = (&str, &BTreeSet<String>)> {
        self.clusters.iter().map(|(c, names)| (c.as_str(), names))
    }

    /// The broker names of `cluster`.
    pub fn cluster(&self, cluster: &str) -> Option<&BTreeSet<String>> {
        self.clusters.get(cluster)
    }

    /// The live entry of the broker at `addr`, if it registered in `cluster`.
    pub fn live(&self, cluster: &str, addr: &str) -> Option<&LiveBroker> {
        self.live.get(addr).filter(|l| l.cluster == cluster)
    }

    /// The live entry at `addr`, whatever its cluster.
    pub fn live_at(&self, addr: &str) -> Option<&LiveBroker> {
        self.live.get(addr)
    }

    /// Every live entry by address, unsorted.
    pub fn live_entries(&self) -> impl Iterator<Item = (&str, &LiveBroker)> {
        self.live.iter().map(|(addr, l)| (addr.as_str(), l))
    }

    /// The names of the groups that list `addr`, sorted.
    pub fn groups_listing(&self, addr: &str) -> Vec<String> {
        self.addr_groups.get(addr).map(|names| names.iter().cloned().collect()).unwrap_or_default()
    }

    /// Whether some group lists `addr`.
    pub fn is_listed(&self, addr: &str) -> bool {
        self.addr_groups.contains_key(addr)
    }

    /// How many addresses groups list, and how many live entries there are.
    pub fn addr_counts(&self) -> (usize, usize) {
        (self.addr_groups.len(), self.live.len())
    }

    /// Every address some group lists, unsorted.
    pub fn listed_addrs(&self) -> impl Iterator<Item = &str> {
        self.addr_groups.keys().map(String::as_str)
    }

    /// The filter servers reported by the broker at `addr` in `cluster`.
    pub fn filter_servers(&self, cluster: &str, addr: &str) -> Option<&[String]> {
        if self.filter_servers.is_empty() {
            // A 4.x legacy: skip building the key when no broker reported any.
            return None;
        }
        self.filter_servers.get(&(cluster.to_owned(), addr.to_owned())).map(Vec::as_slice)
    }

    /// The static-topic mappings of `topic`, by hosting broker.
    pub fn mappings(&self, topic: &str) -> Option<&BTreeMap<String, TopicQueueMappingInfo>> {
        self.queue_mappings.get(topic)
    }

    /// The ORDER_TOPIC_CONFIG entry of `topic`.
    pub fn order_topic_conf(&self, topic: &str) -> Option<&str> {
        self.order_topics.get(topic).map(String::as_str)
    }

    /// The ORDER_TOPIC_CONFIG namespace as a KVTable body, when it exists.
    pub fn order_kv_body(&self) -> Option<&Bytes> {
        self.order_kv_body.as_ref()
    }

    /// The topics that hold queue data of `broker`, sorted.
    pub fn topics_of(&self, broker: &str) -> Vec<Arc<str>> {
        let mut topics: Vec<Arc<str>> =
            self.broker_topics.get(broker).map(|t| t.keys().cloned().collect()).unwrap_or_default();
        topics.sort();
        topics
    }

    /// The topics holding queue data of `broker`, as the tables' shared names, in no order.
    pub fn topic_arcs_of<'a>(&'a self, broker: &str) -> impl Iterator<Item = &'a Arc<str>> + 'a {
        self.broker_topics.get(broker).into_iter().flat_map(|t| t.keys())
    }

    /// The topic set of group `broker`, shared.
    pub fn group_topics(&self, broker: &str) -> Option<&Arc<GroupTopics>> {
        self.broker_topics.get(broker)
    }

    /// Every group's topic set, shared, by group name, in no order.
    pub fn all_group_topics(&self) -> impl Iterator<Item = (&str, &Arc<GroupTopics>)> {
        self.broker_topics.iter().map(|(name, topics)| (&**name, topics))
    }

    /// How many topics hold queue data of `broker`.
    pub fn topic_count_of(&self, broker: &str) -> usize {
        self.broker_topics.get(broker).map_or(0, |topics| topics.len())
    }

    /// Bytes of encoded routes cached.
    pub fn route_cache_bytes(&self) -> usize {
        self.routes.bytes()
    }

    /// Whether `broker` lost queue data since its last full registration.
    pub fn is_pruned(&self, broker: &str) -> bool {
        self.pruned.contains(broker)
    }

    /// The fingerprint of the registration `broker`'s queue data was fully applied from, when
    /// nothing changed it since.
    pub fn applied_fingerprint(&self, broker: &str) -> Option<u64> {
        self.applied.get(broker).copied()
    }

    /// How many changes a route snapshot would show there have been (only ever grows).
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Every static-topic mapping, as (topic, mapping), unsorted.
    pub fn mapping_entries(&self) -> impl Iterator<Item = (&str, &TopicQueueMappingInfo)> {
        self.queue_mappings.iter().flat_map(|(topic, m)| m.values().map(move |info| (topic.as_str(), info)))
    }

    /// Queue entries held: (topic, broker group) pairs with queue data.
    pub fn queue_entries(&self) -> usize {
        self.queue_entries
    }

    /// Counts for logs: (topics, broker groups, live brokers).
    pub fn sizes(&self) -> (usize, usize, usize) {
        (self.topic_queues.len(), self.brokers.len(), self.live.len())
    }
}

/// Changing queue data and static-topic mappings.
impl RouteTables {
    /// Puts a broker's queue data for a topic, replacing a different entry. Returns true if changed.
    pub fn put_queue(&mut self, topic: &str, broker: &str, queue: QueueData) -> bool {
        // The common case (a re-registration): the entry is there, perhaps changed.
        if let Some(queues) = self.topic_queues.get_mut(topic) {
            if let Some(present) = queues.get_mut(broker) {
                if *present == queue {
                    return false;
                }
                if present.topic_sys_flag != queue.topic_sys_flag {
                    let flag = self.broker_topics.get_mut(broker).and_then(|t| Arc::make_mut(t).get_mut(topic));
                    if let Some(flag) = flag {
                        *flag = queue.topic_sys_flag;
                    }
                }
                *present = queue;
                self.changes += 1;
                self.routes.forget(topic);
                self.applied.remove(broker);
                return true;
            }
        }
        let (broker, topics) = match self.broker_topics.get_key_value_mut(broker) {
            Some((name, topics)) => (name.clone(), topics),
            None => {
                let name = BrokerName::from(broker);
                (name.clone(), self.broker_topics.entry(name).or_default())
            }
        };
        let topic = match self.topic_queues.get_key_value(topic) {
            Some((name, _)) => name.clone(),
            None => Arc::from(topic),
        };
        Arc::make_mut(topics).insert(topic.clone(), queue.topic_sys_flag);
        self.changes += 1;
        self.routes.forget(&topic);
        self.applied.remove(&broker);
        self.topic_queues.entry(topic).or_default().insert(&broker, queue);
        self.queue_entries += 1;
        true
    }

    /// Puts queue data only where the topic has none for this broker. Returns true if added.
    pub(in crate::registry) fn put_queue_if_absent(&mut self, topic: &str, broker: &str, queue: QueueData) -> bool {
        let present = self.topic_queues.get(topic).is_some_and(|q| q.contains(broker));
        !present && self.put_queue(topic, broker, queue)
    }

    /// Removes a broker's queue data from a topic, dropping the topic when it empties, and marks
    /// the broker pruned so its next registration puts back what it still lists.
    pub(in crate::registry) fn remove_queue(&mut self, topic: &str, broker: &str) -> bool {
        let Some(queues) = self.topic_queues.get_mut(topic) else {
            return false;
        };
        if queues.remove(broker).is_none() {
            return false;
        }
        self.queue_entries -= 1;
        if queues.is_empty() {
            self.topic_queues.remove(topic);
        }
        if let Some(topics) = self.broker_topics.get_mut(broker) {
            Arc::make_mut(topics).remove(topic);
            if topics.is_empty() {
                self.broker_topics.remove(broker);
            }
        }
        self.pruned.insert(broker.to_owned());
        self.applied.remove(broker);
        self.changes += 1;
        self.routes.forget(topic);
        true
    }

    /// Changes the perm of one broker's queue data in a topic. Returns true if it existed.
    pub(in crate::registry) fn update_perm(&mut self, topic: &str, broker: &str, perm: impl Fn(i32) -> i32) -> bool {
        let Some(queue) = self.topic_queues.get_mut(topic).and_then(|q| q.get_mut(broker)) else {
            return false;
        };
        let new = perm(queue.perm);
        if new != queue.perm {
            queue.perm = new;
            self.changes += 1;
            self.routes.forget(topic);
            self.applied.remove(broker);
        }
        true
    }

    /// Stores a static-topic mapping.
    pub(in crate::registry) fn put_mapping(&mut self, topic: &str, info: TopicQueueMappingInfo) {
        let mappings = self.queue_mappings.entry(topic.to_owned()).or_default();
        if mappings.get(&info.bname) != Some(&info) {
            mappings.insert(info.bname.clone(), info);
            self.changes += 1;
            self.routes.forget(topic);
        }
    }

    /// Records that `broker`'s latest registration put back everything it lists.
    pub(in crate::registry) fn clear_pruned(&mut self, broker: &str) {
        self.pruned.remove(broker);
    }

    /// Records that `broker`'s queue data is exactly what a registration with `fingerprint`
    /// leaves, until something changes it.
    pub(in crate::registry) fn set_applied(&mut self, broker: &str, fingerprint: u64) {
        let name =
            self.broker_topics.get_key_value(broker).map_or_else(|| BrokerName::from(broker), |(name, _)| name.clone());
        self.applied.insert(name, fingerprint);
    }
}
