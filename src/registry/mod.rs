//! The `RouteRegistry` actor: sole owner of every route table, and the expiry tick.
//!
//! Handlers (in `handlers`) are synchronous and thin: one call into `RouteTables`, no I/O, no
//! `.await`. Senders go through `RegistryHandle`, which counts queued messages for the logs.
//! Outbound notifications the tables decide are handed to the `Notifier` after each message.

pub mod admin;
pub mod cache;
mod handlers;
pub mod liveness;
pub mod messages;
pub mod options;
pub mod register;
pub mod tables;
pub mod view;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tracing::{debug, info};

use crate::mailbox::{handle_logged, Apply, Mailbox, Queued};
use crate::notifier::{NotifierHandle, SendMinBrokerIdChange};
use liveness::BrokerRef;
use messages::ConnId;
use options::RegistryOptions;
use tables::RouteTables;

/// Mailbox capacity: senders wait (back-pressure) only past this many queued messages.
const MAILBOX_CAPACITY: usize = 65_536;

/// The actor that owns the route tables.
pub struct RouteRegistry {
    tables: RouteTables,
    started: Instant,
    scan_interval: Duration,
    queued: Arc<AtomicUsize>,
    notifier: NotifierHandle,
}

/// The registry's address, counting queued messages.
pub type RegistryHandle = Mailbox<RouteRegistry>;

impl RouteRegistry {
    /// Starts the registry on the current arbiter.
    pub fn start(options: RegistryOptions, scan_interval: Duration, notifier: NotifierHandle) -> RegistryHandle {
        let queued = Arc::new(AtomicUsize::new(0));
        let registry = RouteRegistry {
            tables: RouteTables::new(options),
            started: Instant::now(),
            scan_interval,
            queued: queued.clone(),
            notifier,
        };
        Mailbox::new(registry.start(), queued)
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// The expiry tick: removes every broker silent past its timeout.
    fn scan(&mut self) {
        let begin = Instant::now();
        let expired = self.tables.expire(self.now_ms());
        for e in &expired {
            info!(
                broker = %e.broker.broker_name, addr = %e.broker.addr, cluster = %e.broker.cluster,
                id = e.broker.broker_id, silent_ms = e.silent_ms, "broker expired"
            );
        }
        self.send_notifications();
        let (topics, groups, live) = self.tables.sizes();
        debug!(
            actor = "registry",
            msg = "ExpiryTick",
            expired = expired.len(),
            live,
            groups,
            topics,
            elapsed_us = begin.elapsed().as_micros() as u64,
            "expiry scan"
        );
    }

    /// Hands decided NOTIFY_MIN_BROKER_ID_CHANGE messages to the notifier, never waiting.
    fn send_notifications(&mut self) {
        for change in self.tables.take_outbox() {
            self.notifier.tell(SendMinBrokerIdChange { conn: ConnId(0), change });
        }
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
        ctx.run_interval(self.scan_interval, |registry, _| registry.scan());
    }
}

impl<M: Apply<RouteRegistry>> Handler<Queued<M>> for RouteRegistry {
    type Result = MessageResult<Queued<M>>;

    fn handle(&mut self, Queued(msg): Queued<M>, _: &mut Context<Self>) -> Self::Result {
        let queued = self.queued.clone();
        let out = handle_logged(self, "registry", &queued, msg);
        self.send_notifications();
        MessageResult(out)
    }
}
