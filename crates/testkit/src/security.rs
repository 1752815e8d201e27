//! Access control and TLS in tests: accounts files, signed requests, test certificates made at
//! test time (rcgen), and the test client over TLS.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use namesrv::protocol::signature::{sign_command, SessionCredentials};
use namesrv::protocol::RemotingCommand;
use namesrv_client::{ClientError, ConnectOptions};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};

use crate::client::Client;

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

    /// Writes a server certificate and key named `cn` into `dir` as `server.pem`, `server.key`
    /// (the key readable by its owner only).
    pub fn write_server(&self, dir: &Path, cn: &str) -> (PathBuf, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let (cert, key) = self.leaf(cn);
        let (cert_path, key_path) = (dir.join("server.pem"), dir.join("server.key"));
        std::fs::write(&cert_path, cert).unwrap();
        std::fs::write(&key_path, key).unwrap();
        std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600)).unwrap();
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

/// A client over TLS trusting `config`'s CA (server name 127.0.0.1): the test client on a
/// TLS connection; `Err` when the TCP connect or the handshake fails.
pub fn tls_client(addr: SocketAddr, config: Arc<ClientConfig>) -> Result<Client, ClientError> {
    let options = ConnectOptions { timeout: Duration::from_secs(5), tls: Some(config), ..ConnectOptions::default() };
    Client::connect_with(addr, &options)
}
