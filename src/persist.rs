//! Crash-safe file replacement: temp file, fsync, rename, fsync the directory.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Replaces `path` with `content` so that a crash at any moment leaves either the old or the
/// new content. The previous content is kept as `<path>.bak`, as Java does.
pub fn write_atomically(path: &Path, content: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    if path.exists() {
        write_synced(&sibling(path, ".bak"), &fs::read(path)?)?;
    }
    let tmp = sibling(path, ".tmp");
    write_synced(&tmp, content)?;
    fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()
}

fn write_synced(path: &Path, content: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create(true).truncate(true).open(path)?;
    file.write_all(content)?;
    file.sync_all()
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
    fn replaces_content_and_keeps_a_backup() {
        let dir = std::env::temp_dir().join(format!("namesrv-persist-{}", std::process::id()));
        let path = dir.join("sub/kv.json");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read(dir.join("sub/kv.json.bak")).unwrap(), b"one");
        assert!(!dir.join("sub/kv.json.tmp").exists());
    }
}
