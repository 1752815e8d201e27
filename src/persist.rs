//! Crash-safe file replacement (temp file, fsync, rename, fsync the directory) and the one way
//! state files are opened: never through a symbolic link, never anything but a regular file,
//! never read past a bound.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// How the disk refused a write: the errors that say a state directory cannot be written now
/// (full, read-only, not ours), as opposed to a path that is wrong. Routes need no disk, so the
/// server serves on through these; they are counted by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskRefusal {
    /// The disk or the quota is full.
    NoSpace,
    /// A read-only file system.
    ReadOnly,
    /// No permission.
    Permission,
}

impl DiskRefusal {
    /// The refusal `error` is, if it is one.
    pub fn of(error: &io::Error) -> Option<DiskRefusal> {
        match error.kind() {
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => Some(DiskRefusal::NoSpace),
            io::ErrorKind::ReadOnlyFilesystem => Some(DiskRefusal::ReadOnly),
            io::ErrorKind::PermissionDenied => Some(DiskRefusal::Permission),
            _ => None,
        }
    }
}

/// A state file that is not what the server writes there.
#[derive(Debug, Error)]
pub enum StateFileError {
    /// A symbolic link: state files are never opened through one, so a planted link cannot
    /// send reads or writes outside the state directory.
    #[error("is a symbolic link; state files are not opened through links")]
    Symlink,
    /// A FIFO, device, socket or directory, which could block or never end.
    #[error("is not a regular file ({kind})")]
    NotRegular { kind: &'static str },
    /// Larger than the bound for this file.
    #[error("too large: {len} bytes, max {max}")]
    TooLarge { len: u64, max: u64 },
}

impl From<StateFileError> for io::Error {
    fn from(error: StateFileError) -> Self {
        let kind = match error {
            StateFileError::TooLarge { .. } => io::ErrorKind::FileTooLarge,
            _ => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, error)
    }
}

/// Opens an existing state file for reading: not through a symbolic link, not blocking on a
/// FIFO, and only when it is a regular file.
pub fn open_state_file(path: &Path) -> io::Result<File> {
    let file =
        OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).map_err(no_link)?;
    check_regular(&file)?;
    Ok(file)
}

/// Opens (creating it) a state file for appending, not through a symbolic link, and only when
/// it is a regular file.
pub fn open_state_file_append(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(no_link)?;
    check_regular(&file)?;
    Ok(file)
}

/// Reads a whole state file (see [`open_state_file`]), refusing one longer than `max` bytes
/// without reading past the bound.
pub fn read_state_file(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_bounded(open_state_file(path)?, max)
}

/// Reads a whole file an operator provides (the accounts file, TLS files): links are followed
/// (secrets are often mounted as links), but only a regular file is read, never past `max`.
pub fn read_config_file(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    check_regular(&file)?;
    read_bounded(file, max)
}

fn read_bounded(file: File, max: u64) -> io::Result<Vec<u8>> {
    let len = file.metadata()?.len();
    if len > max {
        return Err(StateFileError::TooLarge { len, max }.into());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(StateFileError::TooLarge { len: bytes.len() as u64, max }.into());
    }
    Ok(bytes)
}

/// Whether `path` exists as anything, a dangling link included.
pub fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// `O_NOFOLLOW` on a link fails with ELOOP: say what it is.
fn no_link(error: io::Error) -> io::Error {
    if error.raw_os_error() == Some(libc::ELOOP) {
        StateFileError::Symlink.into()
    } else {
        error
    }
}

fn check_regular(file: &File) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = file.metadata()?.file_type();
    let name = match () {
        _ if kind.is_file() => return Ok(()),
        _ if kind.is_dir() => "directory",
        _ if kind.is_fifo() => "fifo",
        _ if kind.is_char_device() => "character device",
        _ if kind.is_block_device() => "block device",
        _ if kind.is_socket() => "socket",
        _ => "special file",
    };
    Err(StateFileError::NotRegular { kind: name }.into())
}

/// Replaces `path` with `content` so that a crash at any moment leaves either the old or the
/// new content. The previous content is kept as `<path>.bak`, as Java does. A link planted as
/// the file, `.bak` or `.tmp` is replaced, never written through; the previous content is kept
/// for `.bak` only when it is a regular file of at most `content.len()` plus 64 MiB.
pub fn write_atomically(path: &Path, content: &[u8]) -> io::Result<()> {
    write_atomically_with(path, |out| out.write_all(content)).map(drop)
}

/// [`write_atomically`] with the new content streamed by `fill`, and the previous one copied to
/// `.bak` in pieces: neither is ever held whole in memory (a large state file would otherwise
/// leave the allocator holding its buffers' worth of memory). Returns the bytes written.
pub fn write_atomically_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<u64> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let tmp = sibling(path, ".tmp");
    let replaced = write_synced(&tmp, fill).and_then(|written| {
        if exists(path) {
            keep_previous(path, &sibling(path, ".bak"), written + 64 * 1024 * 1024)?;
        }
        fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()?;
        Ok(written)
    });
    if replaced.is_err() {
        // A partial temp file would hold disk space a later write needs.
        let _ = fs::remove_file(&tmp);
    }
    replaced
}

/// [`write_atomically`] for a secret (a private key): readable and writable by its owner only
/// from the moment it exists, and no `.bak` kept.
pub fn write_secret_atomically(path: &Path, content: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let tmp = sibling(path, ".tmp");
    let replaced = write_synced_mode(&tmp, 0o600, |out| out.write_all(content)).and_then(|_| {
        fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    });
    if replaced.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    replaced
}

/// Keeps the content at `path` as `bak` when it is a regular file: a hard link (no bytes
/// copied, so a full disk cannot leave a partial backup), or, where links cannot be made, a
/// copy of at most `max` bytes. Either is made as `<bak>.tmp` and renamed over `bak`, so the
/// previous backup stays until the new one is whole. Anything else at `path` (a link, a FIFO, a
/// device, something too large to copy) is kept nowhere.
fn keep_previous(path: &Path, bak: &Path, max: u64) -> io::Result<()> {
    let not_ours = |e: &io::Error| e.get_ref().is_some_and(|inner| inner.is::<StateFileError>());
    let previous = match open_state_file(path) {
        Ok(file) => file,
        Err(e) if not_ours(&e) => return Ok(()),
        Err(e) => return Err(e),
    };
    let staged = sibling(bak, ".tmp");
    let _ = fs::remove_file(&staged);
    let made = match fs::hard_link(path, &staged) {
        Ok(()) => Ok(()),
        Err(_) if previous.metadata()?.len() > max => return Ok(()),
        Err(_) => write_synced(&staged, |out| io::copy(&mut previous.take(max), out).map(drop)).map(drop),
    };
    let kept = made.and_then(|()| fs::rename(&staged, bak));
    if kept.is_err() {
        let _ = fs::remove_file(&staged);
    }
    kept
}

/// Removes the temp files a write that never finished (a crash, a full disk) may have left
/// beside each of `state_files`: `<file>.tmp` and `<file>.bak.tmp`, never anything else.
pub fn sweep_temp_files<'a>(state_files: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for file in state_files {
        for leftover in [sibling(file, ".tmp"), sibling(&sibling(file, ".bak"), ".tmp")] {
            if fs::remove_file(&leftover).is_ok() {
                removed.push(leftover);
            }
        }
    }
    removed
}

/// Writes a new file at `path` with what `fill` writes: whatever was there (a link included) is
/// removed first and the file is created exclusively, so nothing outside the directory is ever
/// written. Returns the bytes written.
fn write_synced(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<u64> {
    write_synced_mode(path, 0o666, fill)
}

/// [`write_synced`] creating the file with permission bits `mode` (less the umask).
fn write_synced_mode(path: &Path, mode: u32, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<u64> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let file = OpenOptions::new().write(true).create_new(true).mode(mode).custom_flags(libc::O_NOFOLLOW).open(path)?;
    let mut out = io::BufWriter::with_capacity(64 * 1024, file);
    fill(&mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    Ok(file.metadata()?.len())
}

/// `path` with `suffix` appended to its file name (`kvConfig.json` -> `kvConfig.json.bak`).
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_read_only_or_foreign_disk_is_a_refusal_and_a_wrong_path_is_not() {
        let of = |errno| DiskRefusal::of(&io::Error::from_raw_os_error(errno));
        assert_eq!((of(libc::ENOSPC), of(libc::EDQUOT)), (Some(DiskRefusal::NoSpace), Some(DiskRefusal::NoSpace)));
        assert_eq!(of(libc::EROFS), Some(DiskRefusal::ReadOnly));
        assert_eq!((of(libc::EACCES), of(libc::EPERM)), (Some(DiskRefusal::Permission), Some(DiskRefusal::Permission)));
        assert_eq!((of(libc::ENOTDIR), of(libc::ENOENT), of(libc::ELOOP)), (None, None, None));
    }

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("namesrv-persist-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn replaces_content_and_keeps_a_backup() {
        let dir = dir("replace");
        let path = dir.join("sub/kv.json");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read(dir.join("sub/kv.json.bak")).unwrap(), b"one");
        assert!(!dir.join("sub/kv.json.tmp").exists());
    }

    #[test]
    fn streamed_content_is_counted_and_the_previous_kept() {
        let dir = dir("stream");
        let path = dir.join("routeSnapshot.json");
        write_atomically(&path, b"old").unwrap();
        let written = write_atomically_with(&path, |out| (0..1000).try_for_each(|i| write!(out, "{i:04}"))).unwrap();
        assert_eq!(written, 4000);
        let content = fs::read(&path).unwrap();
        assert_eq!((content.len(), &content[..8]), (4000, &b"00000001"[..]));
        assert_eq!(fs::read(sibling(&path, ".bak")).unwrap(), b"old");
        let failed = write_atomically_with(&path, |_| Err(io::Error::other("encoding failed")));
        assert!(failed.is_err());
        assert_eq!(fs::read(&path).unwrap().len(), 4000, "a failed write leaves the file as it was");
        assert!(!sibling(&path, ".tmp").exists(), "and no temp file");
        assert!(!sibling(&path, ".bak.tmp").exists());
    }

    #[test]
    fn the_backup_is_the_previous_file_itself_and_leftover_temp_files_are_swept() {
        use std::os::unix::fs::MetadataExt;
        let dir = dir("link");
        let path = dir.join("kvConfig.json");
        write_atomically(&path, b"one").unwrap();
        let before = fs::metadata(&path).unwrap().ino();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(fs::metadata(sibling(&path, ".bak")).unwrap().ino(), before, "a link, not a copy");
        for leftover in [".tmp", ".bak.tmp"] {
            fs::write(sibling(&path, leftover), b"partial").unwrap();
        }
        fs::write(dir.join("unrelated.tmp"), b"x").unwrap();
        assert_eq!(sweep_temp_files([path.as_path()]).len(), 2);
        assert!(!sibling(&path, ".tmp").exists() && !sibling(&path, ".bak.tmp").exists());
        assert!(dir.join("unrelated.tmp").exists(), "only the known names go");
        assert_eq!(fs::read(sibling(&path, ".bak")).unwrap(), b"one");
    }

    #[test]
    fn planted_links_are_replaced_never_written_through() {
        let dir = dir("links");
        let outside = dir.join("outside");
        fs::write(&outside, "keep").unwrap();
        let path = dir.join("kv.json");
        fs::write(&path, "one").unwrap();
        for suffix in [".bak", ".tmp"] {
            std::os::unix::fs::symlink(&outside, sibling(&path, suffix)).unwrap();
        }
        write_atomically(&path, b"two").unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"keep", "nothing written through a link");
        assert_eq!(fs::read(sibling(&path, ".bak")).unwrap(), b"one");
        assert!(!fs::symlink_metadata(sibling(&path, ".bak")).unwrap().file_type().is_symlink());

        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        let err = read_state_file(&path, 100).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        write_atomically(&path, b"three").unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"keep");
        assert_eq!(fs::read(&path).unwrap(), b"three");
    }

    #[test]
    fn devices_and_oversized_files_are_refused_without_reading_them() {
        let err = read_state_file(Path::new("/dev/zero"), 1024).unwrap_err();
        assert!(err.to_string().contains("not a regular file (character device)"), "{err}");
        let dir = dir("big");
        let path = dir.join("big");
        fs::write(&path, vec![b'x'; 101]).unwrap();
        assert_eq!(read_state_file(&path, 101).unwrap().len(), 101);
        let err = read_state_file(&path, 100).unwrap_err();
        assert_eq!(err.to_string(), "too large: 101 bytes, max 100");
    }
}
