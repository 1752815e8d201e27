//! Back-pressure between a connection's reader, its requests in flight and its writer: the
//! reader stops taking frames while too many requests are in flight or too many reply bytes
//! wait to be written (a peer that pipelines and never reads), and resumes below the low mark.
//!
//! Everything of one connection runs on its arbiter's thread, so the counters are plain cells.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

/// The marks of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowLimits {
    /// Reading stops above this many reply bytes queued for writing (Netty's high water mark).
    pub high_bytes: usize,
    /// ... and resumes at or below this many.
    pub low_bytes: usize,
    /// Reading stops while this many requests are in flight.
    pub max_in_flight: usize,
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
}

impl Flow {
    /// Fresh counters under `limits`.
    pub fn new(limits: FlowLimits) -> Rc<Self> {
        Rc::new(Flow {
            limits,
            queued_bytes: Cell::new(0),
            in_flight: Cell::new(0),
            paused: Cell::new(false),
            reader: RefCell::new(None),
        })
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
        self.queued_bytes.set(self.queued_bytes.get().saturating_sub(n));
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
        let flow = Flow::new(FlowLimits { high_bytes: 100, low_bytes: 10, max_in_flight: 2 });
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
}
