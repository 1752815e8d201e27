//! Access control and TLS in tests: accounts files, signed requests, test certificates made at
//! test time (rcgen), and a TLS client of our own (tokio-rustls).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use namesrv::protocol::acl_signature::{sign_command, SessionCredentials};
use namesrv::protocol::codec::encode_frame;
use namesrv::protocol::{RemotingCodec, RemotingCommand};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;
use tokio_util::codec::Decoder;

/// The accounts every access-control test uses: one of each role, and a second broker account.
pub const ACCOUNTS: &str = r#"
[[accounts]]
access_key = "ops"
secret_key = "ops-secret-1"
role = "admin"

[[accounts]]
access_key = "broker-a-key"
secret_key = "broker-a-secret"
role = "broker"
brokers = ["broker-a"]

[[accounts]]
access_key = "any-broker-key"
secret_key = "any-broker-secret"
role = "broker"
brokers = ["*"]

[[accounts]]
access_key = "app"
secret_key = "app-secret"
role = "client"
"#;

/// Writes `text` as the accounts file in `dir` (mode 600), atomically.
pub fn write_accounts(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("accounts.toml");
    let temp = dir.join("accounts.toml.tmp");
    std::fs::write(&temp, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    std::fs::rename(&temp, &path).unwrap();
    path
}

/// `cmd` signed as Java's AclClientRPCHook signs it.
pub fn signed(mut cmd: RemotingCommand, access_key: &str, secret_key: &str) -> RemotingCommand {
    let creds =
        SessionCredentials { access_key: access_key.into(), secret_key: secret_key.into(), security_token: None };
    sign_command(&mut cmd, &creds);
    cmd
}

/// A test certificate authority, made at test time.
pub struct Pki {
    ca: CertifiedIssuer<'static, KeyPair>,
}

impl Pki {
    /// A fresh CA named `name`.
    pub fn new(name: &str) -> Pki {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        Pki { ca: CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap() }
    }

    /// The CA certificate.
    pub fn ca_der(&self) -> CertificateDer<'static> {
        self.ca.der().clone()
    }

    /// The CA certificate as PEM.
    pub fn ca_pem(&self) -> String {
        self.ca.pem()
    }

    /// A certificate for `127.0.0.1` and `localhost` with common name `cn`: (cert PEM, key PEM).
    pub fn leaf(&self, cn: &str) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        let cert = params.signed_by(&key, &self.ca).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// Writes a server certificate and key named `cn` into `dir` as `server.pem`, `server.key`.
    pub fn write_server(&self, dir: &Path, cn: &str) -> (PathBuf, PathBuf) {
        let (cert, key) = self.leaf(cn);
        let (cert_path, key_path) = (dir.join("server.pem"), dir.join("server.key"));
        std::fs::write(&cert_path, cert).unwrap();
        std::fs::write(&key_path, key).unwrap();
        (cert_path, key_path)
    }
}

/// A client configuration trusting `ca`, presenting `identity` (cert PEM, key PEM) when given.
pub fn client_config(ca: CertificateDer<'static>, identity: Option<(String, String)>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(ca).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match identity {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = vec![CertificateDer::from_pem_slice(cert.as_bytes()).unwrap()];
            builder.with_client_auth_cert(chain, PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap()).unwrap()
        }
    };
    Arc::new(config)
}

/// A RocketMQ client over TLS (tokio-rustls on a runtime of its own), one request at a time.
pub struct TlsClient {
    runtime: tokio::runtime::Runtime,
    stream: TlsStream<TcpStream>,
    codec: RemotingCodec,
    buf: BytesMut,
    next_opaque: i32,
}

impl TlsClient {
    /// Connects and completes the handshake (server name 127.0.0.1), within 5 s.
    pub fn connect(addr: SocketAddr, config: Arc<ClientConfig>) -> std::io::Result<TlsClient> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let stream = runtime.block_on(async {
            let tcp = TcpStream::connect(addr).await?;
            let name = ServerName::IpAddress(addr.ip().into());
            let handshake = TlsConnector::from(config).connect(name, tcp);
            match tokio::time::timeout(Duration::from_secs(5), handshake).await {
                Ok(done) => done,
                Err(_) => Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "handshake timed out")),
            }
        })?;
        Ok(TlsClient { runtime, stream, codec: RemotingCodec::new(1 << 30), buf: BytesMut::new(), next_opaque: 1 })
    }

    /// The certificate the server presented (its leaf).
    pub fn server_certificate(&self) -> CertificateDer<'static> {
        let (_, connection) = self.stream.get_ref();
        connection.peer_certificates().expect("server certificate")[0].clone().into_owned()
    }

    /// Sends `cmd` with a fresh opaque and reads its response; `Err` when the connection closes
    /// or nothing arrives within 5 s.
    pub fn call(&mut self, mut cmd: RemotingCommand) -> std::io::Result<RemotingCommand> {
        cmd.opaque = self.next_opaque;
        self.next_opaque += 1;
        let mut out = BytesMut::new();
        encode_frame(&cmd, &mut out).unwrap();
        let TlsClient { runtime, stream, codec, buf, .. } = self;
        runtime.block_on(async {
            stream.write_all(&out).await?;
            stream.flush().await?;
            let read = async {
                loop {
                    if let Some(frame) = codec.decode(buf).map_err(std::io::Error::other)? {
                        return Ok(frame);
                    }
                    let mut chunk = [0u8; 16 * 1024];
                    let n = stream.read(&mut chunk).await?;
                    if n == 0 {
                        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed"));
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
            };
            tokio::time::timeout(Duration::from_secs(5), read)
                .await
                .unwrap_or_else(|_| Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer")))
        })
    }
}
