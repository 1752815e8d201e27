//! The `raft-io` thread: every write of the controller's state files happens here, off the
//! controller's event loop (openraft's tasks share that thread, and an fsync there would stall
//! elections and liveness alike). The Raft log is a file of records, each `length (4 bytes,
//! big-endian) | CRC-32 (4 bytes) | JSON`, appended and synced; a record torn by a crash is cut
//! off when the file is opened. Whole files (vote, snapshot, a compacted log) are replaced
//! with the project's crash-safe writes.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;

use openraft::storage::LogFlushed;
use tokio::sync::oneshot;
use tracing::{error, warn};

use super::RaftTypes;
use crate::persist::{open_state_file_append, write_atomically};

/// Most bytes one log record may hold (a frame's worth of entries).
pub const MAX_RECORD_BYTES: usize = 64 * 1024 * 1024;

/// One job for the I/O thread.
enum Job {
    /// Append a record, sync, then tell openraft.
    Append { record: Vec<u8>, done: LogFlushed<RaftTypes> },
    /// Append a record, sync, then answer.
    Record { record: Vec<u8>, done: oneshot::Sender<io::Result<()>> },
    /// Replace the whole log with these records.
    Rewrite { records: Vec<u8>, done: oneshot::Sender<io::Result<()>> },
    /// Replace a whole file (vote, snapshot).
    Replace { path: PathBuf, content: Vec<u8>, done: oneshot::Sender<io::Result<()>> },
}

/// Where jobs go; the thread ends when every handle is dropped.
#[derive(Debug, Clone)]
pub struct IoHandle {
    jobs: mpsc::Sender<Job>,
}

/// The thread was gone (shutdown).
fn gone() -> io::Error {
    io::Error::other("raft-io thread gone")
}

impl IoHandle {
    /// Starts the thread that appends to `log` (open, its torn tail already cut).
    pub fn start(log: LogFile) -> io::Result<IoHandle> {
        let (jobs, queue) = mpsc::channel::<Job>();
        thread::Builder::new().name("raft-io".into()).spawn(move || run(log, queue))?;
        Ok(IoHandle { jobs })
    }

    /// Appends `record`; `done` is told once it is synced (or failed).
    pub fn append(&self, record: Vec<u8>, done: LogFlushed<RaftTypes>) {
        if let Err(mpsc::SendError(Job::Append { done, .. })) = self.jobs.send(Job::Append { record, done }) {
            done.log_io_completed(Err(gone()));
        }
    }

    /// Appends `record` and waits until it is synced.
    pub async fn record(&self, record: Vec<u8>) -> io::Result<()> {
        self.ask(|done| Job::Record { record, done }).await
    }

    /// Replaces the whole log with `records` and waits.
    pub async fn rewrite(&self, records: Vec<u8>) -> io::Result<()> {
        self.ask(|done| Job::Rewrite { records, done }).await
    }

    /// Replaces the file at `path` with `content` and waits.
    pub async fn replace(&self, path: PathBuf, content: Vec<u8>) -> io::Result<()> {
        self.ask(|done| Job::Replace { path, content, done }).await
    }

    async fn ask(&self, job: impl FnOnce(oneshot::Sender<io::Result<()>>) -> Job) -> io::Result<()> {
        let (done, answer) = oneshot::channel();
        self.jobs.send(job(done)).map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

fn run(mut log: LogFile, queue: mpsc::Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        match job {
            Job::Append { record, done } => done.log_io_completed(log.append(&record)),
            Job::Record { record, done } => {
                let _ = done.send(log.append(&record));
            }
            Job::Rewrite { records, done } => {
                let _ = done.send(log.rewrite(&records));
            }
            Job::Replace { path, content, done } => {
                let _ = done.send(write_atomically(&path, &content));
            }
        }
    }
}

/// Frames `json` as one record.
pub fn frame(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len() + 8);
    out.extend_from_slice(&(json.len() as u32).to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(json).to_be_bytes());
    out.extend_from_slice(json);
    out
}

/// The log file, open for appending.
#[derive(Debug)]
pub struct LogFile {
    path: PathBuf,
    file: File,
    /// Where the last synced record ends.
    good_len: u64,
}

impl LogFile {
    /// Opens (creating) the log at `path` and reads its records; a torn or corrupt tail is cut
    /// off (with a warning), since only the last record can be torn by a crash.
    pub fn open(path: &Path) -> io::Result<(LogFile, Vec<Vec<u8>>)> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)?;
        }
        let file = open_state_file_append(path)?;
        let len = file.metadata()?.len();
        let (records, good_len) = read_records(&file, len)?;
        if good_len < len {
            warn!(path = %path.display(), bytes = len - good_len, "raft log ends in a torn record; cut off");
            file.set_len(good_len)?;
            file.sync_data()?;
        }
        Ok((LogFile { path: path.to_owned(), file, good_len }, records))
    }

    fn append(&mut self, record: &[u8]) -> io::Result<()> {
        match self.file.write_all(record).and_then(|()| self.file.sync_data()) {
            Ok(()) => {
                self.good_len += record.len() as u64;
                Ok(())
            }
            Err(e) => {
                if self.file.set_len(self.good_len).and_then(|()| self.file.sync_data()).is_err() {
                    error!(path = %self.path.display(), "raft log cannot be cut back after a failed append");
                }
                Err(e)
            }
        }
    }

    fn rewrite(&mut self, records: &[u8]) -> io::Result<()> {
        write_atomically(&self.path, records)?;
        self.file = open_state_file_append(&self.path)?;
        self.good_len = self.file.metadata()?.len();
        Ok(())
    }
}

/// The records of a file of `len` bytes, and where the last whole one ends.
fn read_records(file: &File, len: u64) -> io::Result<(Vec<Vec<u8>>, u64)> {
    let mut records = Vec::new();
    let mut at = 0u64;
    let mut head = [0u8; 8];
    while at + 8 <= len {
        file.read_exact_at(&mut head, at)?;
        let size = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as u64;
        let crc = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        if size as usize > MAX_RECORD_BYTES || at + 8 + size > len {
            break;
        }
        let mut body = vec![0u8; size as usize];
        file.read_exact_at(&mut body, at + 8)?;
        if crc32fast::hash(&body) != crc {
            break;
        }
        records.push(body);
        at += 8 + size;
    }
    Ok((records, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_or_corrupt_tail_is_cut_and_the_rest_read() {
        let dir = crate::controller::raft::log::tests::dir("torn");
        let path = dir.join("raft-log");
        let mut bytes = frame(b"one");
        bytes.extend(frame(b"two"));
        let whole = bytes.len() as u64;
        bytes.extend(&frame(b"three")[..6]);
        fs::write(&path, &bytes).unwrap();
        let (log, records) = LogFile::open(&path).unwrap();
        assert_eq!(records, [b"one".to_vec(), b"two".to_vec()]);
        assert_eq!((log.good_len, fs::metadata(&path).unwrap().len()), (whole, whole));
        let mut bad = frame(b"one");
        bad.extend(frame(b"two"));
        let last = bad.len() - 1;
        bad[last] ^= 1;
        fs::write(&path, &bad).unwrap();
        assert_eq!(LogFile::open(&path).unwrap().1, [b"one".to_vec()], "a CRC mismatch ends the log");
    }
}
