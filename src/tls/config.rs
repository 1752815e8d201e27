//! The rustls server configuration from PEM files: the certificate chain, its private key, and
//! optionally a CA bundle client certificates must chain to (then every client must present
//! one). On the ring provider, TLS 1.2 and 1.3 with rustls's safe defaults.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use thiserror::Error;

use crate::secret_file::warn_if_open_to_others;
use crate::settings::Settings;

/// The files a TLS configuration is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// Its private key.
    pub key: PathBuf,
    /// CA certificates client certificates must chain to; `None`: no client certificates.
    pub client_ca: Option<PathBuf>,
}

impl TlsFiles {
    /// The files the settings name.
    pub fn from_settings(settings: &Settings) -> TlsFiles {
        let client_ca = Some(settings.tls.tls_client_ca_file.trim()).filter(|p| !p.is_empty()).map(PathBuf::from);
        TlsFiles {
            cert: settings.tls.tls_cert_file.clone().into(),
            key: settings.tls.tls_key_file.clone().into(),
            client_ca,
        }
    }

    /// Every file, for watching.
    pub fn paths(&self) -> Vec<PathBuf> {
        [Some(&self.cert), Some(&self.key), self.client_ca.as_ref()].into_iter().flatten().cloned().collect()
    }
}

/// Why a TLS configuration could not be made. Never shows key material.
#[derive(Debug, Error)]
pub enum TlsError {
    /// A file cannot be read, or holds no PEM section of the kind needed.
    #[error("{what} {}: {problem}", path.display())]
    Pem { what: &'static str, path: PathBuf, problem: String },
    /// The certificates and key do not make a server configuration (a key that does not match
    /// the certificate, an unsupported key type, ...).
    #[error("TLS configuration from {} and {}: {error}", cert.display(), key.display())]
    Config { cert: PathBuf, key: PathBuf, error: rustls::Error },
    /// The client CA bundle cannot verify client certificates.
    #[error("client CA {}: {problem}", path.display())]
    ClientCa { path: PathBuf, problem: String },
    /// The thread watching the files cannot start.
    #[error("cannot watch the TLS files: {0}")]
    Watch(std::io::Error),
}

/// Reads every PEM section of type `T` in `path`; at least one.
fn read_pem<T: PemObject>(what: &'static str, path: &Path) -> Result<Vec<T>, TlsError> {
    let problem = |problem: String| TlsError::Pem { what, path: path.to_owned(), problem };
    let bytes = std::fs::read(path).map_err(|e| problem(e.to_string()))?;
    // The parser's own messages may quote the file; a key file's must not reach a log.
    let items =
        T::pem_slice_iter(&bytes).collect::<Result<Vec<T>, _>>().map_err(|_| problem("not valid PEM".into()))?;
    if items.is_empty() {
        return Err(problem(format!("no PEM {what} found")));
    }
    Ok(items)
}

/// The server configuration `files` describe.
pub fn server_config(files: &TlsFiles) -> Result<Arc<ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs: Vec<CertificateDer<'static>> = read_pem("certificate", &files.cert)?;
    let key: PrivateKeyDer<'static> = read_pem("private key", &files.key)?.remove(0);
    warn_if_open_to_others(&files.key, "TLS private key file");
    let config_error = |error| TlsError::Config { cert: files.cert.clone(), key: files.key.clone(), error };
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(config_error)?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let ca_error = |problem: String| TlsError::ClientCa { path: path.clone(), problem };
            let mut roots = RootCertStore::empty();
            for ca in read_pem::<CertificateDer<'static>>("client CA certificate", path)? {
                roots.add(ca).map_err(|e| ca_error(e.to_string()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| ca_error(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    Ok(Arc::new(builder.with_single_cert(certs, key).map_err(config_error)?))
}
