//! Back-pressure between a connection's reader, its requests in flight and its writer: the
//! reader stops taking frames while too many requests are in flight or too many reply bytes
//! wait to be written (a peer that pipelines and never reads), and resumes below the low mark.
//!
//! Replies already under way when reading stops still arrive, so unwritten reply bytes have
//! hard bounds too: per connection (`max_bytes`), and, every reply counted, a process-wide
//! [`ReplyBudget`] shared fairly among source addresses (`peers::budget`). A reply over either
//! closes its connection.
//!
//! Everything of one connection runs on its arbiter's thread, so the counters are plain cells;
//! only the budget shared by all connections is atomic.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use futures_core::Stream;

use crate::peers::{ByteBudget, OverShare, Share};
use thiserror::Error;

/// The process-wide budget of bytes held in unwritten replies.
pub type ReplyBudget = ByteBudget;

/// Why a reply cannot be queued; its connection is closed.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ReplyRefused {
    /// The connection's unwritten replies would pass `write_buffer_max_bytes`.
    #[error("a {reply}-byte reply would leave {total} bytes unwritten on this connection, max {max}")]
    Connection { reply: usize, total: usize, max: usize },
    /// The reply does not fit the budget of unwritten replies within the shares.
    #[error("reply budget: a {reply}-byte reply does not fit: {over}")]
    Budget { reply: usize, over: OverShare },
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
    /// The budget of unwritten replies, what this connection draws on of it, and what it holds
    /// of it (never more than it has unwritten).
    budget: Arc<ReplyBudget>,
    share: Rc<Share>,
    reserved: Cell<usize>,
    /// Since when replies wait with no byte of them written (`None`: none waiting).
    write_stalled_since: Cell<Option<Instant>>,
}

impl Flow {
    /// Fresh counters under `limits`, replies reserving from `budget` as `share` may.
    pub fn new(limits: FlowLimits, budget: Arc<ReplyBudget>, share: Rc<Share>) -> Rc<Self> {
        Rc::new(Flow {
            limits,
            queued_bytes: Cell::new(0),
            in_flight: Cell::new(0),
            paused: Cell::new(false),
            reader: RefCell::new(None),
            budget,
            share,
            reserved: Cell::new(0),
            write_stalled_since: Cell::new(None),
        })
    }

    /// Whether a reply of `bytes` may be queued: within the connection's `max_bytes` (any one
    /// reply fits when nothing is unwritten) and reserved from the budget until written, within
    /// its address's share. On refusal the caller closes the connection.
    pub fn admit_reply(&self, bytes: usize) -> Result<(), ReplyRefused> {
        let (queued, max) = (self.queued_bytes.get(), self.limits.max_bytes);
        if queued > 0 && queued.saturating_add(bytes) > max {
            return Err(ReplyRefused::Connection { reply: bytes, total: queued + bytes, max });
        }
        self.budget.try_reserve(&self.share, bytes).map_err(|over| ReplyRefused::Budget { reply: bytes, over })?;
        self.reserved.set(self.reserved.get() + bytes);
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
        if self.queued_bytes.get() == 0 && n > 0 {
            self.write_stalled_since.set(Some(Instant::now()));
        }
        self.queued_bytes.set(self.queued_bytes.get() + n);
    }

    /// How long replies have waited with no byte of them written (zero: none waiting).
    pub fn write_stalled_for(&self) -> Duration {
        self.write_stalled_since.get().map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// `n` queued bytes were written to the socket.
    pub fn written(&self, n: usize) {
        let queued = self.queued_bytes.get().saturating_sub(n);
        self.queued_bytes.set(queued);
        // Bytes written are progress: the clock of what still waits starts again.
        self.write_stalled_since.set((queued > 0).then(Instant::now));
        let reserved = self.reserved.get();
        if reserved > queued {
            self.budget.release(&self.share, reserved - queued);
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
        self.budget.release(&self.share, self.reserved.get());
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
    use crate::peers::{Kind, Shares};
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
        let flow = Flow::new(limits, ReplyBudget::new(Kind::Replies, 1 << 20, Shares::NONE), fresh_share());
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

    /// The share of a connection from an address of its own.
    fn fresh_share() -> Rc<Share> {
        Rc::new(Share::new(Arc::default()))
    }

    #[test]
    fn unwritten_replies_are_bounded_per_connection_and_every_one_across_connections() {
        let budget = ReplyBudget::new(Kind::Replies, 300 * 1024, Shares::NONE);
        let limits = FlowLimits { high_bytes: 100, low_bytes: 10, max_in_flight: 64, max_bytes: 250 * 1024 };
        let (a, b) =
            (Flow::new(limits, budget.clone(), fresh_share()), Flow::new(limits, budget.clone(), fresh_share()));
        assert_eq!(
            a.admit_reply(400 * 1024).unwrap_err().to_string(),
            "reply budget: a 409600-byte reply does not fit: 0 of 307200 bytes held"
        );
        a.admit_reply(200 * 1024).unwrap();
        a.queued(200 * 1024);
        let over = a.admit_reply(100 * 1024).unwrap_err();
        assert!(matches!(over, ReplyRefused::Connection { .. }), "{over}");
        a.admit_reply(1000).unwrap();
        a.queued(1000);
        assert!(matches!(b.admit_reply(150 * 1024), Err(ReplyRefused::Budget { .. })), "a holds 200 KiB of 300");
        b.admit_reply(60 * 1024).unwrap();
        assert_eq!(budget.held(), 200 * 1024 + 1000 + 60 * 1024, "small replies count too");
        a.written(150 * 1024);
        assert_eq!(budget.held(), 50 * 1024 + 1000 + 60 * 1024, "what is still unwritten stays reserved");
        drop(a);
        assert_eq!(budget.held(), 60 * 1024, "a closed connection gives back what it held");
    }

    #[test]
    fn one_address_holds_only_its_share_of_unwritten_replies() {
        let shares = Shares { peer_percent: 50, broker_reserve_percent: 0 };
        let budget = ReplyBudget::new(Kind::Replies, 100 * 1024, shares);
        let limits = FlowLimits { high_bytes: 1 << 20, low_bytes: 10, max_in_flight: 64, max_bytes: 1 << 20 };
        let attacker = fresh_share();
        let (one, two) =
            (Flow::new(limits, budget.clone(), attacker.clone()), Flow::new(limits, budget.clone(), attacker));
        one.admit_reply(30 * 1024).unwrap();
        let over = two.admit_reply(30 * 1024).unwrap_err();
        assert!(over.to_string().contains("this address's"), "two connections of one address share: {over}");
        Flow::new(limits, budget, fresh_share()).admit_reply(50 * 1024).unwrap();
    }
}
