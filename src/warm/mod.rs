//! Warm restart: at start, the route snapshot a previous run left is read (`file`) and loaded
//! into the registry as provisional brokers; while serving, the registry's snapshots are written
//! by a thread of its own (`writer`); at shutdown, a last one. An unreadable or too old file is
//! ignored with a warning and never stops start-up. The registry decides when a snapshot is due
//! and produces it (`registry::snapshot_pace`); nothing here touches route state.

pub mod file;
pub mod writer;

use std::sync::Arc;
use std::time::Instant;

use tracing::{info, warn};

use crate::metrics::Metrics;
use crate::origin::ConnId;
use crate::registry::messages::{FinalSnapshot, LoadSnapshot};
use crate::registry::snapshot_pace::wall_ms;
use crate::registry::RegistryHandle;
use crate::settings::Settings;
use file::{max_bytes_for, path_for, read};
pub use writer::SnapshotWriter;

/// What a warm start found.
#[derive(Debug)]
pub struct WarmStart {
    /// The writer thread, when `warm_restart` is on.
    pub writer: Option<SnapshotWriter>,
    /// Provisional brokers loaded (0: none, or no snapshot).
    pub loaded: usize,
}

/// At start: loads the snapshot (when `warm_restart` is on and one usable is there) into the
/// registry, and starts the writer thread the registry hands its snapshots to (its writes
/// counted in `metrics`).
pub async fn warm_start(settings: &Settings, registry: &RegistryHandle, metrics: Arc<Metrics>) -> WarmStart {
    if !settings.routing.warm_restart {
        return WarmStart { writer: None, loaded: 0 };
    }
    let path = path_for(settings);
    let begin = Instant::now();
    let snapshot = match read(&path, wall_ms(), settings.routing.warm_restart_max_age_ms, max_bytes_for(settings)) {
        Ok(found) => found,
        Err(error) => {
            warn!(%error, "route snapshot ignored: starting with empty tables");
            None
        }
    };
    let writer = match SnapshotWriter::start(path.clone(), metrics) {
        Ok(writer) => Some(writer),
        Err(error) => {
            warn!(%error, "cannot start the route snapshot writer: no snapshots this run");
            None
        }
    };
    let sink = writer.as_ref().map(SnapshotWriter::sink);
    let (snapshot, age_ms) = snapshot.map_or((None, 0), |(s, age)| (Some(s), age));
    let loaded = registry.ask(LoadSnapshot { conn: ConnId::SERVER, snapshot, age_ms, sink }).await.unwrap_or(0);
    if loaded > 0 || age_ms > 0 {
        let load_ms = begin.elapsed().as_millis() as u64;
        info!(path = %path.display(), brokers = loaded, age_ms, load_ms, "route snapshot loaded: brokers provisional until they register");
    }
    WarmStart { writer, loaded }
}

/// At shutdown, before connections close: the registry's last snapshot, written before this
/// returns; later changes (our own closes) are not broker departures and are not written.
pub async fn final_snapshot(registry: &RegistryHandle, writer: Option<SnapshotWriter>) {
    let Some(writer) = writer else {
        return;
    };
    let last = registry.ask(FinalSnapshot { conn: ConnId::SERVER }).await.ok().flatten();
    writer.finish(last);
}
