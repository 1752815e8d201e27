//! One open connection: connect (plain TCP or TLS), then single calls, pipelined batches, or
//! requests queued and flushed by the caller with answers read one frame at a time.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use namesrv_protocol::codec::encode_frame;
use namesrv_protocol::signature::{sign_command, SessionCredentials};
use namesrv_protocol::{CodecError, RemotingCodec, RemotingCommand};
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::ClientConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::timeout;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;
use tokio_util::codec::Decoder;
use tokio_util::either::Either;

use crate::error::{explain, ClientError};

/// The default of [`ConnectOptions::max_answer_bytes`]: a cluster-info or route body of a very
/// large fleet fits many times. A tool reading servers it does not trust sets a tighter bound.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 256 * 1024 * 1024;

/// How a connection is made and used.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Bounds the connect, the TLS handshake, every write and every wait for an answer.
    pub timeout: Duration,
    /// Every request is signed with these (RocketMQ session credentials), when given.
    pub credentials: Option<SessionCredentials>,
    /// TLS with this configuration, when given; plain TCP otherwise.
    pub tls: Option<Arc<ClientConfig>>,
    /// The local address to connect from, when given (a test playing several hosts on
    /// loopback: 127.0.0.2 is another peer than 127.0.0.1).
    pub source: Option<std::net::IpAddr>,
    /// The largest frame read from the server, its 4-byte length field included. A larger one
    /// is refused as soon as its length field arrives, before any of its body is buffered, with
    /// [`ClientError::AnswerTooLarge`]; the connection is of no further use then.
    pub max_answer_bytes: usize,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            timeout: Duration::from_secs(3),
            credentials: None,
            tls: None,
            source: None,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        }
    }
}

type Stream = Either<TcpStream, TlsStream<TcpStream>>;

/// What a read with a deadline found.
#[derive(Debug)]
pub enum Incoming {
    /// A complete frame.
    Frame(RemotingCommand),
    /// The server closed (or reset) the connection.
    Closed,
    /// Nothing complete arrived within the deadline.
    Silent,
}

/// One open connection with its timeout and credentials.
pub struct Conn {
    pub(crate) reader: ReadHalf<Stream>,
    /// Bytes read and not yet taken as frames.
    pub(crate) input: BytesMut,
    codec: RemotingCodec,
    /// [`ConnectOptions::max_answer_bytes`], for raw frame reads too.
    pub(crate) max_answer_bytes: usize,
    pub(crate) writer: WriteHalf<Stream>,
    /// Frames queued by [`Conn::feed`] and not yet flushed.
    pub(crate) output: BytesMut,
    next_opaque: i32,
    pub(crate) timeout: Duration,
    credentials: Option<SessionCredentials>,
    local_addr: SocketAddr,
    server_certificates: Vec<CertificateDer<'static>>,
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

/// Runs `work` within `wait`, a timeout error when it takes longer.
pub(crate) async fn within<T>(
    wait: Duration,
    work: impl std::future::Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    timeout(wait, work).await.unwrap_or(Err(ClientError::Timeout(wait.as_millis())))
}

/// A TCP connection to `addr`, from `source` when given.
async fn tcp_connect(addr: &str, source: Option<std::net::IpAddr>) -> io::Result<TcpStream> {
    let Some(source) = source else {
        return TcpStream::connect(addr).await;
    };
    let target = tokio::net::lookup_host(addr).await?.find(|a| a.is_ipv4() == source.is_ipv4());
    let target =
        target.ok_or_else(|| io::Error::new(io::ErrorKind::AddrNotAvailable, "no address of the source's family"))?;
    let socket = if source.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    socket.bind(SocketAddr::new(source, 0))?;
    socket.connect(target).await
}

impl Conn {
    /// Connects to `addr` (`host:port`) as `options` say.
    pub async fn connect(addr: &str, options: &ConnectOptions) -> Result<Conn, ClientError> {
        let wait = options.timeout;
        let tcp = within(wait, async { tcp_connect(addr, options.source).await.map_err(ClientError::Connect) }).await?;
        tcp.set_nodelay(true).map_err(ClientError::Connect)?;
        let local_addr = tcp.local_addr().map_err(ClientError::Connect)?;
        let (stream, server_certificates): (Stream, _) = match &options.tls {
            None => (Either::Left(tcp), Vec::new()),
            Some(config) => {
                let handshake = TlsConnector::from(config.clone()).connect(server_name(addr)?, tcp);
                let tls = within(wait, async { handshake.await.map_err(ClientError::Tls) }).await?;
                let certs = tls.get_ref().1.peer_certificates().unwrap_or_default();
                let certs = certs.iter().map(|c| c.clone().into_owned()).collect();
                (Either::Right(tls), certs)
            }
        };
        let (reader, writer) = tokio::io::split(stream);
        Ok(Conn {
            reader,
            input: BytesMut::with_capacity(64 * 1024),
            codec: RemotingCodec::new(options.max_answer_bytes),
            max_answer_bytes: options.max_answer_bytes,
            writer,
            output: BytesMut::new(),
            next_opaque: 1,
            timeout: wait,
            credentials: options.credentials.clone(),
            local_addr,
            server_certificates,
            plain_unanswered: options.tls.is_none(),
        })
    }

    /// This end's address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The certificate chain the server presented (empty over plain TCP).
    pub fn server_certificates(&self) -> &[CertificateDer<'static>] {
        &self.server_certificates
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

    /// Queues `cmd` with the connection's next opaque (signed when credentials are set), to be
    /// written by [`Conn::flush`]; returns the opaque its answer will carry.
    pub async fn feed(&mut self, mut cmd: RemotingCommand) -> Result<i32, ClientError> {
        cmd.opaque = self.next_opaque;
        self.next_opaque = self.next_opaque.wrapping_add(1);
        self.feed_as_is(cmd)?;
        Ok(self.next_opaque.wrapping_sub(1))
    }

    /// Queues `cmd` with the opaque it has (signed when credentials are set).
    pub fn feed_as_is(&mut self, mut cmd: RemotingCommand) -> Result<(), ClientError> {
        if let Some(creds) = self.credentials.as_ref() {
            sign_command(&mut cmd, creds);
        }
        encode_frame(&cmd, &mut self.output)?;
        Ok(())
    }

    /// Writes the queued frames, within the timeout.
    pub async fn flush(&mut self) -> Result<(), ClientError> {
        let Conn { writer, output, timeout: wait, .. } = self;
        within(*wait, write_out(writer, output)).await
    }

    /// Writes `cmd` as it is (its own opaque, signed when credentials are set): a one-way
    /// request, or one whose answer the caller reads with [`Conn::next_frame`].
    pub async fn send(&mut self, cmd: RemotingCommand) -> Result<(), ClientError> {
        self.feed_as_is(cmd)?;
        self.flush().await
    }

    /// The next frame the server sends, whatever it answers; a timeout error when nothing
    /// arrives within the timeout, [`ClientError::Closed`] when the server closes.
    pub async fn next_frame(&mut self) -> Result<RemotingCommand, ClientError> {
        match self.next_frame_within(self.timeout).await? {
            Incoming::Frame(frame) => Ok(frame),
            Incoming::Closed => Err(ClientError::Closed),
            Incoming::Silent => Err(ClientError::Timeout(self.timeout.as_millis())),
        }
    }

    /// The next frame the server sends, waiting at most `wait`: to see a push, a close, or
    /// that the server stays silent.
    pub async fn next_frame_within(&mut self, wait: Duration) -> Result<Incoming, ClientError> {
        let Conn { reader, input, codec, .. } = self;
        match timeout(wait, read_frame(reader, input, codec)).await {
            Err(_) => Ok(Incoming::Silent),
            Ok(Ok(Some(frame))) => Ok(Incoming::Frame(frame)),
            Ok(Ok(None)) => Ok(Incoming::Closed),
            Ok(Err(e)) if e.is_closed() => Ok(Incoming::Closed),
            Ok(Err(e)) => Err(e),
        }
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
        let Conn { reader, input, codec, writer, output, credentials, timeout: wait, .. } = self;
        let write = async {
            for (i, mut cmd) in cmds.into_iter().enumerate() {
                if permits.try_acquire().map(|p| p.forget()).is_err() {
                    within(*wait, write_out(writer, output)).await?;
                    permits.acquire().await.map_err(|_| ClientError::Window)?.forget();
                }
                cmd.opaque = base.wrapping_add(i as i32);
                if let Some(creds) = credentials.as_ref() {
                    sign_command(&mut cmd, creds);
                }
                encode_frame(&cmd, output)?;
            }
            within(*wait, write_out(writer, output)).await
        };
        let read = async {
            let mut answers: Vec<Option<RemotingCommand>> = (0..count).map(|_| None).collect();
            let mut left = count;
            while left > 0 {
                let frame = within(*wait, read_frame(reader, input, codec)).await?.ok_or(ClientError::Closed)?;
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

/// Writes and empties `output`.
pub(crate) async fn write_out(writer: &mut WriteHalf<Stream>, output: &mut BytesMut) -> Result<(), ClientError> {
    if !output.is_empty() {
        writer.write_all(output).await?;
        output.clear();
    }
    writer.flush().await?;
    Ok(())
}

/// The next frame from `reader` (bytes already read first); `None` when the server closes
/// between frames. Cancel-safe: bytes read stay in `input`.
async fn read_frame(
    reader: &mut ReadHalf<Stream>,
    input: &mut BytesMut,
    codec: &mut RemotingCodec,
) -> Result<Option<RemotingCommand>, ClientError> {
    loop {
        // The codec checks the length field before the body is waited for.
        match codec.decode(input) {
            Ok(Some(frame)) => return Ok(Some(frame)),
            Ok(None) => {}
            Err(CodecError::FrameTooLarge { got, max }) => return Err(ClientError::AnswerTooLarge { got, max }),
            Err(e) => return Err(e.into()),
        }
        input.reserve(64 * 1024);
        if reader.read_buf(input).await? == 0 {
            return if input.is_empty() { Ok(None) } else { Err(ClientError::Closed) };
        }
    }
}
