//! Typed requests to actors through a counting mailbox. Every handled message runs inside a
//! `handle` span (actor, message type, connection), so whatever a handler logs carries them,
//! and is logged at debug with the queue depth and the handling time.
//!
//! actix has no queue-depth API: [`Mailbox`] counts messages sent and not yet handled.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use actix::dev::ToEnvelope;
use actix::{Actor, Addr, Handler, MailboxError, Message};
use tracing::{debug, debug_span, info_span};

use crate::metrics::histogram::SecondsHistogram;
use crate::metrics::Metrics;

/// Identifies one TCP connection for the life of the process (`ConnId(0)` is the server itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ConnId(pub u64);

/// Where a request came from: its connection and the peer's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The connection.
    pub conn: ConnId,
    /// The peer's address.
    pub peer: std::net::SocketAddr,
}

impl std::fmt::Display for ConnId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A request an actor answers with a domain value.
pub trait Request: Debug + Send + 'static {
    /// The answer.
    type Output: Send + 'static;
    /// The message type name for mailbox logs.
    const NAME: &'static str;
    /// A read-only query whose handler logs nothing above debug: its span is a debug span,
    /// which costs nothing unless debug logging is on (route queries are the hot path).
    const QUERY: bool;
    /// The connection the request came from.
    fn conn(&self) -> ConnId;
}

/// Runs one request against actor `A`; implemented once per (actor, message).
pub trait Apply<A>: Request {
    /// Applies the request.
    fn apply(self, actor: &mut A) -> Self::Output;
}

/// Implements [`Request`] for a struct with a `conn` field; `query` marks a read-only query.
#[macro_export]
macro_rules! request {
    ($ty:ident, $out:ty) => {
        $crate::request!(@impl $ty, $out, false);
    };
    ($ty:ident, $out:ty, query) => {
        $crate::request!(@impl $ty, $out, true);
    };
    (@impl $ty:ident, $out:ty, $query:expr) => {
        impl $crate::mailbox::Request for $ty {
            type Output = $out;
            const NAME: &'static str = stringify!($ty);
            const QUERY: bool = $query;
            fn conn(&self) -> $crate::mailbox::ConnId {
                self.conn
            }
        }
    };
}

/// Implements the one `Handler<Queued<M>>` of an actor whose requests all `Apply` to it and are
/// logged as `$name`; the actor keeps its mailbox counter in a `queued` field and its handling
/// times in a `timings` field.
#[macro_export]
macro_rules! logged_handler {
    ($actor:ty, $name:literal) => {
        impl<M: $crate::mailbox::Apply<$actor>> actix::Handler<$crate::mailbox::Queued<M>> for $actor {
            type Result = actix::MessageResult<$crate::mailbox::Queued<M>>;

            fn handle(&mut self, queued_msg: $crate::mailbox::Queued<M>, _: &mut Self::Context) -> Self::Result {
                let queued = self.queued.clone();
                let (out, nanos) = $crate::mailbox::handle_logged(self, $name, &queued, queued_msg.0);
                self.timings.observe(<M as $crate::mailbox::Request>::NAME, nanos);
                actix::MessageResult(out)
            }
        }
    };
}

/// The handling-time histograms of one actor's message types, found once per type.
#[derive(Debug)]
pub struct Timings {
    actor: &'static str,
    metrics: Option<Arc<Metrics>>,
    by_message: HashMap<&'static str, SecondsHistogram>,
}

impl Timings {
    /// Timings of `actor`, exported through `metrics` (none: not recorded).
    pub fn new(actor: &'static str, metrics: Option<Arc<Metrics>>) -> Self {
        Timings { actor, metrics, by_message: HashMap::new() }
    }

    /// A fresh queued-message counter for `actor`, watched by `metrics`, and its timings.
    pub fn watched(actor: &'static str, metrics: Option<Arc<Metrics>>) -> (Arc<AtomicUsize>, Timings) {
        let queued = Arc::new(AtomicUsize::new(0));
        if let Some(m) = &metrics {
            m.watch_mailbox(actor, queued.clone());
        }
        (queued, Timings::new(actor, metrics))
    }

    /// Records that handling one `message` took `nanos`.
    pub fn observe(&mut self, message: &'static str, nanos: u64) {
        let Some(metrics) = &self.metrics else {
            return;
        };
        let actor = self.actor;
        self.by_message.entry(message).or_insert_with(|| metrics.mailbox_handle(actor, message)).observe_nanos(nanos);
    }
}

/// The envelope every request travels in, so one handler per actor can log them all.
#[derive(Debug)]
pub struct Queued<M>(pub M);

impl<M: Request> Message for Queued<M> {
    type Result = M::Output;
}

/// A cloneable address that counts queued messages.
pub struct Mailbox<A: Actor> {
    /// The actor.
    addr: Addr<A>,
    /// Messages sent and not yet handled; the actor decrements it.
    queued: Arc<AtomicUsize>,
}

impl<A: Actor> Clone for Mailbox<A> {
    fn clone(&self) -> Self {
        Self { addr: self.addr.clone(), queued: self.queued.clone() }
    }
}

impl<A: Actor> Mailbox<A> {
    /// Wraps an address with the counter its actor decrements.
    pub fn new(addr: Addr<A>, queued: Arc<AtomicUsize>) -> Self {
        Self { addr, queued }
    }

    /// Messages sent and not yet handled.
    pub fn depth(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// Whether both address the same actor.
    pub fn is(&self, other: &Self) -> bool {
        self.addr == other.addr
    }

    /// Whether the actor still runs.
    pub fn connected(&self) -> bool {
        self.addr.connected()
    }

    /// The counter of queued messages, to watch it.
    pub fn counter(&self) -> Arc<AtomicUsize> {
        self.queued.clone()
    }

    /// Sends a request and waits for the answer.
    pub async fn ask<M: Request>(&self, msg: M) -> Result<M::Output, MailboxError>
    where
        A: Handler<Queued<M>>,
        A::Context: ToEnvelope<A, Queued<M>>,
    {
        self.queued.fetch_add(1, Ordering::Relaxed);
        self.addr.send(Queued(msg)).await
    }

    /// Sends a request without waiting for the answer.
    pub fn tell<M: Request>(&self, msg: M)
    where
        A: Handler<Queued<M>>,
        A::Context: ToEnvelope<A, Queued<M>>,
    {
        self.queued.fetch_add(1, Ordering::Relaxed);
        self.addr.do_send(Queued(msg));
    }
}

/// Handles one queued request on `actor` inside its span and logs it at debug; used by every
/// actor's handler. Returns the answer and the handling time in nanoseconds.
pub fn handle_logged<A, M: Apply<A>>(
    actor: &mut A,
    name: &'static str,
    queued: &AtomicUsize,
    msg: M,
) -> (M::Output, u64) {
    let depth = queued.fetch_sub(1, Ordering::Relaxed).saturating_sub(1);
    let conn = msg.conn().0;
    let span = if M::QUERY {
        debug_span!("handle", actor = name, msg = M::NAME, conn)
    } else {
        info_span!("handle", actor = name, msg = M::NAME, conn)
    };
    let _entered = span.enter();
    let begin = Instant::now();
    let out = msg.apply(actor);
    let nanos = begin.elapsed().as_nanos() as u64;
    // Rate-limited, and the limit's lock taken only while the line is enabled.
    if tracing::enabled!(tracing::Level::DEBUG) {
        if let Some(suppressed) = crate::ratelog::actor_lines().admit() {
            debug!(queued = depth, elapsed_us = nanos / 1000, suppressed, "handled");
        }
    }
    (out, nanos)
}
