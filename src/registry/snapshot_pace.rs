//! When the registry takes a route snapshot for a warm restart, and handing it over: at most one
//! every [`MIN_GAP`], only when the tables changed, to a [`SnapshotSink`] that never blocks. The
//! writing itself (a thread, the file) lives outside the registry, in `warm`.

use std::fmt;
use std::time::{Duration, Instant};

use super::snapshot::Snapshot;

/// Where the registry hands its route snapshots to be written; never blocks.
pub trait SnapshotSink: Send + fmt::Debug {
    /// Hands `snapshot` over; gives it back when the writer is still busy with the previous
    /// one (the registry tries again later) or gone.
    fn offer(&self, snapshot: Snapshot) -> Result<(), Snapshot>;
}

pub use crate::clock::wall_ms;

/// How often the registry checks whether a snapshot is due.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Least time between two snapshots: a burst of changes costs one snapshot, and the file is at
/// most this plus [`CHECK_EVERY`] behind the last change.
pub const MIN_GAP: Duration = Duration::from_secs(5);

/// The registry's side: when a snapshot is due, and handing it over.
#[derive(Debug, Default)]
pub struct SnapshotPace {
    sink: Option<Box<dyn SnapshotSink>>,
    /// The tables' change count the last handed-over snapshot showed.
    written: u64,
    last: Option<Instant>,
    /// A snapshot the busy writer did not take yet, with the change count it shows.
    pending: Option<(Snapshot, u64)>,
    /// Set at shutdown: no more snapshots.
    frozen: bool,
}

impl SnapshotPace {
    /// Snapshots go to `sink` from now on; the tables as they are (`changes`) need none.
    pub fn start(&mut self, sink: Option<Box<dyn SnapshotSink>>, changes: u64) {
        self.sink = sink;
        self.written = changes;
    }

    /// Stops taking snapshots; returns whether they were on (a last one is wanted then).
    pub fn finish(&mut self) -> bool {
        self.frozen = true;
        self.pending = None;
        self.sink.take().is_some()
    }

    /// Whether a snapshot showing `changes` is due now: something changed since the last one,
    /// at least [`MIN_GAP`] ago. `Some(snapshot)` when the one the writer did not take is still
    /// current.
    pub fn due(&mut self, changes: u64) -> Option<Option<Snapshot>> {
        let on = self.sink.is_some() && !self.frozen && changes != self.written;
        if !on || self.last.is_some_and(|at| at.elapsed() < MIN_GAP) {
            return None;
        }
        match self.pending.take() {
            Some((snapshot, shown)) if shown == changes => Some(Some(snapshot)),
            _ => Some(None),
        }
    }

    /// Hands `snapshot` (showing `changes`) to the writer; keeps it if the writer is busy.
    pub fn offer(&mut self, snapshot: Snapshot, changes: u64) -> bool {
        let Some(sink) = &self.sink else {
            return false;
        };
        match sink.offer(snapshot) {
            Ok(()) => {
                (self.written, self.last) = (changes, Some(Instant::now()));
                true
            }
            Err(snapshot) => {
                self.pending = Some((snapshot, changes));
                false
            }
        }
    }
}
