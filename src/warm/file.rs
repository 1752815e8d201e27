//! The route snapshot file (`routeSnapshot.json` beside the KV config file, in the state
//! directory): where it lives and reading it back at start.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::persist::read_state_file;
use crate::registry::snapshot::{Snapshot, FORMAT};
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
