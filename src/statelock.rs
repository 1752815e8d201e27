//! One server per state directory: an exclusive lock (`flock`) on `namesrv.lock` in the
//! directory of `kv_config_path` (where the KV file, its journal and the other state files
//! live), held while the server runs, with the holder's pid in it, so that a second server on
//! the same directory stops at start with an error naming the first instead of interleaving
//! its writes with the first one's.
//!
//! The lock is taken on the directory itself (its canonical path, opened as a directory), which
//! cannot be unlinked while it holds state and cannot be swapped for a link once opened: removing
//! or replacing `namesrv.lock` lets no second server in. The file is locked too (so servers that
//! lock only the file stay out) and only ever opened without following a link: a link planted
//! there is removed, never written through.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use thiserror::Error;
use tracing::{info, warn};

use crate::persist::DiskRefusal;
use crate::settings::Settings;

/// The lock file's name inside the state directory.
pub const LOCK_FILE: &str = "namesrv.lock";

/// At most this many bytes of a lock file are read back for the holder's pid.
const MAX_PID_BYTES: u64 = 32;

/// The state directory cannot be locked.
#[derive(Debug, Error)]
pub enum StateLockError {
    /// Another process holds it.
    #[error(
        "state directory {} is in use by another namesrv (pid {holder}; lock file {}): stop that one, or give this one its own kv_config_path and config_store_path",
        dir.display(),
        file.display()
    )]
    Held {
        /// The state directory.
        dir: PathBuf,
        /// Its lock file.
        file: PathBuf,
        /// The holder's pid as the lock file says, or `unknown`.
        holder: String,
    },
    /// Another process holds the config store's lock.
    #[error(
        "config_store_path {} is in use by another namesrv (pid {holder}; lock file {}): stop that one, or give this one its own kv_config_path and config_store_path",
        store.display(),
        file.display()
    )]
    StoreHeld {
        /// `config_store_path`.
        store: PathBuf,
        /// Its lock file, `<config_store_path>.lock`.
        file: PathBuf,
        /// The holder's pid as the lock file says, or `unknown`.
        holder: String,
    },
    /// The config store's lock file cannot be created or opened.
    #[error("cannot lock config_store_path {}: lock file {}: {error}", store.display(), file.display())]
    StoreIo {
        /// `config_store_path`.
        store: PathBuf,
        /// Its lock file.
        file: PathBuf,
        /// Why not.
        error: io::Error,
    },
    /// The directory or its lock file cannot be created, opened or written.
    #[error("cannot lock state directory {}: {error}", dir.display())]
    Io {
        /// The state directory.
        dir: PathBuf,
        /// Why not.
        error: io::Error,
    },
}

/// The held lock; released when dropped (or when the process ends, however it ends).
#[derive(Debug)]
pub struct StateLock {
    /// The state directory, open and locked for as long as the lock is held.
    _dir: File,
    /// The lock file, open and locked too; `None` when it cannot be opened (a read-only or
    /// full state directory: the directory's own lock still keeps a second server out).
    _file: Option<File>,
    path: PathBuf,
    /// Why the lock file, or this process's pid in it, could not be written.
    unwritten: Option<io::Error>,
}

impl StateLock {
    /// Locks the directory `state_file` lives in (created if missing, as the first write
    /// would) and writes this process's pid into the lock file.
    pub fn acquire(state_file: &Path) -> Result<StateLock, StateLockError> {
        let dir = state_file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
        let io = |error| StateLockError::Io { dir: dir.clone(), error };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let path = dir.join(LOCK_FILE);
        let held = |path: &Path| {
            let holder = open_lock_file(path, false).ok().and_then(|mut f| read_pid(&mut f));
            StateLockError::Held {
                dir: dir.clone(),
                file: path.to_owned(),
                holder: holder.unwrap_or_else(|| "unknown".to_owned()),
            }
        };
        let dir_file = std::fs::canonicalize(&dir)
            .and_then(|canonical| OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(canonical))
            .map_err(io)?;
        if !try_lock(&dir_file).map_err(io)? {
            return Err(held(&path));
        }
        // A lock file that cannot be written (a read-only or full directory) is still locked
        // when it can be opened at all, so servers that lock only the file stay out.
        let (file, unwritten) = match open_lock_file(&path, true) {
            Ok(mut file) => {
                if !try_lock(&file).map_err(io)? {
                    return Err(held(&path));
                }
                let written = file
                    .set_len(0)
                    .and_then(|()| writeln!(file, "{}", std::process::id()))
                    .and_then(|()| file.sync_data());
                (Some(file), written.err())
            }
            Err(error) if is_unwritable(&error) => match open_lock_file(&path, false) {
                Ok(file) if !try_lock(&file).map_err(io)? => return Err(held(&path)),
                readable => (readable.ok(), Some(error)),
            },
            Err(error) => return Err(io(error)),
        };
        Ok(StateLock { _dir: dir_file, _file: file, path, unwritten })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the lock file or the pid in it could not be written, when it could not: the lock
    /// holds all the same (on the directory), only the pid a refused second server names is
    /// missing.
    pub fn unwritten(&self) -> Option<&io::Error> {
        self.unwritten.as_ref()
    }

    /// The pid of the namesrv holding the lock of the directory `state_file` lives in (`unknown`
    /// when its lock file names none), or `None` when no process holds it (or the directory
    /// does not exist). A probe: the lock is taken and released at once, no pid is written.
    pub fn holder(state_file: &Path) -> Option<String> {
        let dir = state_file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let dir_file = std::fs::canonicalize(dir)
            .and_then(|canonical| OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(canonical))
            .ok()?;
        if try_lock(&dir_file).unwrap_or(true) {
            return None;
        }
        let pid = open_lock_file(&dir.join(LOCK_FILE), false).ok().and_then(|mut f| read_pid(&mut f));
        Some(pid.unwrap_or_else(|| "unknown".to_owned()))
    }
}

/// The held lock on the config store (`config_store_path`), which may live outside the state
/// directory (a Java `-c` file is its own store): `<config_store_path>.lock`, a sibling, locked
/// per file so that two Java stores in one directory do not conflict while two servers on one
/// store (whatever their `kv_config_path`) do. Released when dropped.
#[derive(Debug)]
pub struct StoreLock {
    _file: File,
    path: PathBuf,
}

impl StoreLock {
    /// Locks `store` through its sibling lock file (created if missing) and writes this
    /// process's pid into it.
    pub fn acquire(store: &Path) -> Result<StoreLock, StateLockError> {
        let mut name = store.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
        let io = |error| StateLockError::StoreIo { store: store.to_owned(), file: path.clone(), error };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let mut file = open_lock_file(&path, true).map_err(io)?;
        if !try_lock(&file).map_err(io)? {
            let holder = read_pid(&mut file).unwrap_or_else(|| "unknown".to_owned());
            return Err(StateLockError::StoreHeld { store: store.to_owned(), file: path, holder });
        }
        file.set_len(0)
            .and_then(|()| writeln!(file, "{}", std::process::id()))
            .and_then(|()| file.sync_data())
            .map_err(io)?;
        Ok(StoreLock { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Locks the state directory and the config store, held until the process ends: a second
/// server on either stops here (the error), as does a path that cannot hold them. Routes
/// need no disk, so a directory the disk refuses to write (read-only, full, no permission) only
/// warns: the server starts, and KV and config writes fail with their error until it is
/// writable.
pub fn take_locks(settings: &Settings) -> Result<(Option<StateLock>, Option<StoreLock>), StateLockError> {
    let lock = match StateLock::acquire(std::path::Path::new(&settings.state.kv_config_path)) {
        Ok(lock) => {
            match lock.unwritten() {
                None => info!(lock_file = %lock.path().display(), "state directory locked"),
                Some(error) => warn!(lock_file = %lock.path().display(), %error,
                    "state directory locked, but its lock file cannot be written: a second namesrv refused here cannot name this one's pid"),
            }
            Some(lock)
        }
        Err(e) if !e.is_unwritable() => return Err(e),
        Err(e) => {
            warn!(error = %e, "state directory not locked: starting without the lock (a second namesrv on it would not be stopped); KV and config changes fail until it is writable");
            None
        }
    };
    // The config store may live outside the state directory (a Java -c file is its own store).
    let store_lock = match StoreLock::acquire(std::path::Path::new(&settings.state.config_store_path)) {
        Ok(lock) => {
            info!(lock_file = %lock.path().display(), "config store locked");
            Some(lock)
        }
        Err(e @ StateLockError::StoreHeld { .. }) => return Err(e),
        // As before the state lock: updates to a store that cannot be locked fail and say so.
        Err(e) => {
            warn!(error = %e, "config store not locked: a second namesrv on it would not be stopped");
            None
        }
    };
    Ok((lock, store_lock))
}

/// Whether `error` says the disk refuses writes (a read-only file system, a full disk or
/// quota, no permission) rather than that the path is wrong: routes need no disk, so such a
/// state directory does not stop start-up.
pub fn is_unwritable(error: &io::Error) -> bool {
    DiskRefusal::of(error).is_some()
}

impl StateLockError {
    /// Whether the lock could not be taken only because the disk refuses writes
    /// ([`is_unwritable`]): start-up goes on without it.
    pub fn is_unwritable(&self) -> bool {
        match self {
            StateLockError::Io { error, .. } | StateLockError::StoreIo { error, .. } => is_unwritable(error),
            StateLockError::Held { .. } | StateLockError::StoreHeld { .. } => false,
        }
    }
}

/// Takes an exclusive `flock` on `file` without waiting: false when another holds it.
fn try_lock(file: &File) -> io::Result<bool> {
    match fs4::FileExt::try_lock(file) {
        Ok(()) => Ok(true),
        Err(fs4::TryLockError::WouldBlock) => Ok(false),
        Err(fs4::TryLockError::Error(error)) => Err(error),
    }
}

/// Opens the lock file without following a link; with `create`, one that is missing is created
/// and a link (or anything not a regular file) found there is removed first. Not truncated: the
/// holder's pid is read back when the lock is refused.
fn open_lock_file(path: &Path, create: bool) -> io::Result<File> {
    let open = || {
        OpenOptions::new()
            .read(true)
            .write(create)
            .create(create)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
    };
    let regular = |f: &File| f.metadata().map(|m| m.is_file()).unwrap_or(false);
    match open() {
        Ok(file) if regular(&file) || !create => Ok(file),
        Err(e) if !create || e.raw_os_error() != Some(libc::ELOOP) => Err(e),
        _ => {
            std::fs::remove_file(path)?;
            open()
        }
    }
}

/// The pid a lock file holds: its first line, when it is a number.
fn read_pid(file: &mut File) -> Option<String> {
    let mut text = String::new();
    file.take(MAX_PID_BYTES).read_to_string(&mut text).ok()?;
    let pid = text.lines().next()?.trim();
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then(|| pid.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_directory_is_refused_naming_the_holder_and_free_again_after() {
        let dir = std::env::temp_dir().join(format!("namesrv-statelock-{}", std::process::id()));
        let state = dir.join("kvConfig.json");
        let first = StateLock::acquire(&state).unwrap();
        assert_eq!(std::fs::read_to_string(first.path()).unwrap(), format!("{}\n", std::process::id()));
        match StateLock::acquire(&state) {
            Err(StateLockError::Held { holder, .. }) => assert_eq!(holder, std::process::id().to_string()),
            other => panic!("expected Held, got {other:?}"),
        }
        assert_eq!(StateLock::holder(&state), Some(std::process::id().to_string()), "the probe names the holder");
        drop(first);
        assert_eq!(StateLock::holder(&state), None, "and nobody once it is gone");
        assert!(StateLock::acquire(&state).is_ok(), "free once the holder is gone, the probe holding nothing");
    }

    #[test]
    fn a_second_lock_on_one_config_store_is_refused_and_two_stores_in_one_directory_are_not() {
        let dir = std::env::temp_dir().join(format!("namesrv-storelock-{}", std::process::id()));
        let first = StoreLock::acquire(&dir.join("ns1.conf")).unwrap();
        assert_eq!(first.path(), dir.join("ns1.conf.lock"));
        assert!(matches!(StoreLock::acquire(&dir.join("ns1.conf")), Err(StateLockError::StoreHeld { .. })));
        assert!(StoreLock::acquire(&dir.join("ns2.conf")).is_ok(), "another store beside it is another lock");
    }

    #[test]
    fn removing_or_replacing_the_lock_file_lets_no_second_holder_in() {
        let dir = std::env::temp_dir().join(format!("namesrv-statelock-unlink-{}", std::process::id()));
        let state = dir.join("kvConfig.json");
        let first = StateLock::acquire(&state).unwrap();
        std::fs::remove_file(first.path()).unwrap();
        assert!(matches!(StateLock::acquire(&state), Err(StateLockError::Held { .. })));
        drop(first);
        let outside = dir.with_extension("outside");
        std::fs::write(&outside, "keep").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join(LOCK_FILE)).unwrap();
        let lock = StateLock::acquire(&state).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep", "the link was not written through");
        assert!(std::fs::symlink_metadata(lock.path()).unwrap().is_file());
    }
}
