//! What one actor's mailbox measures: messages queued and not yet handled, how long each took
//! to handle, and when the last one was handled (its progress, which a liveness probe reads
//! without queuing behind the messages). Counting rides on the message itself ([`Ticket`]), so a message that is never
//! handled (a failed send, an actor that stopped) is never left counted.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::metrics::histogram::SecondsHistogram;
use crate::metrics::Metrics;

/// One actor's queue depth and handling times, shared by its every address.
#[derive(Debug)]
pub struct Meter {
    actor: &'static str,
    /// Messages queued and not yet handled (watched by the metrics).
    queued: Arc<AtomicUsize>,
    metrics: Arc<Metrics>,
    /// Handling-time histograms by message type, found once per type. Only the actor's own
    /// thread records, so the lock is never contended.
    timings: Mutex<HashMap<&'static str, SecondsHistogram>>,
    /// When the meter was made: progress is counted from it.
    born: Instant,
    /// Milliseconds after `born` when the last message was handled.
    progress_ms: AtomicU64,
}

impl Meter {
    /// The meter of `actor`, its depth and handling times exported through `metrics`.
    pub fn new(actor: &'static str, metrics: Arc<Metrics>) -> Arc<Self> {
        let queued = Arc::new(AtomicUsize::new(0));
        metrics.watch_mailbox(actor, queued.clone());
        let timings = Mutex::new(HashMap::new());
        Arc::new(Meter { actor, queued, metrics, timings, born: Instant::now(), progress_ms: AtomicU64::new(0) })
    }

    /// The actor's name in logs and metrics.
    pub fn actor(&self) -> &'static str {
        self.actor
    }

    /// Messages queued and not yet handled.
    pub fn depth(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// Counts one message until its ticket is handled or dropped.
    pub fn ticket(self: &Arc<Self>) -> Ticket {
        self.queued.fetch_add(1, Ordering::Relaxed);
        Ticket { meter: self.clone(), counted: true }
    }

    /// Notes that a message was just handled.
    pub fn progressed(&self) {
        self.progress_ms.store(self.born.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// How long ago the last message was handled (since the meter was made, if none was).
    pub fn since_progress(&self) -> Duration {
        self.born.elapsed().saturating_sub(Duration::from_millis(self.progress_ms.load(Ordering::Relaxed)))
    }

    /// Records that handling one `message` took `nanos`.
    pub fn observe(&self, message: &'static str, nanos: u64) {
        let metrics = &self.metrics;
        if !metrics.is_on() {
            return;
        }
        let mut timings = self.timings.lock().unwrap_or_else(|e| e.into_inner());
        timings.entry(message).or_insert_with(|| metrics.mailbox_handle(self.actor, message)).observe_nanos(nanos);
    }
}

/// A queued message's place in its actor's depth: given back when the message is handled, or
/// when it is dropped unhandled (the send failed, or the actor stopped with it queued).
#[derive(Debug)]
pub struct Ticket {
    meter: Arc<Meter>,
    counted: bool,
}

impl Ticket {
    /// Gives the place back as handling begins; returns the messages still queued behind it.
    pub fn handled(&mut self) -> usize {
        if !std::mem::replace(&mut self.counted, false) {
            return self.meter.depth();
        }
        self.meter.queued.fetch_sub(1, Ordering::Relaxed).saturating_sub(1)
    }

    /// The meter to record the handling time on.
    pub fn meter(&self) -> &Meter {
        &self.meter
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.counted {
            self.meter.queued.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
