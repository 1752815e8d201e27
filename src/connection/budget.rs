//! A process-wide budget of bytes that connections reserve from and give back to: large frames
//! being received or waiting to be handled (`frame_budget_bytes`), and large replies waiting to
//! be written (`reply_budget_bytes`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes held by all connections together, never more than `max`.
#[derive(Debug)]
pub struct ByteBudget {
    held: AtomicUsize,
    max: usize,
}

impl ByteBudget {
    /// A budget of `max` bytes.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(ByteBudget { held: AtomicUsize::new(0), max })
    }

    /// Bytes reserved now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// The most bytes it holds.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Reserves `n` bytes if they fit; false (and nothing reserved) if not.
    pub(super) fn try_reserve(&self, n: usize) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| held.checked_add(n).filter(|t| *t <= self.max))
            .is_ok()
    }

    /// Gives back `n` reserved bytes.
    pub(super) fn release(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::AcqRel);
    }
}
