//! When the registry's timed work is due: the expiry scan and the route snapshot check. actix
//! runs an interval only in a turn that found the mailbox empty, so a registry kept busy by
//! requests would scan only once the flood ends (and read its own lateness as a stall of the
//! process). The registry therefore checks what is due before every message it handles, and a
//! fine-grained interval covers an idle mailbox: a scan is late by at most one handler, however
//! full the queue. Pure: the caller reads the clock.

use std::time::Duration;

use tokio::time::Instant;

/// Timed work that is due.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Due {
    /// The expiry scan.
    pub scan: bool,
    /// The route snapshot check.
    pub snapshot: bool,
}

/// The schedule of the registry's timed work.
#[derive(Debug, Clone)]
pub struct Timers {
    scan_every: Duration,
    snapshot_every: Duration,
    next_scan: Instant,
    next_snapshot: Instant,
}

impl Timers {
    /// A schedule started at `now`: a scan every `scan_every`, a snapshot check every
    /// `snapshot_every`.
    pub fn new(now: Instant, scan_every: Duration, snapshot_every: Duration) -> Self {
        Timers { scan_every, snapshot_every, next_scan: now + scan_every, next_snapshot: now + snapshot_every }
    }

    /// What is due at `now`; each due item is next due one period after `now` (a late check
    /// runs the work once, not once per missed period).
    pub fn due(&mut self, now: Instant) -> Due {
        let scan = now >= self.next_scan;
        if scan {
            self.next_scan = now + self.scan_every;
        }
        let snapshot = now >= self.next_snapshot;
        if snapshot {
            self.next_snapshot = now + self.snapshot_every;
        }
        Due { scan, snapshot }
    }

    /// How often an idle registry checks: often enough that nothing is late by more than a
    /// quarter of the shorter period (at most 100 ms), rarely enough to cost nothing.
    pub fn check_every(&self) -> Duration {
        (self.scan_every.min(self.snapshot_every) / 4).clamp(Duration::from_millis(1), Duration::from_millis(100))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_is_due_once_per_period_and_a_late_check_runs_it_once() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let mut timers = Timers::new(start, ms(200), ms(1_000));
        assert_eq!(timers.due(start + ms(199)), Due::default());
        assert_eq!(timers.due(start + ms(200)), Due { scan: true, snapshot: false });
        assert_eq!(timers.due(start + ms(300)), Due::default(), "next due one period after it ran");
        let late = timers.due(start + ms(5_000));
        assert_eq!(late, Due { scan: true, snapshot: true });
        assert_eq!(timers.due(start + ms(5_100)), Due::default(), "once, not once per missed period");
        assert_eq!(timers.check_every(), ms(50));
        assert_eq!(Timers::new(start, ms(120_000), ms(1_000)).check_every(), ms(100));
    }
}
