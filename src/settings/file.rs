//! Reading a config file: only a regular file (a link to one is followed), never blocking on a
//! FIFO and never past [`MAX_CONFIG_FILE_BYTES`], so a device or FIFO planted as a config or
//! runtime-updates file stops start-up with an error instead of hanging it or reading forever.

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use thiserror::Error;

/// The largest config file read.
pub const MAX_CONFIG_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// A config file that is not one.
#[derive(Debug, Error)]
pub enum ConfigFileError {
    /// A FIFO, device, socket or directory.
    #[error("is not a regular file")]
    NotRegular,
    /// Longer than [`MAX_CONFIG_FILE_BYTES`].
    #[error("too large: more than {MAX_CONFIG_FILE_BYTES} bytes")]
    TooLarge,
}

/// The bytes of the config file at `path` (see the module documentation).
pub fn read_config(path: &Path) -> io::Result<Vec<u8>> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, ConfigFileError::NotRegular));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_FILE_BYTES {
        return Err(io::Error::new(io::ErrorKind::FileTooLarge, ConfigFileError::TooLarge));
    }
    Ok(bytes)
}

/// [`read_config`] as UTF-8 text.
pub fn read_config_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_config(path)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}
