//! The settings the registry consults, some of which UPDATE_NAMESRV_CONFIG changes at runtime.

use crate::settings::Settings;

/// Registry behaviour switches (Java NamesrvConfig names in brackets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryOptions {
    /// Expiry for brokers that register no `heartbeatTimeoutMillis`.
    pub default_broker_timeout_ms: u64,
    /// Drop a broker's topics that its registration no longer lists [deleteTopicWithBrokerRegistration].
    pub delete_topic_with_broker_registration: bool,
    /// Rewrite routes of master-less acting-master groups [supportActingMaster].
    pub support_acting_master: bool,
    /// Fill `orderTopicConf` in routes [orderMessageEnable].
    pub order_message_enable: bool,
    /// Return the ORDER_TOPIC_CONFIG KVTable to registering brokers [returnOrderTopicConfigToBroker].
    pub return_order_topic_config_to_broker: bool,
    /// Serve the all-topics list [enableAllTopicList].
    pub enable_all_topic_list: bool,
    /// Serve the per-cluster and unit topic lists [enableTopicList].
    pub enable_topic_list: bool,
    /// Notify brokers when a group's lowest id changes [notifyMinBrokerIdChanged].
    pub notify_min_broker_id_changed: bool,
    /// Refuse route queries right after start [needWaitForService].
    pub need_wait_for_service: bool,
    /// How long to refuse them [waitSecondsForService].
    pub wait_seconds_for_service: u64,
    /// Budget of the encoded-route cache.
    pub route_cache_max_bytes: usize,
    /// At most this share (percent) of the live brokers expire in one tick; 0: no limit.
    pub expiry_guard_percent: u32,
    /// Most distinct topics in the tables, all brokers together.
    pub max_topics_total: usize,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        Self::from(&Settings::default())
    }
}

impl From<&Settings> for RegistryOptions {
    fn from(s: &Settings) -> Self {
        Self {
            default_broker_timeout_ms: s.routing.broker_timeout_ms,
            delete_topic_with_broker_registration: s.routing.delete_topic_with_broker_registration,
            support_acting_master: s.routing.support_acting_master,
            order_message_enable: s.routing.order_message_enable,
            return_order_topic_config_to_broker: s.routing.return_order_topic_config_to_broker,
            enable_all_topic_list: s.routing.enable_all_topic_list,
            enable_topic_list: s.routing.enable_topic_list,
            notify_min_broker_id_changed: s.routing.notify_min_broker_id_changed,
            need_wait_for_service: s.routing.need_wait_for_service,
            wait_seconds_for_service: s.routing.wait_seconds_for_service,
            route_cache_max_bytes: s.routing.route_cache_max_bytes,
            expiry_guard_percent: s.routing.expiry_guard_percent,
            max_topics_total: s.limits.max_topics_total,
        }
    }
}
