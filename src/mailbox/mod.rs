//! Typed requests to actors through a counting mailbox. Every handled message runs inside a
//! `handle` span (actor, message type, connection), so whatever a handler logs carries them,
//! and is logged at debug with the queue depth and the handling time.
//!
//! actix has no queue-depth API: each message travels with a [`Ticket`] of its actor's
//! [`Meter`], which counts it from the send until it is handled or dropped; actors carry nothing.

mod meter;
#[cfg(test)]
mod tests;

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Instant;

use actix::dev::ToEnvelope;
use actix::{Actor, Addr, Handler, MailboxError, Message};
use tracing::{debug, debug_span, info_span};

use crate::metrics::Metrics;
use crate::origin::ConnId;
pub use meter::{Meter, Ticket};

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
            fn conn(&self) -> $crate::origin::ConnId {
                self.conn
            }
        }
    };
}

/// Implements the one `Handler<Queued<M>>` of an actor whose requests all `Apply` to it.
#[macro_export]
macro_rules! logged_handler {
    ($actor:ty) => {
        impl<M: $crate::mailbox::Apply<$actor>> actix::Handler<$crate::mailbox::Queued<M>> for $actor {
            type Result = actix::MessageResult<$crate::mailbox::Queued<M>>;

            fn handle(&mut self, queued: $crate::mailbox::Queued<M>, _: &mut Self::Context) -> Self::Result {
                actix::MessageResult($crate::mailbox::handle_logged(self, queued))
            }
        }
    };
}

/// The envelope every request travels in, so one handler per actor can log them all; its
/// ticket counts it in the actor's depth until it is handled or dropped.
#[derive(Debug)]
pub struct Queued<M> {
    msg: M,
    ticket: Ticket,
}

impl<M: Request> Message for Queued<M> {
    type Result = M::Output;
}

/// A cloneable address that counts queued messages.
pub struct Mailbox<A: Actor> {
    /// The actor.
    addr: Addr<A>,
    /// Its depth and handling times.
    meter: Arc<Meter>,
}

impl<A: Actor> Clone for Mailbox<A> {
    fn clone(&self) -> Self {
        Self { addr: self.addr.clone(), meter: self.meter.clone() }
    }
}

impl<A: Actor> Mailbox<A> {
    /// Wraps the address of `actor` (its name in logs and metrics), its depth and handling times
    /// exported through `metrics`.
    pub fn new(addr: Addr<A>, actor: &'static str, metrics: Arc<Metrics>) -> Self {
        Self { addr, meter: Meter::new(actor, metrics) }
    }

    /// Messages sent and not yet handled.
    pub fn depth(&self) -> usize {
        self.meter.depth()
    }

    /// How long ago the actor last handled a message: a busy actor makes progress even when a
    /// probe sent now would wait behind its queue.
    pub fn since_progress(&self) -> std::time::Duration {
        self.meter.since_progress()
    }

    /// Whether the actor still runs.
    pub fn connected(&self) -> bool {
        self.addr.connected()
    }

    /// Sends a request and waits for the answer. A request that never reaches the actor is not
    /// left counted.
    pub async fn ask<M: Request>(&self, msg: M) -> Result<M::Output, MailboxError>
    where
        A: Handler<Queued<M>>,
        A::Context: ToEnvelope<A, Queued<M>>,
    {
        self.addr.send(Queued { msg, ticket: self.meter.ticket() }).await
    }

    /// Sends a request without waiting for the answer; one the actor cannot take (it stopped) is
    /// dropped and not left counted.
    pub fn tell<M: Request>(&self, msg: M)
    where
        A: Handler<Queued<M>>,
        A::Context: ToEnvelope<A, Queued<M>>,
    {
        self.addr.do_send(Queued { msg, ticket: self.meter.ticket() });
    }
}

/// Handles one queued request on `actor` inside its span, logs it at debug and records its
/// handling time; used by every actor's handler.
pub fn handle_logged<A, M: Apply<A>>(actor: &mut A, queued: Queued<M>) -> M::Output {
    let Queued { msg, mut ticket } = queued;
    let depth = ticket.handled();
    let name = ticket.meter().actor();
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
    ticket.meter().observe(M::NAME, nanos);
    ticket.meter().progressed();
    out
}
