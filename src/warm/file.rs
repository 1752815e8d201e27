//! The route snapshot file (`routeSnapshot.json` beside the KV config file, in the state
//! directory): where it lives and reading it back at start. What was written to disk is input
//! like the wire: its size is checked against what the limits allow before anything is read,
//! its header (format and time, written first) before the rest, and a time in the future is
//! refused; its members are then checked as registrations are (`registry::snapshot`).

use std::io::Read;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::persist::open_state_file;
use crate::registry::snapshot::{Snapshot, FORMAT};
use crate::settings::Settings;

/// The snapshot's file name, in the directory of `kv_config_path`.
pub const FILE_NAME: &str = "routeSnapshot.json";

/// What a snapshot may take per queue entry the limits allow (a 255-byte topic name, its queue
/// data and JSON, with room to spare), and for everything else (members, mappings).
const BYTES_PER_QUEUE_ENTRY: u64 = 384;
const BYTES_BESIDES: u64 = 64 << 20;

/// How far ahead of this machine's clock a snapshot's time may be (clocks of one machine
/// across a restart agree better than this).
const FUTURE_TOLERANCE_MS: u64 = 60_000;

/// Bytes of the file the header is looked for in.
const HEADER_BYTES: usize = 128;

/// Why a snapshot was not loaded.
#[derive(Debug, Error)]
pub enum SnapshotError {
    /// The file exists but cannot be read: not a regular file, a symbolic link, or an I/O error.
    #[error("cannot read {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    /// Larger than the tables the limits allow could have written.
    #[error("{path}: {len} bytes, too large for the limits (at most {max}: max_queue_entries_total)")]
    TooLarge { path: PathBuf, len: u64, max: u64 },
    /// No snapshot header (`{"format":N,"taken_at_ms":N,`) at its start.
    #[error("{path}: not a route snapshot: no header")]
    NoHeader { path: PathBuf },
    /// The file is not a snapshot this build reads.
    #[error("{path}: not a route snapshot: {error}")]
    Parse { path: PathBuf, error: serde_json::Error },
    /// Another format.
    #[error("{path}: format {found}, this build reads {FORMAT}")]
    Format { path: PathBuf, found: u32 },
    /// Older than `warm_restart_max_age_ms`.
    #[error("{path}: taken {age_ms} ms ago, more than warm_restart_max_age_ms = {max_age_ms}")]
    TooOld { path: PathBuf, age_ms: u64, max_age_ms: u64 },
    /// Taken at a time in the future.
    #[error("{path}: taken in the future ({ahead_ms} ms ahead of this clock)")]
    FromTheFuture { path: PathBuf, ahead_ms: u64 },
}

/// Where the snapshot of a server with these settings lives.
pub fn path_for(settings: &Settings) -> PathBuf {
    let kv = Path::new(&settings.state.kv_config_path);
    kv.parent().unwrap_or(Path::new(".")).join(FILE_NAME)
}

/// The largest snapshot the tables `settings` allow could have written.
pub fn max_bytes_for(settings: &Settings) -> u64 {
    (settings.limits.max_queue_entries_total as u64).saturating_mul(BYTES_PER_QUEUE_ENTRY).saturating_add(BYTES_BESIDES)
}

/// Reads the snapshot at `path` and its age at `now_ms`; `Ok(None)` when there is none.
pub fn read(
    path: &Path,
    now_ms: u64,
    max_age_ms: u64,
    max_bytes: u64,
) -> Result<Option<(Snapshot, u64)>, SnapshotError> {
    let read_error = |error| SnapshotError::Read { path: path.into(), error };
    // Never through a symbolic link, never a FIFO or device.
    let file = match open_state_file(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(read_error(error)),
    };
    let len = file.metadata().map_err(read_error)?.len();
    if len > max_bytes {
        return Err(SnapshotError::TooLarge { path: path.into(), len, max: max_bytes });
    }
    let mut text = Vec::with_capacity(HEADER_BYTES);
    let mut file = file.take(max_bytes);
    (&mut file).take(HEADER_BYTES as u64).read_to_end(&mut text).map_err(read_error)?;
    let (format, taken_at_ms) = header(&text).ok_or_else(|| SnapshotError::NoHeader { path: path.into() })?;
    if format != FORMAT {
        return Err(SnapshotError::Format { path: path.into(), found: format });
    }
    if taken_at_ms > now_ms.saturating_add(FUTURE_TOLERANCE_MS) {
        return Err(SnapshotError::FromTheFuture { path: path.into(), ahead_ms: taken_at_ms - now_ms });
    }
    let age_ms = now_ms.saturating_sub(taken_at_ms);
    if age_ms > max_age_ms {
        return Err(SnapshotError::TooOld { path: path.into(), age_ms, max_age_ms });
    }
    text.reserve(len as usize);
    file.read_to_end(&mut text).map_err(read_error)?;
    let snapshot: Snapshot =
        serde_json::from_slice(&text).map_err(|error| SnapshotError::Parse { path: path.into(), error })?;
    if (snapshot.format, snapshot.taken_at_ms) != (format, taken_at_ms) {
        return Err(SnapshotError::NoHeader { path: path.into() });
    }
    Ok(Some((snapshot, age_ms)))
}

/// The format and time at the start of a snapshot as this server writes it:
/// `{"format":N,"taken_at_ms":N,`.
fn header(text: &[u8]) -> Option<(u32, u64)> {
    let rest = text.strip_prefix(b"{\"format\":")?;
    let (format, rest) = number(rest)?;
    let rest = rest.strip_prefix(b",\"taken_at_ms\":")?;
    let (taken_at_ms, rest) = number(rest)?;
    if !rest.starts_with(b",") {
        return None;
    }
    Some((u32::try_from(format).ok()?, taken_at_ms))
}

/// The decimal number at the start of `text`, and what follows it.
fn number(text: &[u8]) -> Option<(u64, &[u8])> {
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    let value = std::str::from_utf8(text.get(..digits)?).ok()?.parse().ok()?;
    Some((value, &text[digits..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_the_format_and_time_written_first() {
        assert_eq!(header(br#"{"format":1,"taken_at_ms":1700000000000,"groups":[]}"#), Some((1, 1_700_000_000_000)));
        assert_eq!(header(br#"{"format":1,"taken_at_ms":17"#), None, "cut short");
        assert_eq!(header(br#"{"taken_at_ms":1,"format":1,"groups":[]}"#), None, "another order");
        assert_eq!(header(br#"{"format":99999999999,"taken_at_ms":1,"#), None, "a format past u32");
        assert_eq!(header(br#"{"format":1,"taken_at_ms":99999999999999999999999,"#), None, "a time past u64");
        assert_eq!(header(b""), None);
    }
}
