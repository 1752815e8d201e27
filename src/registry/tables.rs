//! The route tables of spec §5.1 as plain maps, plus the per-topic cache of encoded routes.
//!
//! Every mutation of queue data goes through `put_queue` / `remove_queue`, which keep the
//! broker→topics index and the route cache right; every change to a broker group goes
//! through `touch_broker`. Nothing here does I/O or reads a clock: callers pass `now`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use bytes::Bytes;

use super::cache::RouteCache;
use super::messages::ConnId;
use super::options::RegistryOptions;
use super::view;
use crate::model::{BrokerData, DataVersion, QueueData, TopicQueueMappingInfo};
use crate::protocol::json::JsonStyle;

/// Liveness is keyed by (cluster, broker address), as in Java 5.x.
pub type LiveKey = (String, String);

/// What the NameServer knows about one live broker instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveBroker {
    /// When the latest registration or heartbeat arrived (ms on the registry clock).
    pub last_update_ms: u64,
    /// How long the broker may stay silent.
    pub timeout_ms: u64,
    /// The topic-config version of its latest registration.
    pub data_version: DataVersion,
    /// The connection its latest registration came over.
    pub conn: ConnId,
    /// Its HA address, handed to its slaves.
    pub ha_server_addr: String,
    /// Fingerprint of the topic names its latest registration applied; `None` when that
    /// registration applied no topics (not master or prime slave).
    pub applied_topics: Option<u64>,
}

/// All route state of the NameServer, owned by the registry actor.
#[derive(Debug, Default)]
pub struct RouteTables {
    pub(super) options: RegistryOptions,
    /// topic → broker name → queues.
    pub(super) topic_queues: HashMap<String, BTreeMap<String, QueueData>>,
    /// broker name → group.
    pub(super) brokers: BTreeMap<String, BrokerData>,
    /// cluster name → broker names.
    pub(super) clusters: BTreeMap<String, BTreeSet<String>>,
    /// (cluster, addr) → liveness.
    pub(super) live: HashMap<LiveKey, LiveBroker>,
    /// (cluster, addr) → filter server addresses.
    pub(super) filter_servers: HashMap<LiveKey, Vec<String>>,
    /// topic → hosting broker name → static-topic mapping; never pruned, as in Java.
    pub(super) queue_mappings: HashMap<String, BTreeMap<String, TopicQueueMappingInfo>>,
    /// broker name → topics holding its queue data (index for invalidation and clean-up).
    broker_topics: HashMap<String, HashSet<String>>,
    /// broker names that lost queue data outside registration since their last full apply.
    pub(super) pruned: HashSet<String>,
    routes: RouteCache,
    cluster_info: Option<Bytes>,
    /// ORDER_TOPIC_CONFIG from the KV store: topic → `"brokerName:queueNum;..."`.
    pub(super) order_topics: BTreeMap<String, String>,
    /// The same namespace as the KVTable body returned to registering brokers; `None` when
    /// the namespace does not exist.
    pub(super) order_kv_body: Option<Bytes>,
    /// NOTIFY_MIN_BROKER_ID_CHANGE messages decided but not yet handed to the notifier.
    pub(super) outbox: Vec<MinBrokerIdChange>,
}

/// A NOTIFY_MIN_BROKER_ID_CHANGE to send (spec §5.12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinBrokerIdChange {
    /// Addresses to send it to.
    pub targets: Vec<String>,
    pub min_broker_id: i64,
    pub min_broker_addr: String,
    pub offline_broker_addr: Option<String>,
    pub ha_broker_addr: Option<String>,
}

impl MinBrokerIdChange {
    /// The notification for `group`, whose lowest id just changed; with `others_only` the new
    /// minimum itself is left out of the targets (spec §5.12).
    pub(super) fn for_group(
        group: &BrokerData,
        others_only: bool,
        offline_broker_addr: Option<String>,
        ha_broker_addr: Option<String>,
    ) -> Self {
        let (min_broker_id, min_broker_addr) =
            group.broker_addrs.iter().next().map(|(id, addr)| (*id, addr.clone())).unwrap_or_default();
        let targets =
            group.broker_addrs.values().filter(|addr| !others_only || **addr != min_broker_addr).cloned().collect();
        Self { targets, min_broker_id, min_broker_addr, offline_broker_addr, ha_broker_addr }
    }
}

impl RouteTables {
    /// Empty tables with the given options.
    pub fn new(options: RegistryOptions) -> Self {
        Self { routes: RouteCache::new(options.route_cache_max_bytes), options, ..Self::default() }
    }

    /// The options in force.
    pub fn options(&self) -> &RegistryOptions {
        &self.options
    }

    /// Puts a broker's queue data for a topic, replacing a different entry. Returns true if changed.
    pub(super) fn put_queue(&mut self, topic: &str, broker: &str, queue: QueueData) -> bool {
        let queues = match self.topic_queues.get_mut(topic) {
            Some(q) => q,
            None => self.topic_queues.entry(topic.to_owned()).or_default(),
        };
        if queues.get(broker) == Some(&queue) {
            return false;
        }
        if queues.insert(broker.to_owned(), queue).is_none() {
            self.broker_topics.entry(broker.to_owned()).or_default().insert(topic.to_owned());
        }
        self.routes.forget(topic);
        true
    }

    /// Puts queue data only where the topic has none for this broker. Returns true if added.
    pub(super) fn put_queue_if_absent(&mut self, topic: &str, broker: &str, queue: QueueData) -> bool {
        let present = self.topic_queues.get(topic).is_some_and(|q| q.contains_key(broker));
        !present && self.put_queue(topic, broker, queue)
    }

    /// Removes a broker's queue data from a topic, dropping the topic when it empties.
    pub(super) fn remove_queue(&mut self, topic: &str, broker: &str) -> bool {
        let Some(queues) = self.topic_queues.get_mut(topic) else {
            return false;
        };
        if queues.remove(broker).is_none() {
            return false;
        }
        if queues.is_empty() {
            self.topic_queues.remove(topic);
        }
        if let Some(topics) = self.broker_topics.get_mut(broker) {
            topics.remove(topic);
            if topics.is_empty() {
                self.broker_topics.remove(broker);
            }
        }
        self.routes.forget(topic);
        true
    }

    /// Changes the perm of one broker's queue data in a topic. Returns true if it existed.
    pub(super) fn update_perm(&mut self, topic: &str, broker: &str, perm: impl Fn(i32) -> i32) -> bool {
        let Some(queue) = self.topic_queues.get_mut(topic).and_then(|q| q.get_mut(broker)) else {
            return false;
        };
        let new = perm(queue.perm);
        if new != queue.perm {
            queue.perm = new;
            self.routes.forget(topic);
        }
        true
    }

    /// Stores a static-topic mapping and drops the topic's cached route.
    pub(super) fn put_mapping(&mut self, topic: &str, info: TopicQueueMappingInfo) {
        self.queue_mappings.entry(topic.to_owned()).or_default().insert(info.bname.clone(), info);
        self.routes.forget(topic);
    }

    /// The topics that hold queue data of `broker`, sorted.
    pub fn topics_of(&self, broker: &str) -> Vec<String> {
        let mut topics: Vec<String> =
            self.broker_topics.get(broker).map(|t| t.iter().cloned().collect()).unwrap_or_default();
        topics.sort();
        topics
    }

    /// Drops every cached body that shows this broker group (its routes and cluster info).
    pub(super) fn touch_broker(&mut self, broker: &str) {
        if let Some(topics) = self.broker_topics.get(broker) {
            for topic in topics {
                self.routes.forget(topic);
            }
        }
        self.cluster_info = None;
    }

    /// Drops the cached bodies of every group of `cluster` that lists `addr`: filter servers are
    /// keyed by (cluster, addr), and groups may share an address.
    pub(super) fn touch_addr(&mut self, cluster: &str, addr: &str) {
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

    /// Drops the cached cluster info after a cluster-table change.
    pub(super) fn touch_clusters(&mut self) {
        self.cluster_info = None;
    }

    /// Replaces the options; every cached route is dropped since options shape routes.
    pub fn set_options(&mut self, options: RegistryOptions) {
        self.routes = RouteCache::new(options.route_cache_max_bytes);
        self.options = options;
    }

    /// Replaces the ORDER_TOPIC_CONFIG namespace, dropping the routes whose entry changed.
    pub fn set_order_topics(&mut self, table: Option<BTreeMap<String, String>>) {
        self.order_kv_body = table.as_ref().map(|t| Bytes::from(crate::kv::encode_kv_table(t)));
        let new = table.unwrap_or_default();
        let old = std::mem::replace(&mut self.order_topics, new);
        for topic in old.keys().chain(self.order_topics.keys()) {
            if old.get(topic) != self.order_topics.get(topic) {
                self.routes.forget(topic);
            }
        }
    }

    /// Takes the notifications decided since the last call.
    pub fn take_outbox(&mut self) -> Vec<MinBrokerIdChange> {
        std::mem::take(&mut self.outbox)
    }

    /// The route of `topic` filtered to `zone` (spec §2.3.4 zone hook); built on each call.
    pub fn zone_route_body(&self, topic: &str, style: JsonStyle, zone: &str) -> Option<Bytes> {
        view::encode_route(self, topic, style, Some(zone)).map(Bytes::from)
    }

    /// The encoded route of `topic`, served from cache when nothing changed since it was built.
    pub fn route_body(&mut self, topic: &str, style: JsonStyle) -> Option<Bytes> {
        if let Some(body) = self.routes.get(topic, style) {
            return Some(body);
        }
        let body = Bytes::from(view::encode_route(self, topic, style, None)?);
        self.routes.put(topic, style, body.clone());
        Some(body)
    }

    /// The encoded ClusterInfo (always fastjson style), cached until a broker or cluster changes.
    pub fn cluster_info_body(&mut self) -> Bytes {
        if let Some(body) = &self.cluster_info {
            return body.clone();
        }
        let body = Bytes::from(view::encode_cluster_info(self));
        self.cluster_info = Some(body.clone());
        body
    }

    /// The group name and id under which `addr` is registered in `cluster` (spec §5.8).
    pub fn find_broker(&self, cluster: &str, addr: &str) -> Option<(String, i64)> {
        self.brokers
            .values()
            .filter(|b| b.cluster == cluster)
            .find_map(|b| b.broker_addrs.iter().find(|(_, a)| *a == addr).map(|(id, _)| (b.broker_name.clone(), *id)))
    }

    /// Counts for logs: (topics, broker groups, live brokers).
    pub fn sizes(&self) -> (usize, usize, usize) {
        (self.topic_queues.len(), self.brokers.len(), self.live.len())
    }
}
