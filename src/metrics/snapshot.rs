//! The route snapshot's writes (`namesrv_route_snapshot_*`): failures by reason, and when the
//! last write reached the disk. A snapshot that cannot be written costs nothing while serving,
//! but the next restart then finds an old snapshot or none (no warm restart): the failures are
//! counted for an alert, not only logged.

use std::io;
use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::ReasonLabel;
use crate::persist::DiskRefusal;

/// Every `reason` of `namesrv_route_snapshot_write_failures_total`.
pub const WRITE_FAILURE_REASONS: [&str; 4] = ["no_space", "read_only", "permission", "other"];

/// The route snapshot writer's figures.
#[derive(Debug, Default)]
pub struct SnapshotFigures {
    failures: Family<ReasonLabel, Counter>,
    last_written: Gauge<f64, AtomicU64>,
}

impl SnapshotFigures {
    /// Registers the figures in `ns` (the `namesrv` prefix), every failure reason at 0.
    pub fn register(&self, ns: &mut Registry) {
        for reason in WRITE_FAILURE_REASONS {
            drop(self.failures.get_or_create(&ReasonLabel { reason }));
        }
        let s = ns.sub_registry_with_prefix("route_snapshot");
        s.register("write_failures", "Route snapshots that could not be written, by reason", self.failures.clone());
        let last = self.last_written.clone();
        s.register("last_write_timestamp_seconds", "When a route snapshot last reached the disk (0: never)", last);
    }

    /// Records a snapshot written at `wall_ms` (milliseconds since the Unix epoch).
    pub fn written(&self, wall_ms: u64) {
        self.last_written.set(wall_ms as f64 / 1000.0);
    }

    /// Records a snapshot that could not be written.
    pub fn failed(&self, error: &io::Error) {
        self.failures.get_or_create(&ReasonLabel { reason: failure_reason(error) }).inc();
    }
}

/// The bounded `reason` label of a write error.
pub fn failure_reason(error: &io::Error) -> &'static str {
    match DiskRefusal::of(error) {
        Some(DiskRefusal::NoSpace) => "no_space",
        Some(DiskRefusal::ReadOnly) => "read_only",
        Some(DiskRefusal::Permission) => "permission",
        None => "other",
    }
}
