//! Every figure the server exports to Prometheus (`namesrv_*`, plus the standard `process_*`),
//! with handles cheap enough for the request path: a request costs one counter increment and
//! one lock-free histogram observation, found by index, never by a label lookup.
//!
//! Figures that live in actors (brokers, topics, mailbox depths, cache size) are read when
//! scraped. `history` keeps the last minutes of request rate, p99 and mailbox depth.

pub mod build;
pub mod controller;
pub mod elections;
pub mod histogram;
pub mod history;
mod labels;
mod process;
pub mod registry_figures;
pub mod requests;
pub mod snapshot;
pub mod text;
pub mod zero;

pub use registry_figures::RegistryFigures;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::protocol::controller::ControllerRequestCode;
use histogram::SecondsHistogram;
use labels::{ActorLabel, ActorMessageLabels, FileResultLabels, ReasonLabel, ResultLabel};
use requests::RequestFigures;

/// Which listener a request came in on: the codes of each have their own names
/// (BROKER_HEARTBEAT on the controller port is `CONTROLLER_BROKER_HEARTBEAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The NameServer port.
    Namesrv,
    /// The controller port.
    Controller,
}

/// The name of controller code `code` in the request metrics: Java's, but for the heartbeat,
/// which the NameServer port has too.
pub fn controller_code_name(code: ControllerRequestCode) -> &'static str {
    match code {
        ControllerRequestCode::BrokerHeartbeat => "CONTROLLER_BROKER_HEARTBEAT",
        other => other.name(),
    }
}

/// Why a broker went (`namesrv_broker_removals_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// Silent past its timeout.
    Expired,
    /// Its connection closed.
    ConnectionClosed,
    /// It (or an admin) sent UNREGISTER_BROKER, or another broker took its address.
    Unregistered,
}

impl Removal {
    /// Its `reason` label.
    pub fn label(self) -> &'static str {
        match self {
            Removal::Expired => "expired",
            Removal::ConnectionClosed => "connection_closed",
            Removal::Unregistered => "unregistered",
        }
    }
}

/// Every exported figure. Always present: with metrics off ([`Metrics::off`]) nothing is
/// exported and the recording methods do nothing.
#[derive(Debug)]
pub struct Metrics {
    /// Whether the figures are exported (`metrics_enabled`).
    on: bool,
    registry: Registry,
    requests: RequestFigures,
    /// Open connections.
    pub connections: Gauge,
    /// Connections accepted since start.
    pub connections_accepted: Counter,
    /// Frame bytes read.
    pub bytes_received: Counter,
    /// Frame bytes written.
    pub bytes_sent: Counter,
    brokers: Gauge,
    provisional_brokers: Gauge,
    clusters: Gauge,
    /// Broker counts per cluster and role.
    pub cluster_brokers: registry_figures::ClusterGauges,
    topics: Gauge,
    queue_entries: Gauge,
    registrations: Family<ResultLabel, Counter>,
    removals: Family<ReasonLabel, Counter>,
    mailbox_depth: Family<ActorLabel, Gauge>,
    mailbox_handle: Family<ActorMessageLabels, SecondsHistogram>,
    /// Route queries answered from the cache of encoded routes.
    pub route_cache_hits: Counter,
    /// Route queries that built their body.
    pub route_cache_misses: Counter,
    route_cache_bytes: Gauge,
    /// KV changes that could not be made durable.
    pub kv_write_failures: Counter,
    /// Config updates that could not be made durable.
    pub config_write_failures: Counter,
    /// Expiry ticks that came late because this process stalled.
    pub registry_stalls: Counter,
    /// Steps of the wall clock the expiry tick saw (never counted as stalls).
    pub wall_clock_steps: Counter,
    config_updates: Family<ResultLabel, Counter>,
    acl_refusals: Family<ReasonLabel, Counter>,
    tls_connections: Family<ResultLabel, Counter>,
    security_reloads: Family<FileResultLabels, Counter>,
    mailboxes: Mutex<Vec<(&'static str, Arc<AtomicUsize>)>>,
    /// Samples of the last minutes, for the status page and the minute summary.
    pub history: history::History,
    /// The controller's Raft and election figures.
    pub controller: controller::ControllerFigures,
    /// The route snapshot writer's figures.
    pub route_snapshot: snapshot::SnapshotFigures,
}

impl Metrics {
    /// Every metric, registered and zero.
    pub fn new() -> Arc<Self> {
        Self::build(true)
    }

    /// Metrics that are off: nothing exported, nothing recorded by the recording methods.
    pub fn off() -> Arc<Self> {
        Self::build(false)
    }

    /// Whether the figures are exported (`metrics_enabled`).
    pub fn is_on(&self) -> bool {
        self.on
    }

    fn build(on: bool) -> Arc<Self> {
        let mut registry = Registry::default();
        let m = Metrics {
            on,
            registry: Registry::default(),
            requests: RequestFigures::for_every_code(),
            connections: Gauge::default(),
            connections_accepted: Counter::default(),
            bytes_received: Counter::default(),
            bytes_sent: Counter::default(),
            brokers: Gauge::default(),
            provisional_brokers: Gauge::default(),
            clusters: Gauge::default(),
            cluster_brokers: Default::default(),
            queue_entries: Gauge::default(),
            topics: Gauge::default(),
            registrations: Family::default(),
            removals: Family::default(),
            mailbox_depth: Family::default(),
            mailbox_handle: Family::default(),
            route_cache_hits: Counter::default(),
            route_cache_misses: Counter::default(),
            route_cache_bytes: Gauge::default(),
            kv_write_failures: Counter::default(),
            config_write_failures: Counter::default(),
            registry_stalls: Counter::default(),
            wall_clock_steps: Counter::default(),
            config_updates: Family::default(),
            acl_refusals: Family::default(),
            tls_connections: Family::default(),
            security_reloads: Family::default(),
            mailboxes: Mutex::new(Vec::new()),
            history: history::History::default(),
            controller: controller::ControllerFigures::default(),
            route_snapshot: snapshot::SnapshotFigures::default(),
        };
        m.register(registry.sub_registry_with_prefix("namesrv"));
        m.zero_series();
        registry.register_collector(Box::new(process::ProcessCollector::default()));
        Arc::new(Metrics { registry, ..m })
    }

    /// Registers every `namesrv_*` metric in `ns`.
    fn register(&self, ns: &mut Registry) {
        ns.register("build_info", "Version and commit of this binary (always 1)", build::build_info());
        self.requests.register(ns);
        ns.register("connections", "Connections open now", self.connections.clone());
        ns.register("connections_accepted", "Connections accepted since start", self.connections_accepted.clone());
        ns.register("bytes_received", "Frame bytes read from peers", self.bytes_received.clone());
        ns.register("bytes_sent", "Frame bytes written to peers", self.bytes_sent.clone());
        ns.register("brokers", "Live broker instances", self.brokers.clone());
        let provisional = self.provisional_brokers.clone();
        ns.register("provisional_brokers", "Brokers loaded from a route snapshot, not registered since", provisional);
        ns.register("clusters", "Clusters", self.clusters.clone());
        self.cluster_brokers.register(ns);
        ns.register("topics", "Topics with queue data", self.topics.clone());
        let entries = self.queue_entries.clone();
        ns.register("route_queue_entries", "Queue entries: a topic's queue data on one broker group", entries);
        ns.register("broker_registrations", "REGISTER_BROKER requests, by result", self.registrations.clone());
        ns.register("broker_removals", "Brokers removed, by reason", self.removals.clone());
        ns.register("mailbox_depth", "Messages queued to an actor and not yet handled", self.mailbox_depth.clone());
        ns.register("mailbox_handle_seconds", "Time an actor spent on one message", self.mailbox_handle.clone());
        ns.register("route_cache_hits", "Route queries answered from cached bodies", self.route_cache_hits.clone());
        ns.register("route_cache_misses", "Route queries that built their body", self.route_cache_misses.clone());
        ns.register("route_cache_bytes", "Bytes of cached route bodies", self.route_cache_bytes.clone());
        ns.register("kv_write_failures", "KV changes that could not be made durable", self.kv_write_failures.clone());
        let config_writes = self.config_write_failures.clone();
        ns.register("config_write_failures", "Config updates that could not be made durable", config_writes);
        let stalls = self.registry_stalls.clone();
        ns.register("registry_stalls", "Expiry ticks that came late because this process stalled", stalls);
        let steps = self.wall_clock_steps.clone();
        ns.register("wall_clock_steps", "Steps of the wall clock (set, not slewed), never counted as stalls", steps);
        ns.register("config_updates", "UPDATE_NAMESRV_CONFIG requests, by result", self.config_updates.clone());
        ns.register("acl_refusals", "Requests refused by access control, by reason", self.acl_refusals.clone());
        ns.register("tls_connections", "Connections by how TLS treated them", self.tls_connections.clone());
        let reloads = self.security_reloads.clone();
        ns.register("security_reloads", "Accounts and TLS files re-read and judged, by file and result", reloads);
        self.controller.register(ns);
        self.route_snapshot.register(ns);
    }

    /// Every request's duration, whatever its code (for rates and p99 over time).
    pub fn all_requests(&self) -> &SecondsHistogram {
        self.requests.all()
    }

    /// Records a REGISTER_BROKER result (`accepted` or `rejected`).
    pub fn registration(&self, accepted: bool) {
        if !self.on {
            return;
        }
        let result = if accepted { "accepted" } else { "rejected" };
        self.registrations.get_or_create(&ResultLabel { result }).inc();
    }

    /// Records removed brokers.
    pub fn removed(&self, reason: Removal, count: usize) {
        if !self.on || count == 0 {
            return;
        }
        self.removals.get_or_create(&ReasonLabel { reason: reason.label() }).inc_by(count as u64);
    }

    /// Records an UPDATE_NAMESRV_CONFIG result (`accepted` or `refused`).
    pub fn config_update(&self, accepted: bool) {
        if !self.on {
            return;
        }
        let result = if accepted { "accepted" } else { "refused" };
        self.config_updates.get_or_create(&ResultLabel { result }).inc();
    }

    /// Records a request refused by access control (`missing_access_key`, `bad_signature`, ...).
    pub fn acl_refusal(&self, reason: &'static str) {
        if !self.on {
            return;
        }
        self.acl_refusals.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Records how TLS treated a new connection (`tls`, `plain`, `plain_refused`,
    /// `handshake_failed`, `handshake_timeout`).
    pub fn tls_connection(&self, result: &'static str) {
        if !self.on {
            return;
        }
        self.tls_connections.get_or_create(&ResultLabel { result }).inc();
    }

    /// Records one re-read of the accounts or TLS files (`file`: `accounts` or `tls`): `applied`
    /// when the files took effect, `refused` when they were bad and the previous ones stay.
    pub fn security_reload(&self, file: &'static str, applied: bool) {
        if !self.on {
            return;
        }
        let result = if applied { "applied" } else { "refused" };
        self.security_reloads.get_or_create(&FileResultLabels { file, result }).inc();
    }

    /// The histogram of one actor's handling time of one message type.
    pub fn mailbox_handle(&self, actor: &'static str, message: &'static str) -> SecondsHistogram {
        self.mailbox_handle.get_or_create(&ActorMessageLabels { actor, message }).clone()
    }

    /// Watches an actor's queued-message counter for `namesrv_mailbox_depth`.
    pub fn watch_mailbox(&self, actor: &'static str, queued: Arc<AtomicUsize>) {
        self.mailboxes.lock().unwrap_or_else(|e| e.into_inner()).push((actor, queued));
    }

    /// Messages queued now, per actor.
    pub fn mailbox_depths(&self) -> Vec<(&'static str, usize)> {
        let mailboxes = self.mailboxes.lock().unwrap_or_else(|e| e.into_inner());
        mailboxes.iter().map(|(actor, queued)| (*actor, queued.load(Ordering::Relaxed))).collect()
    }

    /// Sets the figures read from the registry.
    pub fn set_registry_figures(&self, f: RegistryFigures) {
        self.brokers.set(f.brokers as i64);
        self.provisional_brokers.set(f.provisional as i64);
        self.clusters.set(f.clusters as i64);
        self.topics.set(f.topics as i64);
        self.queue_entries.set(f.queue_entries as i64);
        self.route_cache_bytes.set(f.route_cache_bytes as i64);
    }

    /// The exposition in the classic text format 0.0.4, for scrapers that do not ask for OpenMetrics.
    pub fn encode_classic(&self) -> String {
        text::to_classic(&self.encode())
    }

    /// The exposition text (OpenMetrics, which Prometheus asks for), mailbox depths read now.
    pub fn encode(&self) -> String {
        for (actor, depth) in self.mailbox_depths() {
            self.mailbox_depth.get_or_create(&ActorLabel { actor }).set(depth as i64);
        }
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}
