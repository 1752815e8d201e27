//! A pipelined RocketMQ client connection for load generation: many requests in flight,
//! responses matched by `opaque`. With `--tls-ca` every connection is TLS, with `--access-key`
//! every request is signed (as Java's `AclClientRPCHook` signs it).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use futures_util::{SinkExt, StreamExt};
use namesrv::protocol::acl_signature::{sign_command, SessionCredentials};
use namesrv::protocol::{RemotingCodec, RemotingCommand};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;
use tokio_util::codec::Framed;
use tokio_util::either::Either;

/// How every connection is made: TLS or plain, signed or not. Set once, by `main`.
#[derive(Default)]
pub struct ConnectOptions {
    /// Credentials every request is signed with.
    pub credentials: Option<SessionCredentials>,
    /// TLS, trusting the CA it was made with.
    pub tls: Option<TlsConnector>,
}

static OPTIONS: OnceLock<ConnectOptions> = OnceLock::new();

/// Sets how connections are made; the first call wins.
pub fn configure(options: ConnectOptions) {
    let _ = OPTIONS.set(options);
}

fn options() -> &'static ConnectOptions {
    OPTIONS.get_or_init(ConnectOptions::default)
}

/// A TLS connector trusting the certificates in the PEM file `ca`.
pub fn tls_connector(ca: &str) -> io::Result<TlsConnector> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).map_err(io::Error::other)? {
        roots.add(cert.map_err(io::Error::other)?).map_err(io::Error::other)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

/// A connection to the server, plain or TLS as configured.
pub type Stream = Either<TcpStream, TlsStream<TcpStream>>;

/// Connects to `addr`, with TLS when configured.
pub async fn connect_stream(addr: &str) -> io::Result<Stream> {
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| io::Error::new(e.kind(), format!("cannot connect to {addr}: {e}")))?;
    tcp.set_nodelay(true)?;
    Ok(match &options().tls {
        None => Either::Left(tcp),
        Some(connector) => {
            let name = ServerName::IpAddress(tcp.peer_addr()?.ip().into());
            Either::Right(connector.connect(name, tcp).await?)
        }
    })
}

/// Signs `cmd` when credentials are configured (the signature covers the extFields and the
/// body, not the opaque, so a signed request can be re-sent with another opaque).
pub fn sign(cmd: &mut RemotingCommand) {
    if let Some(credentials) = &options().credentials {
        sign_command(cmd, credentials);
    }
}

/// One connection with requests in flight.
pub struct Conn {
    framed: Framed<Stream, RemotingCodec>,
    next_opaque: i32,
    pending: HashMap<i32, Instant>,
}

/// A response with the time it took.
pub struct Answer {
    pub code: i32,
    pub latency_us: u64,
    pub body_len: usize,
}

impl Conn {
    /// Connects to `addr`.
    pub async fn connect(addr: &str) -> io::Result<Conn> {
        let stream = connect_stream(addr).await?;
        Ok(Conn { framed: Framed::new(stream, RemotingCodec::new(1 << 30)), next_opaque: 1, pending: HashMap::new() })
    }

    /// Queues a request without flushing; call [`Conn::flush`] after a batch.
    pub async fn feed(&mut self, mut cmd: RemotingCommand) -> io::Result<()> {
        sign(&mut cmd);
        cmd.opaque = self.next_opaque;
        self.next_opaque = self.next_opaque.wrapping_add(1);
        self.pending.insert(cmd.opaque, Instant::now());
        self.framed.feed(cmd).await.map_err(io::Error::other)
    }

    /// Flushes queued requests.
    pub async fn flush(&mut self) -> io::Result<()> {
        self.framed.flush().await.map_err(io::Error::other)
    }

    /// Sends one request and waits for its answer.
    pub async fn call(&mut self, cmd: RemotingCommand) -> io::Result<Answer> {
        self.feed(cmd).await?;
        self.flush().await?;
        self.next_answer().await
    }

    /// Waits for the next answer to one of this connection's requests.
    pub async fn next_answer(&mut self) -> io::Result<Answer> {
        let (frame, latency_us) = self.next_frame().await?;
        Ok(Answer { code: frame.code, latency_us, body_len: frame.body.as_ref().map_or(0, |b| b.len()) })
    }

    /// Sends one request and returns the body of its answer (empty when it has none).
    pub async fn call_body(&mut self, cmd: RemotingCommand) -> io::Result<Vec<u8>> {
        self.feed(cmd).await?;
        self.flush().await?;
        Ok(self.next_frame().await?.0.body.map(|b| b.to_vec()).unwrap_or_default())
    }

    /// The next frame answering one of this connection's requests, with its latency.
    async fn next_frame(&mut self) -> io::Result<(RemotingCommand, u64)> {
        loop {
            let frame = self
                .framed
                .next()
                .await
                .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection"))?
                .map_err(io::Error::other)?;
            if let Some(sent) = self.pending.remove(&frame.opaque) {
                return Ok((frame, sent.elapsed().as_micros() as u64));
            }
        }
    }
}
