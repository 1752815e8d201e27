//! The route snapshot on disk (`routeSnapshot.json` beside the KV config file, in the state
//! directory): read once at start, where an unreadable or too old one is ignored with a warning
//! and never stops start-up; written crash-safely by a thread of its own, so the registry only
//! produces the value and never waits for the disk.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use thiserror::Error;
use tracing::{debug, info, warn};

use super::messages::{FinalSnapshot, LoadSnapshot};
use super::snapshot::{Snapshot, FORMAT};
use super::RegistryHandle;
use crate::origin::ConnId;
use crate::persist::{read_state_file, write_atomically_with};
use crate::settings::Settings;

/// The snapshot's file name, in the directory of `kv_config_path`.
pub const FILE_NAME: &str = "routeSnapshot.json";

/// A snapshot file larger than this is not read.
pub const MAX_FILE_BYTES: u64 = 1 << 31;

/// Why a snapshot was not loaded.
#[derive(Debug, Error)]
pub enum SnapshotError {
    /// The file exists but cannot be read: not a regular file, a symbolic link, larger than
    /// [`MAX_FILE_BYTES`], or an I/O error.
    #[error("cannot read {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    /// The file is not a snapshot this build reads.
    #[error("{path}: not a route snapshot: {error}")]
    Parse { path: PathBuf, error: serde_json::Error },
    /// Another format.
    #[error("{path}: format {found}, this build reads {FORMAT}")]
    Format { path: PathBuf, found: u32 },
    /// Older than `warm_restart_max_age_ms`.
    #[error("{path}: taken {age_ms} ms ago, more than warm_restart_max_age_ms = {max_age_ms}")]
    TooOld { path: PathBuf, age_ms: u64, max_age_ms: u64 },
}

/// Where the snapshot of a server with these settings lives.
pub fn path_for(settings: &Settings) -> PathBuf {
    let kv = Path::new(&settings.state.kv_config_path);
    kv.parent().unwrap_or(Path::new(".")).join(FILE_NAME)
}

/// Milliseconds since the epoch on the wall clock (0 before it).
pub fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Reads the snapshot at `path` and its age at `now_ms`; `Ok(None)` when there is none.
pub fn read(path: &Path, now_ms: u64, max_age_ms: u64) -> Result<Option<(Snapshot, u64)>, SnapshotError> {
    // Never through a symbolic link, never a FIFO or device, never past the bound.
    let text = match read_state_file(path, MAX_FILE_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(SnapshotError::Read { path: path.into(), error }),
    };
    let snapshot: Snapshot =
        serde_json::from_slice(&text).map_err(|error| SnapshotError::Parse { path: path.into(), error })?;
    if snapshot.format != FORMAT {
        return Err(SnapshotError::Format { path: path.into(), found: snapshot.format });
    }
    let age_ms = now_ms.saturating_sub(snapshot.taken_at_ms);
    if age_ms > max_age_ms {
        return Err(SnapshotError::TooOld { path: path.into(), age_ms, max_age_ms });
    }
    Ok(Some((snapshot, age_ms)))
}

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
pub struct SnapshotSink {
    tx: SyncSender<Job>,
}

impl SnapshotSink {
    /// Hands `snapshot` over; gives it back when the writer is still busy with the previous
    /// one (the caller tries again later) or gone.
    pub fn offer(&self, snapshot: Snapshot) -> Result<(), Snapshot> {
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
    pub fn sink(&self) -> SnapshotSink {
        SnapshotSink { tx: self.tx.clone() }
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

/// How often the registry checks whether a snapshot is due.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Least time between two snapshots: a burst of changes costs one snapshot, and the file is at
/// most this plus [`CHECK_EVERY`] behind the last change.
pub const MIN_GAP: Duration = Duration::from_secs(5);

/// The registry's side: when a snapshot is due, and handing it over.
#[derive(Debug, Default)]
pub struct SnapshotPace {
    sink: Option<SnapshotSink>,
    /// The tables' change count the last handed-over snapshot showed.
    written: u64,
    last: Option<Instant>,
    /// A snapshot the busy writer did not take yet, with the change count it shows.
    pending: Option<(Snapshot, u64)>,
    /// Set at shutdown: no more snapshots.
    frozen: bool,
}

impl SnapshotPace {
    /// Snapshots go to `sink` from now on; the tables as they are (`changes`) need none.
    pub fn start(&mut self, sink: Option<SnapshotSink>, changes: u64) {
        self.sink = sink;
        self.written = changes;
    }

    /// Stops taking snapshots; returns whether they were on (a last one is wanted then).
    pub fn finish(&mut self) -> bool {
        self.frozen = true;
        self.pending = None;
        self.sink.is_some()
    }

    /// Whether a snapshot showing `changes` is due now: something changed since the last one,
    /// at least [`MIN_GAP`] ago. `Some(snapshot)` when the one the writer did not take is still
    /// current.
    pub fn due(&mut self, changes: u64) -> Option<Option<Snapshot>> {
        let on = self.sink.is_some() && !self.frozen && changes != self.written;
        if !on || self.last.is_some_and(|at| at.elapsed() < MIN_GAP) {
            return None;
        }
        match self.pending.take() {
            Some((snapshot, shown)) if shown == changes => Some(Some(snapshot)),
            _ => Some(None),
        }
    }

    /// Hands `snapshot` (showing `changes`) to the writer; keeps it if the writer is busy.
    pub fn offer(&mut self, snapshot: Snapshot, changes: u64) -> bool {
        let Some(sink) = &self.sink else {
            return false;
        };
        match sink.offer(snapshot) {
            Ok(()) => {
                (self.written, self.last) = (changes, Some(Instant::now()));
                true
            }
            Err(snapshot) => {
                self.pending = Some((snapshot, changes));
                false
            }
        }
    }
}

/// What a warm start found.
#[derive(Debug)]
pub struct WarmStart {
    /// The writer thread, when `warm_restart` is on.
    pub writer: Option<SnapshotWriter>,
    /// Provisional brokers loaded (0: none, or no snapshot).
    pub loaded: usize,
}

/// At start: loads the snapshot (when `warm_restart` is on and one usable is there) into the
/// registry, and starts the writer thread the registry hands its snapshots to.
pub async fn warm_start(settings: &Settings, registry: &RegistryHandle) -> WarmStart {
    if !settings.routing.warm_restart {
        return WarmStart { writer: None, loaded: 0 };
    }
    let path = path_for(settings);
    let begin = Instant::now();
    let snapshot = match read(&path, wall_ms(), settings.routing.warm_restart_max_age_ms) {
        Ok(found) => found,
        Err(error) => {
            warn!(%error, "route snapshot ignored: starting with empty tables");
            None
        }
    };
    let writer = match SnapshotWriter::start(path.clone()) {
        Ok(writer) => Some(writer),
        Err(error) => {
            warn!(%error, "cannot start the route snapshot writer: no snapshots this run");
            None
        }
    };
    let sink = writer.as_ref().map(SnapshotWriter::sink);
    let (snapshot, age_ms) = snapshot.map_or((None, 0), |(s, age)| (Some(s), age));
    let loaded = registry.ask(LoadSnapshot { conn: ConnId::SERVER, snapshot, sink }).await.unwrap_or(0);
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
