//! One remoting connection to a NameServer: single calls and pipelined batches (many requests in
//! flight, answers matched by `opaque`), every request signed when credentials are given.

use std::io;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use namesrv::protocol::acl_signature::{sign_command, SessionCredentials};
use namesrv::protocol::{CodecError, RemotingCodec, RemotingCommand};
use thiserror::Error;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::timeout;
use tokio_util::codec::{FramedRead, FramedWrite};

/// Largest answer accepted: a cluster-info or route body of a very large fleet fits many times.
const MAX_FRAME_BYTES: usize = 256 * 1024 * 1024;

/// Why a call to one NameServer failed; the caller adds the NameServer's address.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The TCP connection could not be opened.
    #[error("cannot connect: {0}")]
    Connect(io::Error),
    /// Nothing arrived within the timeout while answers were due.
    #[error("no answer within {0} ms")]
    Timeout(u128),
    /// The NameServer closed the connection with answers still due.
    #[error("connection closed by the NameServer")]
    Closed,
    /// A frame could not be written or read.
    #[error("{0}")]
    Codec(#[from] CodecError),
    /// The semaphore pacing the pipeline was closed (cannot happen while a batch runs).
    #[error("request window closed")]
    Window,
}

/// One open connection with its timeout and credentials.
pub struct Conn {
    reader: FramedRead<OwnedReadHalf, RemotingCodec>,
    writer: FramedWrite<OwnedWriteHalf, RemotingCodec>,
    next_opaque: i32,
    timeout: Duration,
    credentials: Option<SessionCredentials>,
}

impl Conn {
    /// Connects to `addr` (`host:port`) within `wait`; `wait` also bounds every later answer.
    pub async fn connect(
        addr: &str,
        wait: Duration,
        credentials: Option<SessionCredentials>,
    ) -> Result<Conn, ClientError> {
        let stream = match timeout(wait, TcpStream::connect(addr)).await {
            Ok(connected) => connected.map_err(ClientError::Connect)?,
            Err(_) => return Err(ClientError::Timeout(wait.as_millis())),
        };
        stream.set_nodelay(true).map_err(ClientError::Connect)?;
        let (read, write) = stream.into_split();
        Ok(Conn {
            reader: FramedRead::new(read, RemotingCodec::new(MAX_FRAME_BYTES)),
            writer: FramedWrite::new(write, RemotingCodec::new(MAX_FRAME_BYTES)),
            next_opaque: 1,
            timeout: wait,
            credentials,
        })
    }

    /// Sends one request and waits for its answer.
    pub async fn call(&mut self, cmd: RemotingCommand) -> Result<RemotingCommand, ClientError> {
        let mut answers = self.pipeline(vec![cmd], 1).await?;
        answers.pop().ok_or(ClientError::Closed)
    }

    /// Sends `cmds` with at most `window` unanswered at a time, reading answers while writing,
    /// and returns the answers in the order of `cmds`.
    pub async fn pipeline(
        &mut self,
        cmds: Vec<RemotingCommand>,
        window: usize,
    ) -> Result<Vec<RemotingCommand>, ClientError> {
        let count = cmds.len();
        let base = self.next_opaque;
        self.next_opaque = self.next_opaque.wrapping_add(i32::try_from(count).unwrap_or(i32::MAX));
        let permits = Semaphore::new(window.max(1));
        let Conn { reader, writer, credentials, timeout: wait, .. } = self;
        let write = async {
            for (i, mut cmd) in cmds.into_iter().enumerate() {
                if permits.try_acquire().map(|p| p.forget()).is_err() {
                    writer.flush().await?;
                    permits.acquire().await.map_err(|_| ClientError::Window)?.forget();
                }
                cmd.opaque = base.wrapping_add(i as i32);
                if let Some(creds) = credentials.as_ref() {
                    sign_command(&mut cmd, creds);
                }
                writer.feed(cmd).await?;
            }
            writer.flush().await?;
            Ok::<(), ClientError>(())
        };
        let read = async {
            let mut answers: Vec<Option<RemotingCommand>> = (0..count).map(|_| None).collect();
            let mut left = count;
            while left > 0 {
                let frame = match timeout(*wait, reader.next()).await {
                    Err(_) => return Err(ClientError::Timeout(wait.as_millis())),
                    Ok(None) => return Err(ClientError::Closed),
                    Ok(Some(frame)) => frame?,
                };
                // Frames that answer nothing of this batch (a late answer to an earlier one that
                // timed out, a request from the server) are skipped.
                let index = frame.opaque.wrapping_sub(base) as u32 as usize;
                match answers.get_mut(index) {
                    Some(slot @ None) if frame.is_response() => {
                        *slot = Some(frame);
                        left -= 1;
                        permits.add_permits(1);
                    }
                    _ => continue,
                }
            }
            Ok(answers.into_iter().flatten().collect())
        };
        let ((), answers) = tokio::try_join!(write, read)?;
        Ok(answers)
    }
}
