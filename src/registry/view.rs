//! What a route query sees: the parts of one topic's route picked from the tables (Java's
//! `RouteInfoManager.pickupTopicRouteData` and `ZoneRouteRPCHook`), the ClusterInfo, and
//! the cache of both as encoded bodies.

use std::borrow::Cow;

use bytes::Bytes;

use super::tables::RouteTables;
use crate::metrics::registry_figures::{ClusterFigures, MAX_CLUSTER_SERIES};
use crate::metrics::RegistryFigures;
use crate::model::{BrokerData, MASTER_ID, PERM_WRITE};
use crate::protocol::json::JsonStyle;
use crate::protocol::reply::body::{encode_cluster_info, encode_topic_route, TopicRoute};

/// Topics exempt from the acting-master rewrite (the brokers' own member-sync topics).
const SYNC_BROKER_MEMBER_PREFIX: &str = "rmq_sys_SYNC_BROKER_MEMBER_";

impl RouteTables {
    /// The registry's counts, as `/metrics`, the status page and the mailbox summary show them.
    pub fn figures(&self) -> RegistryFigures {
        let (topics, _, live) = self.sizes();
        RegistryFigures {
            brokers: live,
            clusters: self.clusters().count(),
            topics,
            queue_entries: self.queue_entries(),
            route_cache_bytes: self.route_cache_bytes(),
            provisional: self.provisional_count(),
        }
    }

    /// Broker counts per cluster, sorted by cluster: masters (brokerId 0), other members, and
    /// groups with members but no master.
    pub fn cluster_figures(&self) -> Vec<ClusterFigures> {
        let figures = |(cluster, names): (&str, &std::collections::BTreeSet<String>)| {
            let mut f = ClusterFigures { cluster: cluster.to_owned(), ..Default::default() };
            for group in names.iter().filter_map(|name| self.group(name)) {
                let has_master = group.broker_addrs.contains_key(&MASTER_ID);
                f.masters += usize::from(has_master);
                f.slaves += group.broker_addrs.len() - usize::from(has_master);
                f.groups_without_master += usize::from(!has_master && !group.broker_addrs.is_empty());
            }
            f
        };
        self.clusters().take(MAX_CLUSTER_SERIES).map(figures).collect()
    }

    /// The encoded route of `topic`, served from cache when nothing changed since it was built.
    pub fn route_body(&mut self, topic: &str, style: JsonStyle) -> Option<Bytes> {
        if let Some(body) = self.cached_route(topic, style) {
            return Some(body);
        }
        let body = Bytes::from(self.build_route(topic, style, None)?);
        self.cache_route(topic, style, body.clone());
        Some(body)
    }

    /// The route of `topic` filtered to `zone` (Java's `ZoneRouteRPCHook`); built on each call.
    pub fn zone_route_body(&self, topic: &str, style: JsonStyle, zone: &str) -> Option<Bytes> {
        self.build_route(topic, style, Some(zone)).map(Bytes::from)
    }

    /// The encoded ClusterInfo (always fastjson style), cached until a broker or cluster changes.
    pub(in crate::registry) fn cluster_info_body(&mut self) -> Bytes {
        if let Some(body) = self.cached_cluster_info() {
            return body;
        }
        let body = Bytes::from(self.build_cluster_info());
        self.cache_cluster_info(body.clone());
        body
    }

    /// Encodes the route of `topic` from the tables, bypassing the cache; `None` when the topic
    /// has no queues or no known broker group.
    ///
    /// With a `zone`, groups that have a master in another zone are left out with their queues
    /// and filter servers; the requested JSON style is kept.
    pub fn build_route(&self, topic: &str, style: JsonStyle, zone: Option<&str>) -> Option<Vec<u8>> {
        let all_queues = self.queues(topic)?;
        let mut route = TopicRoute {
            broker_datas: all_queues.names().filter_map(|name| self.group(name).map(Cow::Borrowed)).collect(),
            ..TopicRoute::default()
        };
        if route.broker_datas.is_empty() {
            return None;
        }
        if self.options().routing.support_acting_master && !topic.starts_with(SYNC_BROKER_MEMBER_PREFIX) {
            rewrite_acting_masters(&mut route.broker_datas, |name| all_queues.get(name).map(|q| q.perm));
        }
        route.queue_datas = all_queues.iter().collect();
        if let Some(zone) = zone {
            let in_zone = |g: &BrokerData| {
                !g.broker_addrs.contains_key(&MASTER_ID)
                    || g.zone_name.as_deref().is_some_and(|z| z.eq_ignore_ascii_case(zone))
            };
            let (kept, dropped): (Vec<_>, Vec<_>) = route.broker_datas.into_iter().partition(|g| in_zone(g));
            route.broker_datas = kept;
            route.queue_datas.retain(|(name, _)| !dropped.iter().any(|d| d.broker_name == *name));
            // Java drops the filter servers of every address of a dropped group, keyed by address
            // alone, so a kept group sharing such an address loses them too.
            let dropped_addrs: Vec<String> = dropped.iter().flat_map(|g| g.broker_addrs.values().cloned()).collect();
            route.filter_servers = self.route_filter_servers(&route.broker_datas);
            route.filter_servers.retain(|(addr, _)| !dropped_addrs.iter().any(|d| d == addr));
        } else {
            route.filter_servers = self.route_filter_servers(&route.broker_datas);
        }
        if self.options().routing.order_message_enable {
            route.order_topic_conf = self.order_topic_conf(topic);
        }
        route.mappings = self.mappings(topic);
        Some(encode_topic_route(&route, style))
    }

    /// The filter servers of every address of `groups`, once per address (Java keys them by address).
    fn route_filter_servers<'b>(&'b self, groups: &'b [Cow<'b, BrokerData>]) -> Vec<(&'b str, &'b [String])> {
        let mut servers = Vec::new();
        for group in groups {
            for addr in group.broker_addrs.values() {
                let seen = servers.iter().any(|(a, _)| *a == addr.as_str());
                if let Some(list) = self.filter_servers(&group.cluster, addr).filter(|_| !seen) {
                    servers.push((addr.as_str(), list));
                }
            }
        }
        servers
    }

    /// Encodes the ClusterInfo from the tables, bypassing the cache.
    pub fn build_cluster_info(&self) -> Vec<u8> {
        let clusters = self.clusters().map(|(cluster, names)| (cluster, names.iter().map(String::as_str)));
        encode_cluster_info(self.groups(), clusters)
    }
}

/// A master-less acting-master group whose queues are read-only shows its lowest-id member as
/// id 0, so clients can keep reading from it (Java's `pickupTopicRouteData` with
/// `supportActingMaster`). Only the rewritten groups are copied; the others stay borrowed.
fn rewrite_acting_masters(groups: &mut [Cow<BrokerData>], perm_of: impl Fn(&str) -> Option<i32>) {
    let masterless = |g: &BrokerData| !g.broker_addrs.is_empty() && !g.broker_addrs.contains_key(&MASTER_ID);
    if !groups.iter().any(|g| masterless(g)) {
        return;
    }
    for group in groups.iter_mut().filter(|g| masterless(g) && g.enable_acting_master) {
        let read_only = perm_of(&group.broker_name).is_some_and(|perm| perm & PERM_WRITE == 0);
        if read_only {
            let addrs = &mut group.to_mut().broker_addrs;
            if let Some((_, addr)) = addrs.pop_first() {
                addrs.insert(MASTER_ID, addr);
            }
        }
    }
}
