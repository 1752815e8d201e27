//! Re-reading files that may change while the server runs (the accounts file, TLS certificates):
//! a thread of its own polls their metadata and calls a reload function when they changed and
//! have stayed unchanged for one more poll (so a file caught half-written is not loaded), and
//! whenever it is poked (SIGHUP). Reading and parsing happen on that thread, never on the
//! connections' thread. The thread ends when its [`Poke`] is dropped.

use std::io;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, SystemTime};

/// Why the reload function runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// A watched file changed (modification time, size or inode).
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

/// What identifies a file's content without reading it; `None` when it cannot be read.
type Fingerprint = Vec<Option<(SystemTime, u64, u64)>>;

fn fingerprint(paths: &[PathBuf]) -> Fingerprint {
    paths
        .iter()
        .map(|p| {
            let meta = std::fs::metadata(p).ok()?;
            Some((meta.modified().ok()?, meta.len(), inode(&meta)))
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

/// Starts a thread named `name` watching `paths` every `interval` (never, when zero: then only
/// pokes reload) and calling `reload` as described in the module documentation.
pub fn spawn(
    name: &str,
    paths: Vec<PathBuf>,
    interval: Duration,
    reload: impl FnMut(Cause) + Send + 'static,
) -> io::Result<Poke> {
    let (tx, rx) = sync_channel(1);
    let loaded = fingerprint(&paths);
    std::thread::Builder::new().name(name.to_owned()).spawn(move || run(&rx, &paths, interval, loaded, reload))?;
    Ok(Poke(tx))
}

fn run(
    rx: &Receiver<()>,
    paths: &[PathBuf],
    interval: Duration,
    mut loaded: Fingerprint,
    mut reload: impl FnMut(Cause),
) {
    let mut seen = loaded.clone();
    loop {
        let next = if interval.is_zero() {
            rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            rx.recv_timeout(interval)
        };
        match next {
            Ok(()) => {
                loaded = fingerprint(paths);
                seen = loaded.clone();
                reload(Cause::Requested);
            }
            Err(RecvTimeoutError::Timeout) => {
                let now = fingerprint(paths);
                if now != loaded && now == seen {
                    loaded = now.clone();
                    reload(Cause::Changed);
                }
                seen = now;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
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
        let poke = spawn("test-watch", vec![file.clone()], Duration::from_millis(20), move |cause| {
            let _ = tx.send(cause);
        })
        .unwrap();
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "nothing changed");
        std::fs::write(&file, "two, longer").unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(Cause::Changed));
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "one reload per change");
        poke.poke();
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(Cause::Requested));
        drop(poke);
        assert!(rx.recv_timeout(Duration::from_secs(5)).is_err(), "the thread ends with its poke");
    }
}
