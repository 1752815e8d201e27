//! The `RouteRegistry` actor: sole owner of every route table, and the expiry tick.
//!
//! Handlers are synchronous and thin: one call into `RouteTables`, no I/O, no `.await`.
//! Senders go through `RegistryHandle`, which counts queued messages for the mailbox logs.

pub mod liveness;
pub mod messages;
pub mod register;
pub mod tables;
pub mod view;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tracing::{debug, info};

use liveness::BrokerRef;
use messages::*;
use tables::{RouteTables, TableOptions};

/// Mailbox capacity: senders wait (back-pressure) only past this many queued messages.
const MAILBOX_CAPACITY: usize = 65_536;

/// The actor that owns the route tables.
pub struct RouteRegistry {
    tables: RouteTables,
    started: Instant,
    scan_interval: Duration,
    queued: Arc<AtomicUsize>,
}

/// A cloneable address of the registry that counts queued messages.
#[derive(Clone)]
pub struct RegistryHandle {
    addr: Addr<RouteRegistry>,
    queued: Arc<AtomicUsize>,
}

impl RegistryHandle {
    /// Sends a request and waits for its answer.
    pub async fn ask<M: RegistryRequest>(&self, msg: M) -> Result<M::Output, MailboxError>
    where
        RouteRegistry: Handler<Queued<M>>,
    {
        self.queued.fetch_add(1, Ordering::Relaxed);
        self.addr.send(Queued(msg)).await
    }

    /// Sends a request without waiting for the answer.
    pub fn tell<M: RegistryRequest>(&self, msg: M)
    where
        RouteRegistry: Handler<Queued<M>>,
    {
        self.queued.fetch_add(1, Ordering::Relaxed);
        self.addr.do_send(Queued(msg));
    }

    /// Messages sent but not yet handled.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }
}

/// The envelope every registry message travels in, so one handler can log them all.
#[derive(Debug)]
pub struct Queued<M>(pub M);

impl<M: RegistryRequest> Message for Queued<M> {
    type Result = M::Output;
}

impl RouteRegistry {
    /// Starts the registry on the current arbiter.
    pub fn start(options: TableOptions, scan_interval: Duration) -> RegistryHandle {
        let queued = Arc::new(AtomicUsize::new(0));
        let registry = RouteRegistry {
            tables: RouteTables::new(options),
            started: Instant::now(),
            scan_interval,
            queued: queued.clone(),
        };
        RegistryHandle { addr: registry.start(), queued }
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

/// Applies one request to the registry; implemented once per message below.
pub trait Apply: RegistryRequest {
    /// Runs the request against the registry's tables.
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output;
}

impl<M: Apply> Handler<Queued<M>> for RouteRegistry {
    type Result = MessageResult<Queued<M>>;

    fn handle(&mut self, Queued(msg): Queued<M>, _: &mut Context<Self>) -> Self::Result {
        let queued = self.queued.fetch_sub(1, Ordering::Relaxed).saturating_sub(1);
        let conn = msg.conn();
        let begin = Instant::now();
        let out = msg.apply(self);
        debug!(
            actor = "registry",
            msg = M::NAME,
            conn = conn.0,
            queued,
            elapsed_us = begin.elapsed().as_micros() as u64,
            "handled"
        );
        MessageResult(out)
    }
}

impl Apply for RegisterBroker {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let now = registry.now_ms();
        let reg = self.registration;
        let (name, addr, cluster, id, topics) =
            (reg.broker_name.clone(), reg.addr.clone(), reg.cluster.clone(), reg.broker_id, reg.body.topics.len());
        let outcome = registry.tables.register_broker(reg, now);
        match &outcome {
            Some(o) if o.newly_live => {
                info!(broker = %name, addr = %addr, cluster = %cluster, id, topics, conn = self.conn.0, "broker registered")
            }
            Some(_) => debug!(broker = %name, addr = %addr, id, topics, "broker re-registered"),
            None => {
                info!(broker = %name, addr = %addr, id, topics, "broker registration rejected: first registration with a single topic")
            }
        }
        outcome
    }
}

impl Apply for UnregisterBroker {
    fn apply(self, registry: &mut RouteRegistry) -> bool {
        let known = registry.tables.unregister_broker(&self.broker);
        if known {
            registry.log_removed("unregister request", std::slice::from_ref(&self.broker));
        }
        known
    }
}

impl Apply for GetRouteInfo {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        registry.tables.route_body(&self.topic, self.style)
    }
}

impl Apply for GetClusterInfo {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        registry.tables.cluster_info_body()
    }
}

impl Apply for QueryDataVersion {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let now = registry.now_ms();
        registry.tables.query_data_version(&self.cluster, &self.addr, self.version.as_ref(), now)
    }
}

impl Apply for BrokerHeartbeat {
    fn apply(self, registry: &mut RouteRegistry) -> bool {
        let now = registry.now_ms();
        registry.tables.heartbeat(&self.cluster, &self.addr, now)
    }
}

impl Apply for ConnectionClosed {
    fn apply(self, registry: &mut RouteRegistry) {
        let removed = registry.tables.connection_closed(self.conn);
        registry.log_removed("connection closed", &removed);
    }
}
