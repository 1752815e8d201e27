//! The route snapshot's writer thread: one snapshot at a time, each replacing the file
//! crash-safely, so the registry only produces the value and never waits for the disk.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use crate::clock::wall_ms;
use crate::metrics::Metrics;
use crate::persist::write_atomically_with;
use crate::ratelog::RateLimit;
use crate::registry::snapshot::Snapshot;
use crate::registry::snapshot_pace::SnapshotSink;

/// One job of the writer thread.
#[derive(Debug)]
enum Job {
    /// Write this snapshot.
    Write(Snapshot),
    /// Write this one (if any), then end.
    Last(Option<Snapshot>),
}

/// Where the registry hands snapshots to the writer thread; never blocks.
#[derive(Debug, Clone)]
struct WriterSink {
    tx: SyncSender<Job>,
}

impl SnapshotSink for WriterSink {
    fn offer(&self, snapshot: Snapshot) -> Result<(), Snapshot> {
        self.tx.try_send(Job::Write(snapshot)).map_err(|e| match e {
            TrySendError::Full(Job::Write(s)) | TrySendError::Disconnected(Job::Write(s)) => s,
            TrySendError::Full(Job::Last(_)) | TrySendError::Disconnected(Job::Last(_)) => Snapshot::default(),
        })
    }
}

/// The writer thread: one snapshot at a time, each replacing the file crash-safely.
#[derive(Debug)]
pub struct SnapshotWriter {
    tx: SyncSender<Job>,
    thread: JoinHandle<()>,
}

impl SnapshotWriter {
    /// Starts the thread writing to `path`, counting its writes in `metrics`. Its queue holds
    /// one snapshot: the registry keeps a newer one until the thread has taken the previous.
    pub fn start(path: PathBuf, metrics: Arc<Metrics>) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::sync_channel::<Job>(1);
        let out = Output { path, metrics, warnings: RateLimit::new(1, FAILURE_WARN_EVERY) };
        let thread = std::thread::Builder::new().name("route-snapshot".into()).spawn(move || {
            while let Ok(job) = rx.recv() {
                match job {
                    Job::Write(mut snapshot) => {
                        snapshot.sort();
                        out.write(&snapshot, false)
                    }
                    Job::Last(snapshot) => {
                        if let Some(mut snapshot) = snapshot {
                            snapshot.sort();
                            out.write(&snapshot, true);
                        }
                        return;
                    }
                }
            }
        })?;
        Ok(Self { tx, thread })
    }

    /// Where the registry hands snapshots.
    pub fn sink(&self) -> Box<dyn SnapshotSink> {
        Box::new(WriterSink { tx: self.tx.clone() })
    }

    /// Writes `last` (after any snapshot in progress) and ends the thread.
    pub fn finish(self, last: Option<Snapshot>) {
        if self.tx.send(Job::Last(last)).is_ok() {
            let _ = self.thread.join();
        }
    }
}

/// At most one warning of failed writes per this long (a snapshot is tried every few seconds
/// while the tables change); the others are counted in `namesrv_route_snapshot_write_failures_total`
/// and in the next warning's `suppressed`.
const FAILURE_WARN_EVERY: Duration = Duration::from_secs(60);

/// Where the writer thread writes, and what it counts.
struct Output {
    path: PathBuf,
    metrics: Arc<Metrics>,
    warnings: RateLimit,
}

impl Output {
    /// Serializes and writes one snapshot; a failure is counted and logged (at most once a
    /// minute), the next snapshot tries again.
    fn write(&self, snapshot: &Snapshot, last: bool) {
        let path: &Path = &self.path;
        let begin = Instant::now();
        let brokers: usize = snapshot.groups.iter().map(|g| g.members.len()).sum();
        let result =
            write_atomically_with(path, |out| serde_json::to_writer(out, snapshot).map_err(std::io::Error::from));
        let elapsed_ms = begin.elapsed().as_millis() as u64;
        let figures = &self.metrics.route_snapshot;
        match result {
            Ok(bytes) => {
                figures.written(wall_ms());
                if last {
                    info!(path = %path.display(), brokers, bytes, elapsed_ms, "route snapshot written at shutdown")
                } else {
                    debug!(path = %path.display(), brokers, bytes, elapsed_ms, "route snapshot written")
                }
            }
            Err(error) => {
                figures.failed(&error);
                if let Some(suppressed) = if last { Some(0) } else { self.warnings.admit() } {
                    warn!(path = %path.display(), %error, suppressed, "route snapshot not written: a restart now would not find these routes");
                }
            }
        }
    }
}
