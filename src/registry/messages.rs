//! Every message the registry accepts: one struct each, with the domain value it answers.
//!
//! Encoding to wire frames happens in `dispatch`, never here; `handlers` applies them.

use bytes::Bytes;

use super::binding::BoundElsewhere;
use super::listings::{ListingInputs, ListingKind};
use super::liveness::{BrokerRef, DataVersionAnswer};
use super::options::RegistryOptions;
use super::register::{Registered, Registration};
use super::route_answer::{RouteAnswers, RouteQuery};
use super::topic_limit::RegisterRefused;
use crate::model::{DataVersion, QueueData};
use crate::origin::ConnId;
use crate::request;

/// REGISTER_BROKER with its body already decoded; `None` answers a rejected registration, an
/// error one for a broker live under another access key or past `max_topics_total`.
#[derive(Debug)]
pub struct RegisterBroker {
    pub conn: ConnId,
    pub registration: Registration,
}
request!(RegisterBroker, Result<Registered, RegisterRefused>);

/// UNREGISTER_BROKER, applied whatever connection it came over; answers whether the broker
/// was known. With `access_key`, a broker live under another access key is not removed.
#[derive(Debug)]
pub struct UnregisterBroker {
    pub conn: ConnId,
    pub broker: BrokerRef,
    pub access_key: Option<String>,
}
request!(UnregisterBroker, Result<bool, BoundElsewhere>);

/// A connection about to carry broker registrations: the registry may close it later (when
/// a broker registered over it expires). Sent before its first REGISTER_BROKER.
#[derive(Debug)]
pub struct AttachConnection {
    pub conn: ConnId,
    pub closer: actix::Recipient<CloseConnection>,
}
request!(AttachConnection, ());

/// Sent by the registry to a connection it wants closed: a broker registered over it expired,
/// and Java closes the channel of an expired broker so it reconnects and registers afresh.
#[derive(Debug, actix::Message)]
#[rtype(result = "()")]
pub struct CloseConnection {
    /// Why, for the connection's log line.
    pub reason: &'static str,
}

/// Route queries answered in order: one message (and one thread wake-up each way) for all the
/// queries an I/O thread read in one turn; a query alone is a batch of one.
#[derive(Debug)]
pub struct RouteBatch {
    pub conn: ConnId,
    pub queries: Vec<RouteQuery>,
}
request!(RouteBatch, RouteAnswers, query);

/// GET_BROKER_CLUSTER_INFO; answers the encoded ClusterInfo.
#[derive(Debug)]
pub struct GetClusterInfo {
    pub conn: ConnId,
}
request!(GetClusterInfo, Bytes, query);

/// QUERY_DATA_VERSION; answers how the stored version compares and refreshes the broker, unless the
/// broker at `addr` is live under another access key than `access_key` (when checked).
#[derive(Debug)]
pub struct QueryDataVersion {
    pub conn: ConnId,
    pub cluster: String,
    pub addr: String,
    pub version: Option<DataVersion>,
    pub access_key: Option<String>,
}
request!(QueryDataVersion, Result<DataVersionAnswer, BoundElsewhere>);

/// BROKER_HEARTBEAT; answers whether the broker was live, unless it is live under another
/// access key than `access_key` (when checked).
#[derive(Debug)]
pub struct BrokerHeartbeat {
    pub conn: ConnId,
    pub cluster: String,
    pub addr: String,
    pub access_key: Option<String>,
}
request!(BrokerHeartbeat, Result<bool, BoundElsewhere>);

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

/// REGISTER_TOPIC_IN_NAMESRV with the queue data of its body; answers how many were put, or
/// refuses a new topic past `max_topics_total`.
#[derive(Debug)]
pub struct RegisterTopic {
    pub conn: ConnId,
    pub topic: String,
    pub queues: Vec<(String, QueueData)>,
}
request!(RegisterTopic, Result<usize, RegisterRefused>);

/// The inputs of a topic listing (built off the registry thread, see `listings`), with whether
/// its switch (`enable_all_topic_list` for every topic, `enable_topic_list` for the others) is
/// on.
#[derive(Debug)]
pub struct GetListingInputs {
    pub conn: ConnId,
    pub kind: ListingKind,
}
request!(GetListingInputs, ListingInputs, query);

/// GET_SYSTEM_TOPIC_LIST_FROM_NS (not gated).
#[derive(Debug)]
pub struct GetSystemTopics {
    pub conn: ConnId,
}
request!(GetSystemTopics, Bytes, query);

/// GET_BROKER_MEMBER_GROUP; answers the encoded body (the cluster is echoed, not checked).
#[derive(Debug)]
pub struct GetBrokerMemberGroup {
    pub conn: ConnId,
    pub cluster: String,
    pub broker: String,
}
request!(GetBrokerMemberGroup, Bytes, query);

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

/// The registry's counts, for `/metrics` and the status page.
#[derive(Debug)]
pub struct GetFigures {
    pub conn: ConnId,
}
request!(GetFigures, crate::metrics::RegistryFigures, query);

/// Everything a `/metrics` scrape reads from the registry, in one turn: its counts and the
/// broker counts per cluster and role, sorted by cluster.
#[derive(Debug)]
pub struct GetScrapeFigures {
    pub conn: ConnId,
}
request!(GetScrapeFigures, crate::metrics::registry_figures::ScrapeFigures, query);

/// One live broker as the status page shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BrokerStatus {
    pub cluster: String,
    pub broker_name: String,
    pub broker_id: i64,
    pub addr: String,
    /// The MQVersion ordinal of its latest registration.
    pub version: i32,
    /// The dataVersion counter of its latest registration.
    pub data_version: i64,
    /// Milliseconds since its latest registration or heartbeat; for a broker loaded from the
    /// route snapshot and not heard since, since its last heartbeat before the snapshot.
    pub silent_ms: u64,
    /// How long it may stay silent.
    pub timeout_ms: u64,
    /// Milliseconds until it expires if it stays silent.
    pub expires_in_ms: u64,
    /// Loaded from the route snapshot at start and not registered since.
    pub provisional: bool,
    /// For a provisional broker, how old the snapshot it came from is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_age_ms: Option<u64>,
    /// Topics with its group's queue data.
    pub topics: usize,
    /// The connection its latest registration came over.
    pub conn: u64,
}

/// Every live broker, sorted by cluster, name and id.
#[derive(Debug)]
pub struct ListBrokers {
    pub conn: ConnId,
}
request!(ListBrokers, Vec<BrokerStatus>, query);

/// The readiness gate (`need_wait_for_service`): answers how long route queries still wait,
/// `None` once they are served.
#[derive(Debug)]
pub struct GetReadiness {
    pub conn: ConnId,
}
request!(GetReadiness, Option<std::time::Duration>, query);

/// The liveness probe: answered at once (an empty handler), so a timely answer shows the
/// registry's thread is turning.
#[derive(Debug)]
pub struct Ping {
    pub conn: ConnId,
}
request!(Ping, (), query);

/// Blocks the registry for `millis` (for testing liveness probes; nothing sends it otherwise).
#[cfg(test)]
#[derive(Debug)]
pub struct Stall {
    pub conn: ConnId,
    pub millis: u64,
}
#[cfg(test)]
request!(Stall, ());

/// At start: loads a route snapshot (when there is one) as provisional brokers, and starts
/// handing snapshots to `sink` (when given). Answers how many brokers are provisional.
#[derive(Debug)]
pub struct LoadSnapshot {
    pub conn: ConnId,
    pub snapshot: Option<super::snapshot::Snapshot>,
    /// How long ago the snapshot was taken.
    pub age_ms: u64,
    pub sink: Option<Box<dyn super::snapshot_pace::SnapshotSink>>,
}
request!(LoadSnapshot, usize);

/// At shutdown, before connections close: answers the last snapshot (when snapshots are on)
/// and stops taking them, so the closes shutdown causes are never written.
#[derive(Debug)]
pub struct FinalSnapshot {
    pub conn: ConnId,
}
request!(FinalSnapshot, Option<super::snapshot::Snapshot>);
