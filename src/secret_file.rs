//! Files that hold secrets (the accounts file, a TLS private key): the server warns when others
//! than their owner may read them, at start, at every reload and in `--check-config`.

use std::path::Path;

use tracing::warn;

/// The permission bits of `path` when its group or others may read or write it; `None` when
/// only its owner may, or it cannot be examined (loading it reports that).
pub fn open_to_others(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

/// Logs a WARN naming `what` (e.g. "accounts file") when `path` is open to others.
pub fn warn_if_open_to_others(path: &Path, what: &'static str) {
    if let Some(mode) = open_to_others(path) {
        warn!(file = %path.display(), mode = %format_args!("{mode:o}"), "{what} is readable by group or others: chmod 600 it");
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn only_an_owner_only_mode_passes() {
        let dir = std::env::temp_dir().join(format!("namesrv-secret-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("key.pem");
        std::fs::write(&file, "x").unwrap();
        for (mode, open) in
            [(0o600, None), (0o400, None), (0o640, Some(0o640)), (0o644, Some(0o644)), (0o602, Some(0o602))]
        {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(open_to_others(&file), open, "mode {mode:o}");
        }
        assert_eq!(open_to_others(&dir.join("missing")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
