//! Stalls of our own: an expiry tick that comes much later than scheduled means this process did
//! not run (a GC-like pause, SIGSTOP, a frozen VM, a starved CPU), and the heartbeats brokers sent
//! meanwhile are still waiting in the sockets. Liveness is judged on what the brokers sent, not
//! on our lateness, so after a stall every broker's silence is excused by the stall's length and
//! nothing expires until one more scan interval of fresh reads has passed.
//!
//! Lateness is measured on clocks that never step: the table clock (monotonic) and the boot
//! clock, which also counts a suspended machine. The wall clock is only compared with the boot
//! clock: where the two moved apart, the wall clock was stepped (by an operator, NTP's first
//! sync, a VM restored with a stale clock). That is reported as a step, never as a stall, and
//! holds no expiry. Pure: the caller reads the clocks.

use crate::clock::{wall_step_ms, Reading};

/// A tick later than this past its schedule is a stall (and at least [`MIN_STALL_MS`]).
pub const MIN_STALL_MS: u64 = 1_000;

/// How late one expiry tick came, on both clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// Lateness on the monotonic clock, which table times use: the silence excused.
    pub late_ms: u64,
    /// Lateness on the boot clock (it also counts a suspended machine; it never steps).
    pub boot_late_ms: u64,
}

/// What one expiry tick may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickPlan {
    /// The stall this tick detected, if it came late.
    pub stall: Option<Stall>,
    /// Whether brokers may expire on this tick: not within one scan interval after a stall.
    pub expire: bool,
    /// How far the wall clock was stepped since the previous tick (ms, negative: set back),
    /// when it moved more than the stall threshold apart from the boot clock.
    pub wall_step_ms: Option<i64>,
}

/// Watches the expiry tick's punctuality against its interval.
#[derive(Debug, Clone)]
pub struct TickWatch {
    interval_ms: u64,
    /// The monotonic ms and the clocks of the previous tick, or of the start.
    last: Option<(u64, Reading)>,
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
    pub fn start(&mut self, mono_ms: u64, clocks: Reading) {
        self.last = Some((mono_ms, clocks));
    }

    /// One tick at these clock readings (ms): whether it came late, whether it may expire, and
    /// whether the wall clock was stepped meanwhile.
    pub fn tick(&mut self, mono_ms: u64, clocks: Reading) -> TickPlan {
        let (last_mono, last) = self.last.replace((mono_ms, clocks)).unwrap_or((mono_ms, clocks));
        let late = |now: u64, last: u64| now.saturating_sub(last).saturating_sub(self.interval_ms);
        let (late_ms, boot_late_ms) = (late(mono_ms, last_mono), late(clocks.boot_ms, last.boot_ms));
        let threshold = self.threshold_ms();
        let stall = (late_ms > threshold || boot_late_ms > threshold).then_some(Stall { late_ms, boot_late_ms });
        if stall.is_some() {
            self.hold_until_ms = mono_ms.saturating_add(self.interval_ms);
        }
        let step = wall_step_ms(last, clocks);
        let wall_step_ms = (step.unsigned_abs() > threshold).then_some(step);
        TickPlan { stall, expire: stall.is_none() && mono_ms >= self.hold_until_ms, wall_step_ms }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clocks at boot-clock `boot_ms`, the wall clock `offset_ms` ahead of it.
    fn at(boot_ms: u64, offset_ms: u64) -> Reading {
        Reading { boot_ms, wall_ms: boot_ms + offset_ms }
    }

    const OFFSET: u64 = 1_700_000_000_000;

    #[test]
    fn punctual_ticks_expire_and_a_late_one_holds_expiry_for_one_interval() {
        let mut w = TickWatch::new(500);
        w.start(0, at(10_000, OFFSET));
        assert_eq!(w.tick(500, at(10_500, OFFSET)), TickPlan { stall: None, expire: true, wall_step_ms: None });
        assert_eq!(w.tick(1_990, at(11_990, OFFSET)).stall, None, "990 ms late is within max(1 s, interval)");
        let plan = w.tick(7_000, at(17_000, OFFSET));
        let stall = Stall { late_ms: 4_510, boot_late_ms: 4_510 };
        assert_eq!(plan, TickPlan { stall: Some(stall), expire: false, wall_step_ms: None });
        assert!(!w.tick(7_400, at(17_400, OFFSET)).expire, "within one interval after the stall");
        assert_eq!(w.tick(7_500, at(17_500, OFFSET)), TickPlan { stall: None, expire: true, wall_step_ms: None });
    }

    #[test]
    fn a_suspended_machine_is_a_stall_the_boot_clock_saw() {
        let mut w = TickWatch::new(5_000);
        w.start(0, at(100_000, OFFSET));
        // Tokio's monotonic clock does not count a suspend; the boot clock and the wall clock do.
        let plan = w.tick(5_000, at(160_000, OFFSET));
        assert_eq!(plan.stall, Some(Stall { late_ms: 0, boot_late_ms: 55_000 }));
        assert_eq!((plan.expire, plan.wall_step_ms), (false, None));
    }

    #[test]
    fn a_wall_clock_step_either_way_is_named_a_step_and_is_no_stall() {
        let mut w = TickWatch::new(500);
        w.start(0, at(10_000, OFFSET));
        let forward = w.tick(500, at(10_500, OFFSET + 3_600_000));
        assert_eq!(forward, TickPlan { stall: None, expire: true, wall_step_ms: Some(3_600_000) });
        let back = w.tick(1_000, at(11_000, OFFSET - 90_000));
        assert_eq!(back, TickPlan { stall: None, expire: true, wall_step_ms: Some(-3_690_000) });
        let slewed = w.tick(1_500, at(11_500, OFFSET - 89_500));
        assert_eq!(slewed, TickPlan { stall: None, expire: true, wall_step_ms: None }, "half a second is a slew");
    }
}
