//! Back-pressure between a connection's reader, its requests in flight and its writer: the
//! reader stops taking frames while too many requests are in flight or too many reply bytes
//! wait to be written (a peer that pipelines and never reads), and resumes below the low mark.
//!
//! Replies already under way when reading stops still arrive, so unwritten reply bytes have
//! hard bounds too: per connection (`max_bytes`), and for replies over 64 KiB a process-wide
//! [`ReplyBudget`]. A reply over either closes its connection.
//!
//! Everything of one connection runs on its arbiter's thread, so the counters are plain cells;
//! only the budget shared by all connections is atomic.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use futures_core::Stream;
use thiserror::Error;

/// Replies up to this size never need the budget (the in-flight and high marks bound them).
pub const SMALL_REPLY_BYTES: usize = 64 * 1024;

/// The process-wide budget of bytes held in unwritten replies over [`SMALL_REPLY_BYTES`].
pub type ReplyBudget = super::budget::ByteBudget;

/// Why a reply cannot be queued; its connection is closed.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ReplyRefused {
    /// The connection's unwritten replies would pass `write_buffer_max_bytes`.
    #[error("a {reply}-byte reply would leave {total} bytes unwritten on this connection, max {max}")]
    Connection { reply: usize, total: usize, max: usize },
    /// The replies over 64 KiB of all connections would pass `reply_budget_bytes`.
    #[error("reply budget exhausted: a {reply}-byte reply does not fit ({held} of {max} bytes held)")]
    Budget { reply: usize, held: usize, max: usize },
}

/// The marks of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowLimits {
    /// Reading stops above this many reply bytes queued for writing (Netty's high water mark).
    pub high_bytes: usize,
    /// ... and resumes at or below this many.
    pub low_bytes: usize,
    /// Reading stops while this many requests are in flight.
    pub max_in_flight: usize,
    /// A reply that would leave more than this many bytes unwritten closes the connection
    /// (unless nothing else is unwritten).
    pub max_bytes: usize,
}

/// The counters one connection's reader, dispatcher and writer share.
#[derive(Debug)]
pub struct Flow {
    limits: FlowLimits,
    queued_bytes: Cell<usize>,
    in_flight: Cell<usize>,
    /// Set when reading stopped; cleared once below the low mark again.
    paused: Cell<bool>,
    reader: RefCell<Option<Waker>>,
    /// The budget of large unwritten replies, and what this connection holds of it (never more
    /// than it has unwritten).
    budget: Arc<ReplyBudget>,
    reserved: Cell<usize>,
}

impl Flow {
    /// Fresh counters under `limits`, large replies reserving from `budget`.
    pub fn new(limits: FlowLimits, budget: Arc<ReplyBudget>) -> Rc<Self> {
        Rc::new(Flow {
            limits,
            queued_bytes: Cell::new(0),
            in_flight: Cell::new(0),
            paused: Cell::new(false),
            reader: RefCell::new(None),
            budget,
            reserved: Cell::new(0),
        })
    }

    /// Whether a reply of `bytes` may be queued: within the connection's `max_bytes` (any one
    /// reply fits when nothing is unwritten) and, over 64 KiB, reserved from the budget until
    /// written. On refusal the caller closes the connection.
    pub fn admit_reply(&self, bytes: usize) -> Result<(), ReplyRefused> {
        let (queued, max) = (self.queued_bytes.get(), self.limits.max_bytes);
        if queued > 0 && queued.saturating_add(bytes) > max {
            return Err(ReplyRefused::Connection { reply: bytes, total: queued + bytes, max });
        }
        if bytes > SMALL_REPLY_BYTES {
            if !self.budget.try_reserve(bytes) {
                return Err(ReplyRefused::Budget { reply: bytes, held: self.budget.held(), max: self.budget.max() });
            }
            self.reserved.set(self.reserved.get() + bytes);
        }
        Ok(())
    }

    /// Requests dispatched and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.in_flight.get()
    }

    /// Reply bytes queued and not yet written.
    pub fn queued_bytes(&self) -> usize {
        self.queued_bytes.get()
    }

    /// A request was dispatched.
    pub fn request_started(&self) {
        self.in_flight.set(self.in_flight.get() + 1);
    }

    /// A request was answered (or, oneway, handled).
    pub fn request_finished(&self) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
        self.wake_if_resumable();
    }

    /// `n` reply bytes were queued for writing.
    pub fn queued(&self, n: usize) {
        self.queued_bytes.set(self.queued_bytes.get() + n);
    }

    /// `n` queued bytes were written to the socket.
    pub fn written(&self, n: usize) {
        let queued = self.queued_bytes.get().saturating_sub(n);
        self.queued_bytes.set(queued);
        let reserved = self.reserved.get();
        if reserved > queued {
            self.budget.release(reserved - queued);
            self.reserved.set(queued);
        }
        self.wake_if_resumable();
    }

    fn over(&self) -> bool {
        self.queued_bytes.get() > self.limits.high_bytes || self.in_flight.get() >= self.limits.max_in_flight
    }

    fn resumable(&self) -> bool {
        self.queued_bytes.get() <= self.limits.low_bytes && self.in_flight.get() < self.limits.max_in_flight
    }

    fn wake_if_resumable(&self) {
        if self.paused.get() && self.resumable() {
            if let Some(waker) = self.reader.borrow_mut().take() {
                waker.wake();
            }
        }
    }

    /// Whether the reader may take another frame now; if not, `waker` is woken when it may.
    fn may_read(&self, waker: &Waker) -> bool {
        if self.paused.get() && self.resumable() {
            self.paused.set(false);
        } else if !self.paused.get() && self.over() {
            self.paused.set(true);
        }
        if self.paused.get() {
            *self.reader.borrow_mut() = Some(waker.clone());
        }
        !self.paused.get()
    }
}

impl Drop for Flow {
    fn drop(&mut self) {
        self.budget.release(self.reserved.get());
    }
}

/// A frame stream that yields only while its connection's flow allows.
pub struct Throttled<S> {
    inner: S,
    flow: Rc<Flow>,
}

impl<S> Throttled<S> {
    /// Wraps `inner` under `flow`.
    pub fn new(inner: S, flow: Rc<Flow>) -> Self {
        Throttled { inner, flow }
    }
}

impl<S: Stream + Unpin> Stream for Throttled<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        if !self.flow.may_read(cx.waker()) {
            return Poll::Pending;
        }
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    /// A waker that counts its wakes.
    struct Flag(std::sync::atomic::AtomicUsize);
    impl Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn reading_stops_above_the_high_mark_and_resumes_at_the_low_mark() {
        let flag = std::sync::Arc::new(Flag(Default::default()));
        let waker = Waker::from(flag.clone());
        let limits = FlowLimits { high_bytes: 100, low_bytes: 10, max_in_flight: 2, max_bytes: 1000 };
        let flow = Flow::new(limits, ReplyBudget::new(1 << 20));
        assert!(flow.may_read(&waker));
        flow.queued(101);
        assert!(!flow.may_read(&waker), "above the high mark");
        flow.written(50);
        assert!(!flow.may_read(&waker), "51 left: still above the low mark");
        assert_eq!(flag.0.load(std::sync::atomic::Ordering::Relaxed), 0);
        flow.written(41);
        assert_eq!(flag.0.load(std::sync::atomic::Ordering::Relaxed), 1, "woken at the low mark");
        assert!(flow.may_read(&waker));
        flow.request_started();
        flow.request_started();
        assert!(!flow.may_read(&waker), "too many requests in flight");
        flow.request_finished();
        assert!(flow.may_read(&waker));
    }

    #[test]
    fn unwritten_replies_are_bounded_per_connection_and_large_ones_across_connections() {
        let budget = ReplyBudget::new(300 * 1024);
        let limits = FlowLimits { high_bytes: 100, low_bytes: 10, max_in_flight: 64, max_bytes: 250 * 1024 };
        let (a, b) = (Flow::new(limits, budget.clone()), Flow::new(limits, budget.clone()));
        assert_eq!(
            a.admit_reply(400 * 1024).unwrap_err().to_string(),
            "reply budget exhausted: a 409600-byte reply does not fit (0 of 307200 bytes held)"
        );
        a.admit_reply(200 * 1024).unwrap();
        a.queued(200 * 1024);
        let over = a.admit_reply(100 * 1024).unwrap_err();
        assert!(matches!(over, ReplyRefused::Connection { .. }), "{over}");
        a.admit_reply(1000).unwrap();
        a.queued(1000);
        assert!(matches!(b.admit_reply(150 * 1024), Err(ReplyRefused::Budget { .. })), "a holds 200 KiB of 300");
        b.admit_reply(60 * 1024).unwrap();
        assert_eq!(budget.held(), 200 * 1024, "small replies need no budget");
        a.written(150 * 1024);
        assert_eq!(budget.held(), 50 * 1024 + 1000, "what is still unwritten stays reserved");
        b.admit_reply(150 * 1024).unwrap();
        drop(a);
        assert_eq!(budget.held(), 150 * 1024, "a closed connection gives back what it held");
    }
}
