//! Options, the KV store's order-topic namespace, decided notifications and the body cache.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::RouteTables;
use crate::notifier::MinBrokerIdChange;
use crate::origin::ConnId;
use crate::protocol::json::JsonStyle;
use crate::protocol::reply::body::encode_kv_table;
use crate::registry::cache::RouteCache;
use crate::registry::options::RegistryOptions;

/// Settings, the KV store's order-topic namespace, notifications and the body cache.
impl RouteTables {
    /// Replaces the options; every cached route is dropped since options shape routes.
    pub(in crate::registry) fn set_options(&mut self, options: RegistryOptions) {
        self.routes = RouteCache::new(options.routing.route_cache_max_bytes);
        self.options = options;
    }

    /// Replaces the ORDER_TOPIC_CONFIG namespace, dropping the routes whose entry changed.
    pub(in crate::registry) fn set_order_topics(&mut self, table: Option<BTreeMap<String, String>>) {
        self.order_kv_body = table.as_ref().map(|t| Bytes::from(encode_kv_table(t)));
        let new = table.unwrap_or_default();
        let old = std::mem::replace(&mut self.order_topics, new);
        for topic in old.keys().chain(self.order_topics.keys()) {
            if old.get(topic) != self.order_topics.get(topic) {
                self.routes.forget(topic);
            }
        }
    }

    /// Queues a notification for the notifier.
    pub(in crate::registry) fn notify(&mut self, change: MinBrokerIdChange) {
        self.notifications.push(change);
    }

    /// Decides to close connection `conn` (Java closes an expired broker's channel).
    pub(in crate::registry) fn close_connection(&mut self, conn: ConnId) {
        if !self.closing.contains(&conn) {
            self.closing.push(conn);
        }
    }

    /// Takes the connections decided to be closed since the last call.
    pub(in crate::registry) fn take_closing(&mut self) -> Vec<ConnId> {
        std::mem::take(&mut self.closing)
    }

    /// Takes the notifications decided since the last call.
    pub(in crate::registry) fn take_notifications(&mut self) -> Vec<MinBrokerIdChange> {
        std::mem::take(&mut self.notifications)
    }

    /// The cached route body of `topic` in `style`.
    pub(in crate::registry) fn cached_route(&mut self, topic: &str, style: JsonStyle) -> Option<Bytes> {
        self.routes.get(topic, style)
    }

    /// The route body cache, to look up in place.
    pub(in crate::registry) fn route_cache(&self) -> &RouteCache {
        &self.routes
    }

    /// Caches a route body built from the current tables.
    pub(in crate::registry) fn cache_route(&mut self, topic: &str, style: JsonStyle, body: Bytes) {
        self.routes.put(topic, style, body);
    }

    /// The cached ClusterInfo body.
    pub fn cached_cluster_info(&self) -> Option<Bytes> {
        self.cluster_info.clone()
    }

    /// Caches a ClusterInfo body built from the current tables.
    pub(in crate::registry) fn cache_cluster_info(&mut self, body: Bytes) {
        self.cluster_info = Some(body);
    }
}
