//! The open KV journal file: a line is appended whole or not at all. A write or sync that fails
//! (a full disk, an I/O error) cuts the file back to its last acknowledged line, so the next
//! line never lands on a torn one; opening it cuts off a torn line a crash left.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use tracing::warn;

use crate::persist::open_state_file_append;

/// The journal, open for appending.
#[derive(Debug)]
pub(super) struct JournalFile {
    file: File,
    /// Where the last acknowledged line ends.
    good_len: u64,
    /// Test hook: how many more bytes the disk takes before it is full.
    #[cfg(test)]
    pub(super) space: Option<u64>,
}

/// An append that failed; `restored` says whether the file was cut back to what it held.
#[derive(Debug)]
pub(super) struct AppendFailed {
    /// Why the append failed.
    pub error: io::Error,
    /// False when cutting the torn line off failed too: the file must be reopened.
    pub restored: bool,
}

impl JournalFile {
    /// Opens the journal at `path`, creating it and its directory, never through a link; a
    /// torn last line is cut off.
    pub(super) fn open(path: &Path) -> io::Result<JournalFile> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)?;
        }
        let file = open_state_file_append(path)?;
        let len = file.metadata()?.len();
        let good_len = complete_len(&file, len)?;
        if good_len < len {
            warn!(path = %path.display(), bytes = len - good_len, "kv journal ends in a torn line; cut off before appending");
            file.set_len(good_len)?;
            file.sync_data()?;
        }
        Ok(JournalFile {
            file,
            good_len,
            #[cfg(test)]
            space: None,
        })
    }

    /// Appends `line` (ending in a newline) and syncs it; on error the file is cut back to
    /// where the last acknowledged line ends.
    pub(super) fn append(&mut self, line: &[u8]) -> Result<(), AppendFailed> {
        match self.write(line).and_then(|()| self.file.sync_data()) {
            Ok(()) => {
                self.good_len += line.len() as u64;
                Ok(())
            }
            Err(error) => {
                let restored = self.file.set_len(self.good_len).and_then(|()| self.file.sync_data()).is_ok();
                Err(AppendFailed { error, restored })
            }
        }
    }

    #[cfg(not(test))]
    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        self.file.write_all(line)
    }

    /// As the real write, on a disk with `space` bytes left.
    #[cfg(test)]
    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        let Some(space) = self.space else { return self.file.write_all(line) };
        let n = line.len().min(space as usize);
        self.file.write_all(&line[..n])?;
        self.space = Some(space - n as u64);
        if n < line.len() {
            return Err(io::Error::from(io::ErrorKind::StorageFull));
        }
        Ok(())
    }
}

/// Where the last complete line of a file of `len` bytes ends (0 when it has none).
fn complete_len(file: &File, len: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        file.read_exact_at(chunk, start)?;
        if let Some(i) = chunk.iter().rposition(|b| *b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}
