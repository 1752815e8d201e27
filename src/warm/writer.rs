//! The route snapshot's writer thread: one snapshot at a time, each replacing the file
//! crash-safely, so the registry only produces the value and never waits for the disk.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::Instant;

use tracing::{debug, info, warn};

use crate::persist::write_atomically_with;
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
    /// Starts the thread writing to `path`. Its queue holds one snapshot: the registry keeps a
    /// newer one until the thread has taken the previous.
    pub fn start(path: PathBuf) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::sync_channel::<Job>(1);
        let thread = std::thread::Builder::new().name("route-snapshot".into()).spawn(move || {
            while let Ok(job) = rx.recv() {
                match job {
                    Job::Write(mut snapshot) => {
                        snapshot.sort();
                        write(&path, &snapshot, false)
                    }
                    Job::Last(snapshot) => {
                        if let Some(mut snapshot) = snapshot {
                            snapshot.sort();
                            write(&path, &snapshot, true);
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

/// Serializes and writes one snapshot; a failure is logged, the next snapshot tries again.
fn write(path: &Path, snapshot: &Snapshot, last: bool) {
    let begin = Instant::now();
    let brokers: usize = snapshot.groups.iter().map(|g| g.members.len()).sum();
    let result = write_atomically_with(path, |out| serde_json::to_writer(out, snapshot).map_err(std::io::Error::from));
    let elapsed_ms = begin.elapsed().as_millis() as u64;
    match result {
        Ok(bytes) if last => {
            info!(path = %path.display(), brokers, bytes, elapsed_ms, "route snapshot written at shutdown")
        }
        Ok(bytes) => debug!(path = %path.display(), brokers, bytes, elapsed_ms, "route snapshot written"),
        Err(error) => warn!(path = %path.display(), %error, "route snapshot not written"),
    }
}
