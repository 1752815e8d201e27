//! The clocks the server measures time on. The wall clock (`CLOCK_REALTIME`) is what people and
//! files read, and it can be stepped (an operator, NTP's first sync, a VM resumed with a stale
//! clock); the boot clock (`CLOCK_BOOTTIME` on Linux) never steps and, unlike tokio's monotonic
//! clock, keeps counting while the machine is suspended. Lateness and rates are measured on the
//! boot clock; where the wall clock moved differently, the wall clock was stepped. Deadlines and
//! timeouts are measured on tokio's monotonic clock ([`Clock::instant`]), which a test pauses
//! and advances.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch on the wall clock (0 before it).
pub fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Milliseconds on the boot clock: since the machine booted, suspended time included, never
/// stepped (Linux `CLOCK_BOOTTIME`; elsewhere the monotonic clock since this process first asked).
#[cfg(target_os = "linux")]
pub fn boot_ms() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    (t.tv_sec.max(0) as u64).saturating_mul(1000).saturating_add(t.tv_nsec.max(0) as u64 / 1_000_000)
}

/// Milliseconds on the boot clock: since the machine booted, suspended time included, never
/// stepped (Linux `CLOCK_BOOTTIME`; elsewhere the monotonic clock since this process first asked).
#[cfg(not(target_os = "linux"))]
pub fn boot_ms() -> u64 {
    static ZERO: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    ZERO.get_or_init(std::time::Instant::now).elapsed().as_millis() as u64
}

/// Both clocks read together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// [`boot_ms`].
    pub boot_ms: u64,
    /// [`wall_ms`].
    pub wall_ms: u64,
}

/// Where the server reads its clocks; tests hand in a clock they step.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Both clocks now.
    fn now(&self) -> Reading;

    /// The monotonic clock deadlines and timeouts are measured on: tokio's, so that a test that
    /// pauses the runtime's time (and the timers that follow it) moves this clock with it.
    fn instant(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }
}

/// The machine's clocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Reading {
        Reading { boot_ms: boot_ms(), wall_ms: wall_ms() }
    }
}

/// How far the wall clock moved beyond the boot clock between two readings (ms; negative: it
/// was set back). Zero for clocks that kept step.
pub fn wall_step_ms(before: Reading, after: Reading) -> i64 {
    let wall = after.wall_ms as i64 - before.wall_ms as i64;
    let boot = after.boot_ms as i64 - before.boot_ms as i64;
    wall - boot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boot_clock_runs_with_the_wall_clock_and_a_step_is_the_difference() {
        let a = SystemClock.now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = SystemClock.now();
        assert!(b.boot_ms >= a.boot_ms + 20);
        assert!(wall_step_ms(a, b).abs() < 1_000, "no step between {a:?} and {b:?}");
        let stepped = Reading { boot_ms: b.boot_ms, wall_ms: b.wall_ms - 3_600_000 };
        assert!((wall_step_ms(a, stepped) + 3_600_000).abs() < 1_000);
    }
}
