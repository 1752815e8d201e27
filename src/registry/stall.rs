//! Stalls of our own: an expiry tick that comes much later than scheduled means this process did
//! not run (a GC-like pause, SIGSTOP, a frozen VM, a starved CPU), and the heartbeats brokers sent
//! meanwhile are still waiting in the sockets. Liveness is judged on what the brokers sent, not
//! on our lateness, so after a stall every broker's silence is excused by the stall's length and
//! nothing expires until one more scan interval of fresh reads has passed. Pure: the caller reads
//! the clocks.

/// A tick later than this past its schedule is a stall (and at least [`MIN_STALL_MS`]).
pub const MIN_STALL_MS: u64 = 1_000;

/// How late one expiry tick came, on both clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// Lateness on the monotonic clock, which table times use: the silence excused.
    pub late_ms: u64,
    /// Lateness on the wall clock (it also counts a suspended machine; it can jump).
    pub wall_late_ms: u64,
}

/// What one expiry tick may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickPlan {
    /// The stall this tick detected, if it came late.
    pub stall: Option<Stall>,
    /// Whether brokers may expire on this tick: not within one scan interval after a stall.
    pub expire: bool,
}

/// Watches the expiry tick's punctuality against its interval.
#[derive(Debug, Clone)]
pub struct TickWatch {
    interval_ms: u64,
    /// (monotonic ms, wall ms) of the previous tick, or of the start.
    last: Option<(u64, u64)>,
    /// No expiry before this monotonic time (one scan interval after the last stall ended).
    hold_until_ms: u64,
}

impl TickWatch {
    /// A watch for ticks every `interval_ms`.
    pub fn new(interval_ms: u64) -> Self {
        Self { interval_ms, last: None, hold_until_ms: 0 }
    }

    /// How late past its schedule a tick may come before it counts as a stall.
    pub fn threshold_ms(&self) -> u64 {
        self.interval_ms.max(MIN_STALL_MS)
    }

    /// Sets the reference the first tick is measured from (the tick's schedule starts here).
    pub fn start(&mut self, mono_ms: u64, wall_ms: u64) {
        self.last = Some((mono_ms, wall_ms));
    }

    /// One tick at these clock readings (ms): whether it came late, and whether it may expire.
    pub fn tick(&mut self, mono_ms: u64, wall_ms: u64) -> TickPlan {
        let (last_mono, last_wall) = self.last.replace((mono_ms, wall_ms)).unwrap_or((mono_ms, wall_ms));
        let late = |now: u64, last: u64| now.saturating_sub(last).saturating_sub(self.interval_ms);
        let (late_ms, wall_late_ms) = (late(mono_ms, last_mono), late(wall_ms, last_wall));
        let threshold = self.threshold_ms();
        let stall = (late_ms > threshold || wall_late_ms > threshold).then_some(Stall { late_ms, wall_late_ms });
        if stall.is_some() {
            self.hold_until_ms = mono_ms.saturating_add(self.interval_ms);
        }
        TickPlan { stall, expire: stall.is_none() && mono_ms >= self.hold_until_ms }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctual_ticks_expire_and_a_late_one_holds_expiry_for_one_interval() {
        let mut w = TickWatch::new(500);
        w.start(0, 10_000);
        assert_eq!(w.tick(500, 10_500), TickPlan { stall: None, expire: true });
        assert_eq!(w.tick(1_990, 11_990).stall, None, "990 ms late is within max(1 s, interval)");
        let plan = w.tick(7_000, 17_000);
        assert_eq!(plan, TickPlan { stall: Some(Stall { late_ms: 4_510, wall_late_ms: 4_510 }), expire: false });
        assert!(!w.tick(7_400, 17_400).expire, "within one interval after the stall");
        assert_eq!(w.tick(7_500, 17_500), TickPlan { stall: None, expire: true });
    }

    #[test]
    fn a_stall_only_the_wall_clock_saw_also_holds_expiry_and_a_wall_jump_back_is_no_stall() {
        let mut w = TickWatch::new(5_000);
        w.start(0, 100_000);
        let plan = w.tick(5_000, 160_000);
        assert_eq!(plan.stall, Some(Stall { late_ms: 0, wall_late_ms: 55_000 }));
        assert!(!plan.expire);
        assert_eq!(w.tick(10_000, 50_000), TickPlan { stall: None, expire: true });
    }
}
