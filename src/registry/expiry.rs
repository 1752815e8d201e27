//! The expiry tick's own state and what it reports: the punctuality watch and the clocks it is
//! judged on, where the consistency pass resumes, and the tick's warnings, counts and lines.
//! The tables decide (`liveness`, `stall`); the registry runs the tick (`scan`) and notifies.

use std::sync::Arc;
use std::time::Duration;

use tracing::{info, warn};

use super::liveness::{self, ExpiryTick};
use super::stall::TickWatch;
use super::tables::RouteTables;
use crate::clock::Clock;
use crate::metrics::{Metrics, Removal};
use crate::ratelog::RateLimit;

/// The target of the tick's lines: the registry's, which the docs and log filters name.
const TARGET: &str = "namesrv::registry";

/// The expiry tick between ticks.
pub(super) struct Expiry {
    /// The tick's punctuality: a late tick is a stall of our own.
    ticks: TickWatch,
    /// The boot and wall clocks the punctuality is judged on (see `stall`).
    clock: Arc<dyn Clock>,
    /// How long expiry is held after a stall: one scan interval.
    hold_ms: u64,
    /// Where the next tick's slice of the consistency pass starts.
    heal_from: usize,
    /// Warnings of wall clock steps: at most one a minute (a clock that keeps jumping would
    /// write one each tick).
    step_lines: RateLimit,
}

impl Expiry {
    /// The state of a tick every `scan_interval`, judged on `clock`.
    pub(super) fn new(scan_interval: Duration, clock: Arc<dyn Clock>) -> Self {
        let interval_ms = scan_interval.as_millis() as u64;
        Expiry {
            ticks: TickWatch::new(interval_ms),
            clock,
            hold_ms: interval_ms,
            heal_from: 0,
            step_lines: RateLimit::new(1, Duration::from_secs(60)),
        }
    }

    /// Sets the reference the first tick is measured from (registry time `now_ms`).
    pub(super) fn start(&mut self, now_ms: u64) {
        self.ticks.start(now_ms, self.clock.now());
    }

    /// One tick at registry time `now_ms`: removes every broker of `tables` silent past its
    /// timeout (unless the tick came late), runs one slice of the consistency pass, and counts
    /// and logs what it found. Returns how many brokers expired.
    pub(super) fn tick(&mut self, tables: &mut RouteTables, metrics: &Metrics, now_ms: u64) -> usize {
        let tick = tables.expiry_tick(&mut self.ticks, now_ms, self.clock.now());
        self.report_clocks(&tick, metrics);
        report_expired(&tick, tables.options().routing.expiry_guard_percent, metrics, now_ms);
        self.heal_slice(tables);
        tick.expired.len()
    }

    /// A wall clock step (rate-limited) and a stall of our own, counted and warned of.
    fn report_clocks(&self, tick: &ExpiryTick, metrics: &Metrics) {
        if let Some(step_ms) = tick.wall_step_ms {
            metrics.wall_clock_steps.inc();
            if let Some(suppressed) = self.step_lines.admit() {
                let seconds = step_ms as f64 / 1000.0;
                warn!(
                    target: TARGET,
                    step_ms,
                    suppressed, "wall clock stepped by {seconds:+.1} s: no stall of this process, expiry goes on"
                );
            }
        }
        if let Some(stall) = tick.stall {
            metrics.registry_stalls.inc();
            warn!(
                target: TARGET,
                stall_ms = stall.late_ms,
                boot_stall_ms = stall.boot_late_ms,
                brokers = tick.excused,
                hold_ms = self.hold_ms,
                "expiry tick late: this process stalled; brokers' silence excused by the stall and expiry held for one scan interval"
            );
        }
    }

    /// The next slice of the consistency pass, each repair warned of (it would be a bug).
    fn heal_slice(&mut self, tables: &mut RouteTables) {
        let (healed, next) = tables.heal_slice(self.heal_from, liveness::HEAL_SLICE);
        self.heal_from = next;
        for (group, addr) in &healed.unlive_addrs {
            warn!(target: TARGET, broker = %group, addr = %addr, "consistency pass: removed an address with no live registration");
        }
        for addr in &healed.unlisted_live {
            warn!(target: TARGET, addr = %addr, "consistency pass: dropped a live registration no broker group lists");
        }
    }
}

/// The brokers the tick expired (counted, and a line each with how long it was silent) and
/// those the mass-expiry guard (`percent`) held back.
fn report_expired(tick: &ExpiryTick, percent: u32, metrics: &Metrics, now_ms: u64) {
    let expired = &tick.expired;
    if tick.deferred > 0 {
        let (expired, deferred) = (expired.len(), tick.deferred);
        warn!(target: TARGET, expired, deferred, percent, "mass expiry held back: the rest go in the next ticks");
    }
    metrics.removed(Removal::Expired, expired.len());
    for e in expired {
        let b = &e.broker;
        let silent_ms = now_ms.saturating_sub(e.last_update_ms);
        info!(target: TARGET, broker = %b.broker_name, addr = %b.addr, cluster = %b.cluster, id = b.broker_id, silent_ms, "broker expired");
    }
}
