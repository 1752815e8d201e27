//! Re-reading files that may change while the server runs (the accounts file, TLS certificates):
//! a thread of its own polls them and calls a reload function when they changed, and whenever
//! it is poked (SIGHUP). Either way the files must first have settled: the same size, inode
//! and content hash on every look for `settle`, so a file written in place in several pieces is
//! not loaded half-written (a truncated TOML can still parse). Touching a file (its mtime
//! alone) changes nothing, and a change pending for `max_settle` is loaded as it is then, so a
//! file that keeps changing cannot keep what it revoked in force. Reading and parsing happen on
//! that thread, never on the connections' thread. The thread ends when its [`Poke`] is dropped.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

use crate::persist::read_config_file;
use crate::settings::Settings;

/// Files larger than this are not hashed (they cannot be loaded either).
const MAX_HASHED_BYTES: u64 = 16 * 1024 * 1024;

/// The shortest wait between looks while a change settles.
const MIN_TICK: Duration = Duration::from_millis(10);

/// Why the reload function runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReloadCause {
    /// A watched file changed (modification time, size, inode or content).
    Changed,
    /// A reload was requested (SIGHUP).
    Requested,
}

/// Asks the watcher thread to reload now; dropping it ends the thread.
#[derive(Debug, Clone)]
pub struct Poke(SyncSender<()>);

impl Poke {
    /// Requests a reload; requests arriving while one is pending fold into it.
    pub fn poke(&self) {
        let _ = self.0.try_send(());
    }
}

/// What identifies a file's content (length, inode, hash); `None` when it cannot be read.
type Fingerprint = Vec<Option<(u64, u64, u64)>>;

fn fingerprint(paths: &[PathBuf]) -> Fingerprint {
    paths
        .iter()
        .map(|p| {
            let meta = std::fs::metadata(p).ok()?;
            let mut hasher = DefaultHasher::new();
            read_config_file(p, MAX_HASHED_BYTES).ok()?.hash(&mut hasher);
            Some((meta.len(), inode(&meta), hasher.finish()))
        })
        .collect()
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> u64 {
    0
}

/// How often and how long to watch.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// How often to look for a change; zero: only when poked.
    pub interval: Duration,
    /// How long files must stay unchanged before they are loaded.
    pub settle: Duration,
    /// How long a change may wait for the files to settle: past it they are loaded as they are.
    pub max_settle: Duration,
}

impl Timing {
    /// The accounts and TLS files' timing: `security_reload_interval_ms`,
    /// `security_reload_settle_ms` and `security_reload_max_settle_ms`.
    pub fn of(settings: &Settings) -> Timing {
        Timing {
            interval: Duration::from_millis(settings.acl.security_reload_interval_ms),
            settle: Duration::from_millis(settings.acl.security_reload_settle_ms),
            max_settle: Duration::from_millis(settings.acl.security_reload_max_settle_ms),
        }
    }
}

/// Starts a thread named `name` watching `paths` and calling `reload` as described in the
/// module documentation.
pub fn spawn(
    name: &str,
    paths: Vec<PathBuf>,
    timing: Timing,
    reload: impl FnMut(ReloadCause) + Send + 'static,
) -> io::Result<Poke> {
    let (tx, rx) = sync_channel(1);
    let loaded = fingerprint(&paths);
    let changed_at = Instant::now().checked_sub(timing.settle).unwrap_or_else(Instant::now);
    let watch =
        Watch { paths, timing, seen: loaded.clone(), loaded, changed_at, pending_since: None, requested: false };
    std::thread::Builder::new().name(name.to_owned()).spawn(move || watch.run(&rx, reload))?;
    Ok(Poke(tx))
}

/// The watcher thread's state.
struct Watch {
    paths: Vec<PathBuf>,
    timing: Timing,
    /// The files as last loaded.
    loaded: Fingerprint,
    /// The files as last looked at.
    seen: Fingerprint,
    /// When `seen` last changed.
    changed_at: Instant,
    /// Since when a change or request has waited to load.
    pending_since: Option<Instant>,
    /// A reload was requested and has not happened yet.
    requested: bool,
}

impl Watch {
    fn run(mut self, rx: &Receiver<()>, mut reload: impl FnMut(ReloadCause)) {
        loop {
            let pending = self.requested || self.seen != self.loaded;
            let next = match self.wait(pending) {
                Some(wait) => rx.recv_timeout(wait),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match next {
                Ok(()) => self.requested = true,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            if let Some(cause) = self.look() {
                reload(cause);
            }
        }
    }

    /// How long to wait for a poke before looking again; `None`: until poked.
    fn wait(&self, pending: bool) -> Option<Duration> {
        let Timing { interval, settle, .. } = self.timing;
        match (pending, interval.is_zero()) {
            (true, true) => Some((settle / 4).max(MIN_TICK)),
            (true, false) => Some(interval.min(settle / 4).max(MIN_TICK)),
            (false, true) => None,
            (false, false) => Some(interval),
        }
    }

    /// Looks at the files; says why to reload when a change or a request is due and the files
    /// have settled (unchanged since the last look, and for `settle`), or it has waited
    /// `max_settle` whatever the files do.
    fn look(&mut self) -> Option<ReloadCause> {
        let now = fingerprint(&self.paths);
        let changed = now != self.seen;
        if changed {
            self.seen = now;
            self.changed_at = Instant::now();
        }
        let due = self.requested || self.seen != self.loaded;
        if !due {
            self.pending_since = None;
            return None;
        }
        let waited = self.pending_since.get_or_insert_with(Instant::now).elapsed();
        let settled = !changed && self.changed_at.elapsed() >= self.timing.settle;
        if !settled && waited < self.timing.max_settle {
            return None;
        }
        let cause = if self.requested { ReloadCause::Requested } else { ReloadCause::Changed };
        self.requested = false;
        self.pending_since = None;
        self.loaded = self.seen.clone();
        Some(cause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn a_change_reloads_once_it_has_settled_and_a_poke_reloads_at_once() {
        let dir = std::env::temp_dir().join(format!("namesrv-filewatch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("watched");
        std::fs::write(&file, "one").unwrap();
        let (tx, rx) = channel();
        let timing =
            Timing { interval: Duration::from_millis(20), settle: Duration::ZERO, max_settle: Duration::from_secs(60) };
        let poke = spawn("test-watch", vec![file.clone()], timing, move |cause| {
            let _ = tx.send(cause);
        })
        .unwrap();
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "nothing changed");
        std::fs::write(&file, "two, longer").unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(ReloadCause::Changed));
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "one reload per change");
        poke.poke();
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(ReloadCause::Requested));
        drop(poke);
        assert!(rx.recv_timeout(Duration::from_secs(5)).is_err(), "the thread ends with its poke");
    }

    #[test]
    fn a_file_written_in_pieces_loads_whole_once_it_has_settled() {
        let dir = std::env::temp_dir().join(format!("namesrv-filewatch-settle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("watched");
        std::fs::write(&file, "old").unwrap();
        let (tx, rx) = channel();
        let timing = Timing {
            interval: Duration::from_millis(10),
            settle: Duration::from_millis(400),
            max_settle: Duration::from_secs(60),
        };
        let path = file.clone();
        let poke = spawn("test-settle", vec![file.clone()], timing, move |cause| {
            let _ = tx.send((cause, std::fs::read_to_string(&path).unwrap()));
        })
        .unwrap();
        std::fs::write(&file, "first half").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let done = Instant::now();
        std::fs::write(&file, "first half, second half").unwrap();
        poke.poke();
        let (cause, text) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(done.elapsed() >= timing.settle, "loaded {:?} after the last write", done.elapsed());
        assert_eq!((cause, text.as_str()), (ReloadCause::Requested, "first half, second half"));
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err(), "loaded once");
    }
}
