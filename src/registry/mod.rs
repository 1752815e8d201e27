//! The `RouteRegistry` actor: sole owner of every route table, and the expiry tick.
//!
//! Handlers (in `handlers`) are synchronous and thin: one call into `RouteTables`, no I/O, no
//! `.await`. Senders go through `RegistryHandle`, which counts queued messages for the logs.
//! Outbound notifications the tables decide are handed to the `Notifier` after each message.

pub mod admin;
pub mod binding;
pub mod cache;
mod expiry;
mod handlers;
pub mod listings;
pub mod live;
pub mod liveness;
pub mod messages;
pub mod options;
pub mod readiness;
pub mod register;
pub mod route_answer;
mod route_batch;
pub mod snapshot;
pub mod snapshot_build;
pub mod snapshot_pace;
pub mod stall;
pub mod tables;
#[cfg(test)]
mod tests;
mod timers;
pub mod topic_limit;
pub mod view;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tracing::{debug, info, info_span};

use crate::clock::{Clock, SystemClock};
use crate::mailbox::{handle_logged, Apply, Mailbox, Queued};
use crate::metrics::{Metrics, Removal};
use crate::notifier::{NotifierHandle, SendMinBrokerIdChange};
use crate::origin::ConnId;
use expiry::Expiry;
use liveness::BrokerRef;
use messages::CloseConnection;
use options::RegistryOptions;
use readiness::Readiness;
use snapshot_build::SnapshotBuild;
use snapshot_pace::{wall_ms, SnapshotPace};
use tables::RouteTables;
use timers::Timers;

/// Mailbox capacity: senders wait (back-pressure) only past this many queued messages.
const MAILBOX_CAPACITY: usize = 65_536;

/// About how many topics' worth of brokers one turn removes for a closed connection (tens of
/// milliseconds of work); a connection that carried more is finished in the next turns.
const CLOSE_BUDGET_TOPICS: usize = 50_000;

/// About how many topics one turn copies into a route snapshot being taken; larger tables are
/// copied over several turns.
const SNAPSHOT_BUDGET_TOPICS: usize = 100_000;

/// The actor that owns the route tables.
pub struct RouteRegistry {
    /// Every route table; only this actor reads or changes them.
    tables: RouteTables,
    /// The registry clock's zero: table times are milliseconds since then. Tokio's clock (the
    /// monotonic clock, unless a test pauses it to run expiry without waiting).
    started: tokio::time::Instant,
    /// Registrations, removals and route cache hits are counted here.
    metrics: Arc<Metrics>,
    /// Where decided NOTIFY_MIN_BROKER_ID_CHANGE messages go.
    notifier: NotifierHandle,
    /// The open connections that carried registrations, to close one whose broker expired.
    connections: HashMap<ConnId, Recipient<CloseConnection>>,
    /// The expiry tick's state between ticks: its punctuality and clocks, the consistency
    /// pass's place, the rate of its warnings.
    expiry: Expiry,
    /// When a route snapshot is due, and where it goes.
    snapshots: SnapshotPace,
    /// Closed connections whose brokers are not all removed yet (see [`CLOSE_BUDGET_TOPICS`]).
    closing: VecDeque<ConnId>,
    /// A route snapshot being taken (see [`SNAPSHOT_BUDGET_TOPICS`]), with the change count it
    /// started at.
    building: Option<(SnapshotBuild, u64)>,
    /// Whether route queries are served yet: decided at start, opened for good.
    readiness: Readiness,
    /// When the expiry scan and the snapshot check are next due.
    timers: Timers,
}

/// The registry's address, counting queued messages.
pub type RegistryHandle = Mailbox<RouteRegistry>;

impl RouteRegistry {
    /// Starts the registry on the current arbiter.
    pub fn start(
        options: RegistryOptions,
        scan_interval: Duration,
        notifier: NotifierHandle,
        metrics: Arc<Metrics>,
    ) -> RegistryHandle {
        let registry = Self::new(options, scan_interval, notifier, metrics.clone(), Arc::new(SystemClock));
        Mailbox::new(registry.start(), "registry", metrics)
    }

    /// Starts the registry on `arbiter` (a thread of its own).
    pub fn start_on(
        arbiter: &ArbiterHandle,
        options: RegistryOptions,
        scan_interval: Duration,
        notifier: NotifierHandle,
        metrics: Arc<Metrics>,
    ) -> RegistryHandle {
        let registry = Self::new(options, scan_interval, notifier, metrics.clone(), Arc::new(SystemClock));
        Mailbox::new(RouteRegistry::start_in_arbiter(arbiter, |_| registry), "registry", metrics)
    }

    fn new(
        options: RegistryOptions,
        scan_interval: Duration,
        notifier: NotifierHandle,
        metrics: Arc<Metrics>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let started = tokio::time::Instant::now();
        RouteRegistry {
            readiness: Readiness::at_start(&options.routing, started),
            timers: Timers::new(started, scan_interval, snapshot_pace::CHECK_EVERY),
            tables: RouteTables::new(options),
            started,
            metrics,
            notifier,
            connections: HashMap::new(),
            expiry: Expiry::new(scan_interval, clock),
            snapshots: SnapshotPace::default(),
            closing: VecDeque::new(),
            building: None,
        }
    }

    /// Whether route queries still wait for the readiness gate (`need_wait_for_service`).
    fn waiting_for_service(&mut self) -> bool {
        self.readiness.left(tokio::time::Instant::now()).is_some()
    }

    /// Runs the timed work that is due: checked before every message and by a fine interval
    /// while the mailbox is idle, so it never waits for the mailbox to empty.
    fn run_due(&mut self) {
        if let Some(conn) = self.closing.pop_front() {
            self.remove_closed(conn);
        }
        let due = self.timers.due(tokio::time::Instant::now());
        if due.scan {
            self.scan();
        }
        if self.building.is_some() {
            self.continue_snapshot();
        } else if due.snapshot {
            self.offer_snapshot();
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// The expiry tick: removes every broker silent past its timeout and closes its connection
    /// (unless the tick came late: see `stall`), then runs the consistency pass (`expiry`).
    fn scan(&mut self) {
        let _span = info_span!("handle", actor = "registry", msg = "ExpiryTick").entered();
        let begin = Instant::now();
        let now = self.now_ms();
        let expired = self.expiry.tick(&mut self.tables, &self.metrics, now);
        self.send_notifications();
        let (topics, groups, live) = self.tables.sizes();
        debug!(expired, live, groups, topics, elapsed_us = begin.elapsed().as_micros() as u64, "expiry scan");
    }

    /// Starts a route snapshot when one is due (something changed, and the last one is a few
    /// seconds old), or hands over the one the busy writer did not take yet; heartbeats that
    /// change nothing cost none.
    fn offer_snapshot(&mut self) {
        let changes = self.tables.changes();
        let Some(kept) = self.snapshots.due(changes) else {
            return;
        };
        match kept {
            Some(snapshot) => {
                self.snapshots.offer(snapshot, changes);
            }
            None => {
                self.building = Some((self.tables.start_snapshot(wall_ms(), self.now_ms()), changes));
                self.continue_snapshot();
            }
        }
    }

    /// Copies the next groups into the snapshot being taken, [`SNAPSHOT_BUDGET_TOPICS`] at a
    /// time, and hands it to the writer thread once it is whole.
    fn continue_snapshot(&mut self) {
        let Some((build, _)) = self.building.as_mut() else {
            return;
        };
        let begin = Instant::now();
        if !self.tables.continue_snapshot(build, SNAPSHOT_BUDGET_TOPICS) {
            return;
        }
        let Some((build, changes)) = self.building.take() else {
            return;
        };
        let snapshot = build.finish();
        let groups = snapshot.groups.len();
        let handed = self.snapshots.offer(snapshot, changes);
        debug!(groups, handed, last_step_us = begin.elapsed().as_micros() as u64, "route snapshot taken");
    }

    /// Hands decided NOTIFY_MIN_BROKER_ID_CHANGE messages to the notifier and closes the
    /// connections the tables decided to close, never waiting.
    fn send_notifications(&mut self) {
        for change in self.tables.take_notifications() {
            self.notifier.tell(SendMinBrokerIdChange { conn: ConnId::SERVER, change });
        }
        for conn in self.tables.take_closing() {
            if let Some(closer) = self.connections.get(&conn) {
                closer.do_send(CloseConnection { reason: "the broker registered over it expired or was replaced" });
            }
        }
    }

    /// Removes the brokers closed connection `conn` carried, about [`CLOSE_BUDGET_TOPICS`]
    /// topics' worth in this turn; the rest are queued for the next turns (before the next
    /// message, or the idle check), so one peer closing a connection that carried many large
    /// groups does not stall everyone behind one long message.
    fn remove_closed(&mut self, conn: ConnId) {
        let (removed, more) = self.tables.connection_closed_within(conn, CLOSE_BUDGET_TOPICS);
        let brokers: Vec<_> = removed.into_iter().map(|r| r.broker).collect();
        self.count_removed(Removal::ConnectionClosed, brokers.len());
        self.log_removed("connection closed", &brokers);
        if more {
            self.closing.push_back(conn);
        }
    }

    /// Counts removed brokers for the metrics.
    fn count_removed(&self, reason: Removal, count: usize) {
        self.metrics.removed(reason, count);
    }

    fn log_removed(&self, reason: &'static str, brokers: &[BrokerRef]) {
        for b in brokers {
            info!(broker = %b.broker_name, addr = %b.addr, cluster = %b.cluster, id = b.broker_id, reason, "broker unregistered");
        }
    }
}

impl Actor for RouteRegistry {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.set_mailbox_capacity(MAILBOX_CAPACITY);
        let now = self.now_ms();
        self.expiry.start(now);
        ctx.run_interval(self.timers.check_every(), |registry, _| registry.run_due());
    }
}

impl<M: Apply<RouteRegistry>> Handler<Queued<M>> for RouteRegistry {
    type Result = MessageResult<Queued<M>>;

    fn handle(&mut self, queued: Queued<M>, _: &mut Context<Self>) -> Self::Result {
        self.run_due();
        let out = handle_logged(self, queued);
        self.send_notifications();
        MessageResult(out)
    }
}
