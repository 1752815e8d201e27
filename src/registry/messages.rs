//! Every message the registry accepts: one struct each, with the domain value it answers.
//!
//! Encoding to wire frames happens in `dispatch`, never here; `handlers` applies them.

use bytes::Bytes;

use super::admin::UnitFilter;
use super::liveness::{BrokerRef, Fenced};
use super::options::RegistryOptions;
use super::register::{RegisterOutcome, Registration};
use crate::model::{DataVersion, QueueData};
use crate::protocol::json::JsonStyle;
use crate::request;

pub use crate::mailbox::ConnId;

/// REGISTER_BROKER with its body already decoded; `None` answers a rejected registration.
#[derive(Debug)]
pub struct RegisterBroker {
    pub conn: ConnId,
    pub registration: Registration,
}
request!(RegisterBroker, Option<RegisterOutcome>);

/// UNREGISTER_BROKER; answers whether the broker was known, or that a newer registration fenced it.
#[derive(Debug)]
pub struct UnregisterBroker {
    pub conn: ConnId,
    pub broker: BrokerRef,
}
request!(UnregisterBroker, Result<bool, Fenced>);

/// What a route query finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteAnswer {
    /// The encoded TopicRouteData.
    Found(Bytes),
    /// No queues, or no known broker for them.
    NotFound,
    /// The readiness gate (`need_wait_for_service`) is still closed.
    NotReady,
}

/// GET_ROUTEINFO_BY_TOPIC, optionally filtered to a zone.
#[derive(Debug)]
pub struct GetRouteInfo {
    pub conn: ConnId,
    pub topic: String,
    pub style: JsonStyle,
    pub zone: Option<String>,
}
request!(GetRouteInfo, RouteAnswer);

/// GET_BROKER_CLUSTER_INFO; answers the encoded ClusterInfo.
#[derive(Debug)]
pub struct GetClusterInfo {
    pub conn: ConnId,
}
request!(GetClusterInfo, Bytes);

/// QUERY_DATA_VERSION; answers (changed, stored version) and refreshes the broker.
#[derive(Debug)]
pub struct QueryDataVersion {
    pub conn: ConnId,
    pub cluster: String,
    pub addr: String,
    pub version: Option<DataVersion>,
}
request!(QueryDataVersion, (bool, Option<DataVersion>));

/// BROKER_HEARTBEAT; answers whether the broker was live.
#[derive(Debug)]
pub struct BrokerHeartbeat {
    pub conn: ConnId,
    pub cluster: String,
    pub addr: String,
}
request!(BrokerHeartbeat, bool);

/// A connection that carried broker registrations has closed; its brokers go at once.
#[derive(Debug)]
pub struct ConnectionClosed {
    pub conn: ConnId,
}
request!(ConnectionClosed, ());

/// WIPE_WRITE_PERM_OF_BROKER; answers the topic count.
#[derive(Debug)]
pub struct WipeWritePerm {
    pub conn: ConnId,
    pub broker: String,
}
request!(WipeWritePerm, usize);

/// ADD_WRITE_PERM_OF_BROKER; answers the topic count.
#[derive(Debug)]
pub struct AddWritePerm {
    pub conn: ConnId,
    pub broker: String,
}
request!(AddWritePerm, usize);

/// DELETE_TOPIC_IN_NAMESRV, for one cluster or everywhere.
#[derive(Debug)]
pub struct DeleteTopic {
    pub conn: ConnId,
    pub topic: String,
    pub cluster: Option<String>,
}
request!(DeleteTopic, ());

/// REGISTER_TOPIC_IN_NAMESRV with the queue data of its body; answers how many were put.
#[derive(Debug)]
pub struct RegisterTopic {
    pub conn: ConnId,
    pub topic: String,
    pub queues: Vec<(String, QueueData)>,
}
request!(RegisterTopic, usize);

/// A topic list switched off by `enable_all_topic_list` / `enable_topic_list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disabled;

/// GET_ALL_TOPIC_LIST_FROM_NAMESERVER.
#[derive(Debug)]
pub struct GetAllTopics {
    pub conn: ConnId,
}
request!(GetAllTopics, Result<Bytes, Disabled>);

/// GET_TOPICS_BY_CLUSTER. The switch is checked before the header, as in Java, so a missing
/// `cluster` answers `Ok(None)` only when the list is enabled.
#[derive(Debug)]
pub struct GetTopicsByCluster {
    pub conn: ConnId,
    pub cluster: Option<String>,
}
request!(GetTopicsByCluster, Result<Option<Bytes>, Disabled>);

/// GET_SYSTEM_TOPIC_LIST_FROM_NS (not gated).
#[derive(Debug)]
pub struct GetSystemTopics {
    pub conn: ConnId,
}
request!(GetSystemTopics, Bytes);

/// The unit-topic lists.
#[derive(Debug)]
pub struct GetUnitTopics {
    pub conn: ConnId,
    pub filter: UnitFilter,
}
request!(GetUnitTopics, Result<Bytes, Disabled>);

/// GET_BROKER_MEMBER_GROUP; answers the encoded body (the cluster is echoed, not checked).
#[derive(Debug)]
pub struct GetBrokerMemberGroup {
    pub conn: ConnId,
    pub cluster: String,
    pub broker: String,
}
request!(GetBrokerMemberGroup, Bytes);

/// The KV store's ORDER_TOPIC_CONFIG namespace changed (`None`: it does not exist).
#[derive(Debug)]
pub struct SetOrderTopicConfig {
    pub conn: ConnId,
    pub table: Option<std::collections::BTreeMap<String, String>>,
}
request!(SetOrderTopicConfig, ());

/// UPDATE_NAMESRV_CONFIG changed runtime settings.
#[derive(Debug)]
pub struct ApplyOptions {
    pub conn: ConnId,
    pub options: RegistryOptions,
}
request!(ApplyOptions, ());
