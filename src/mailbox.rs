//! Typed requests to actors through a counting mailbox, so every handled message can be logged
//! with the actor, the message type, the connection, the queue depth and the handling time.
//!
//! actix has no queue-depth API: [`Mailbox`] counts messages sent and not yet handled.

use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use actix::dev::ToEnvelope;
use actix::{Actor, Addr, Handler, MailboxError, Message};
use tracing::debug;

/// Identifies one TCP connection for the life of the process (`ConnId(0)` is the server itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ConnId(pub u64);

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
    /// The connection the request came from.
    fn conn(&self) -> ConnId;
}

/// Runs one request against actor `A`; implemented once per (actor, message).
pub trait Apply<A>: Request {
    /// Applies the request.
    fn apply(self, actor: &mut A) -> Self::Output;
}

/// Implements [`Request`] for a struct with a `conn` field.
#[macro_export]
macro_rules! request {
    ($ty:ident, $out:ty) => {
        impl $crate::mailbox::Request for $ty {
            type Output = $out;
            const NAME: &'static str = stringify!($ty);
            fn conn(&self) -> $crate::mailbox::ConnId {
                self.conn
            }
        }
    };
}

/// Implements the one `Handler<Queued<M>>` of an actor whose requests all `Apply` to it and are
/// logged as `$name`; the actor keeps its mailbox counter in a `queued` field.
#[macro_export]
macro_rules! logged_handler {
    ($actor:ty, $name:literal) => {
        impl<M: $crate::mailbox::Apply<$actor>> actix::Handler<$crate::mailbox::Queued<M>> for $actor {
            type Result = actix::MessageResult<$crate::mailbox::Queued<M>>;

            fn handle(&mut self, queued_msg: $crate::mailbox::Queued<M>, _: &mut Self::Context) -> Self::Result {
                let queued = self.queued.clone();
                actix::MessageResult($crate::mailbox::handle_logged(self, $name, &queued, queued_msg.0))
            }
        }
    };
}

/// The envelope every request travels in, so one handler per actor can log them all.
#[derive(Debug)]
pub struct Queued<M>(pub M);

impl<M: Request> Message for Queued<M> {
    type Result = M::Output;
}

/// A cloneable address that counts queued messages.
pub struct Mailbox<A: Actor> {
    addr: Addr<A>,
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

/// Handles one queued request on `actor` and logs it at debug; used by every actor's handler.
pub fn handle_logged<A, M: Apply<A>>(actor: &mut A, name: &'static str, queued: &AtomicUsize, msg: M) -> M::Output {
    let depth = queued.fetch_sub(1, Ordering::Relaxed).saturating_sub(1);
    let conn = msg.conn();
    let begin = Instant::now();
    let out = msg.apply(actor);
    debug!(
        actor = name,
        msg = M::NAME,
        conn = conn.0,
        queued = depth,
        elapsed_us = begin.elapsed().as_micros() as u64,
        "handled"
    );
    out
}
