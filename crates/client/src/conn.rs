//! One open connection: connect (plain TCP or TLS), then single calls or pipelined batches.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use namesrv_protocol::acl_signature::{sign_command, SessionCredentials};
use namesrv_protocol::{CodecError, RemotingCodec, RemotingCommand};
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use thiserror::Error;
use tokio::io::{ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::timeout;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::either::Either;

/// Largest answer accepted: a cluster-info or route body of a very large fleet fits many times.
const MAX_FRAME_BYTES: usize = 256 * 1024 * 1024;

/// What the codec reports when an HTTP server answers: "HTTP" read as a frame length (plus the
/// four bytes of the length itself).
const HTTP_AS_FRAME_LENGTH: u64 = u32::from_be_bytes(*b"HTTP") as u64 + 4;

/// Why a call to one NameServer failed; the caller adds the NameServer's address.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The TCP connection could not be opened.
    #[error("cannot connect: {0}")]
    Connect(io::Error),
    /// The TLS handshake failed (untrusted certificate, wrong name, no TLS on that port ...).
    #[error("TLS handshake failed: {0}")]
    Tls(io::Error),
    /// Nothing arrived within the timeout while answers were due.
    #[error("no answer within {0} ms")]
    Timeout(u128),
    /// The NameServer closed the connection with answers still due.
    #[error("connection closed by the NameServer")]
    Closed,
    /// A plain-TCP connection was closed before its first answer: what a NameServer that
    /// accepts TLS only does.
    #[error("the server closed the connection without answering: it expects TLS (connect with TLS)")]
    ExpectsTls,
    /// The address answers HTTP (the HTTP port, not the remoting port).
    #[error("the server answered HTTP, not the RocketMQ remoting protocol: is this the HTTP port? (the remoting port is 9876 by default)")]
    Http,
    /// A frame could not be written or read.
    #[error("{0}")]
    Codec(#[from] CodecError),
    /// The semaphore pacing the pipeline was closed (cannot happen while a batch runs).
    #[error("request window closed")]
    Window,
    /// A runtime for the blocking wrapper could not be built.
    #[error("cannot start a runtime: {0}")]
    Runtime(io::Error),
}

/// How a connection is made and used.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Bounds the connect, the TLS handshake and every wait for an answer.
    pub timeout: Duration,
    /// Every request is signed with these (RocketMQ session credentials), when given.
    pub credentials: Option<SessionCredentials>,
    /// TLS with this configuration, when given; plain TCP otherwise.
    pub tls: Option<Arc<ClientConfig>>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions { timeout: Duration::from_secs(3), credentials: None, tls: None }
    }
}

type Stream = Either<TcpStream, TlsStream<TcpStream>>;

/// One open connection with its timeout and credentials.
pub struct Conn {
    reader: FramedRead<ReadHalf<Stream>, RemotingCodec>,
    writer: FramedWrite<WriteHalf<Stream>, RemotingCodec>,
    next_opaque: i32,
    timeout: Duration,
    credentials: Option<SessionCredentials>,
    /// Plain TCP and nothing answered yet: a close now means the server wants TLS.
    plain_unanswered: bool,
}

/// The host part of `host:port` or `[v6]:port`, as a TLS server name.
fn server_name(addr: &str) -> Result<ServerName<'static>, ClientError> {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_owned())
        .map_err(|e| ClientError::Connect(io::Error::new(io::ErrorKind::InvalidInput, e)))
}

impl Conn {
    /// Connects to `addr` (`host:port`) as `options` say.
    pub async fn connect(addr: &str, options: &ConnectOptions) -> Result<Conn, ClientError> {
        let wait = options.timeout;
        let tcp = match timeout(wait, TcpStream::connect(addr)).await {
            Ok(connected) => connected.map_err(ClientError::Connect)?,
            Err(_) => return Err(ClientError::Timeout(wait.as_millis())),
        };
        tcp.set_nodelay(true).map_err(ClientError::Connect)?;
        let stream: Stream = match &options.tls {
            None => Either::Left(tcp),
            Some(config) => {
                let handshake = TlsConnector::from(config.clone()).connect(server_name(addr)?, tcp);
                match timeout(wait, handshake).await {
                    Ok(tls) => Either::Right(tls.map_err(ClientError::Tls)?),
                    Err(_) => return Err(ClientError::Timeout(wait.as_millis())),
                }
            }
        };
        let (read, write) = tokio::io::split(stream);
        Ok(Conn {
            reader: FramedRead::new(read, RemotingCodec::new(MAX_FRAME_BYTES)),
            writer: FramedWrite::new(write, RemotingCodec::new(MAX_FRAME_BYTES)),
            next_opaque: 1,
            timeout: wait,
            credentials: options.credentials.clone(),
            plain_unanswered: options.tls.is_none(),
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
        let plain_unanswered = self.plain_unanswered;
        let result = self.exchange(cmds, window).await;
        if result.is_ok() {
            self.plain_unanswered = false;
        }
        result.map_err(|e| explain(e, plain_unanswered))
    }

    async fn exchange(
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

/// Says what a failure most likely means: an HTTP answer, or a plain connection closed by a
/// server that wants TLS.
fn explain(error: ClientError, plain_unanswered: bool) -> ClientError {
    match error {
        ClientError::Codec(CodecError::FrameTooLarge { got, .. }) if got == HTTP_AS_FRAME_LENGTH => ClientError::Http,
        ClientError::Closed if plain_unanswered => ClientError::ExpectsTls,
        ClientError::Codec(CodecError::Io(e))
            if plain_unanswered && matches!(e.kind(), io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe) =>
        {
            ClientError::ExpectsTls
        }
        other => other,
    }
}
