//! TLS for client connections: which CA certificates to trust, and an optional client
//! certificate for a server that asks for one (mutual TLS).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ClientConfig;
use thiserror::Error;

/// Why a TLS configuration could not be built.
#[derive(Debug, Error)]
pub enum TlsConfigError {
    /// A PEM file could not be read or holds nothing usable.
    #[error("{path}: {reason}")]
    Pem {
        /// The file.
        path: String,
        /// What was wrong with it.
        reason: String,
    },
    /// rustls refused the certificates or the key.
    #[error("{0}")]
    Rustls(#[from] rustls::Error),
}

/// A client configuration trusting the CA certificates in `ca` (PEM), presenting the
/// certificate chain `cert` with its key `key` (PEM) when both are given.
pub fn client_config(ca: &Path, client: Option<(&Path, &Path)>) -> Result<Arc<ClientConfig>, TlsConfigError> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in read_certs(ca)? {
        roots.add(cert)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots);
    let config = match client {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => builder.with_client_auth_cert(read_certs(cert)?, read_key(key)?)?,
    };
    Ok(Arc::new(config))
}

/// Where the system keeps its CA certificates: `SSL_CERT_FILE`, else the first bundle of the
/// usual places (Debian and Alpine, Fedora and RHEL, openSUSE, macOS and the BSDs) that exists.
pub fn system_ca_file() -> Option<PathBuf> {
    if let Some(file) = std::env::var_os("SSL_CERT_FILE").filter(|f| !f.is_empty()) {
        return Some(PathBuf::from(file));
    }
    SYSTEM_CA_FILES.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// The usual places of the system's CA bundle.
const SYSTEM_CA_FILES: [&str; 4] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

fn pem_error(path: &Path, reason: impl ToString) -> TlsConfigError {
    TlsConfigError::Pem { path: path.display().to_string(), reason: reason.to_string() }
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let certs: Vec<_> = CertificateDer::pem_file_iter(path)
        .map_err(|e| pem_error(path, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| pem_error(path, e))?;
    if certs.is_empty() {
        return Err(pem_error(path, "no certificate in the file"));
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsConfigError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| pem_error(path, e))
}
