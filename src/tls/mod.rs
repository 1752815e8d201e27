//! TLS on the remoting port (rustls through tokio-rustls), in the modes of Java's
//! `tls.server.mode`: `permissive` serves TLS and plain TCP on one port, the first byte deciding
//! (0x16, a TLS handshake record, as Java's `TlsModeHandler` checks); `enforcing` closes plain
//! connections with a warning. `disabled` never gets here: the accept loop hands sockets to
//! their connections directly.
//!
//! The server configuration is swapped whole when the certificate, key or client CA files
//! change, or on SIGHUP: new handshakes use the new one, open connections keep theirs. A bad
//! file leaves the previous configuration in force. A handshake runs in a task of its own,
//! bounded by `tls_handshake_timeout_ms`, so a stalled one holds up no other connection.

pub mod config;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use rustls::ServerConfig;
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use tracing::{debug, error, info, warn};

use crate::filewatch::{self, Poke, ReloadCause, Timing};
use crate::metrics::Metrics;
use crate::protocol::sniff::TLS_HANDSHAKE;
use crate::ratelog::RateLimit;
use crate::settings::{Settings, TlsMode};
pub use config::{server_config, TlsError, TlsFiles};

/// A connection as TLS left it.
pub enum Accepted {
    /// Plain TCP (permissive mode, first byte not 0x16).
    Plain(TcpStream),
    /// A completed TLS handshake.
    Tls(Box<TlsStream<TcpStream>>),
}

/// TLS in front of the connections, in permissive or enforcing mode.
pub struct Tls {
    mode: TlsMode,
    config: Arc<ArcSwap<ServerConfig>>,
    /// How long a connection may stay silent before its first byte.
    first_byte_timeout: Duration,
    handshake_timeout: Duration,
    warnings: RateLimit,
    metrics: Arc<Metrics>,
}

impl Tls {
    /// Loads the certificate and key (a bad file stops start-up) and watches the files, unless
    /// `tls_mode` is `disabled` (then `None`). The [`Poke`] reloads them (SIGHUP).
    pub fn start(settings: &Settings, metrics: Arc<Metrics>) -> Result<Option<(Arc<Tls>, Poke)>, TlsError> {
        if settings.tls.tls_mode == TlsMode::Disabled {
            return Ok(None);
        }
        let files = TlsFiles::from_settings(settings);
        let config = Arc::new(ArcSwap::new(server_config(&files)?));
        let mutual = files.client_ca.is_some();
        info!(mode = %settings.tls.tls_mode, cert = %files.cert.display(), client_certificates = mutual, "TLS on");
        let table = config.clone();
        let timing = Timing::of(settings);
        let counted = metrics.clone();
        let reload = move |cause| {
            let loaded = server_config(&files);
            counted.security_reload("tls", loaded.is_ok());
            match loaded {
                Ok(config) => {
                    table.store(config);
                    info!(cert = %files.cert.display(), requested = cause == ReloadCause::Requested, "TLS certificate reloaded");
                }
                Err(error) => error!(%error, "TLS files not reloaded: the previous certificate stays in use"),
            }
        };
        let poke = filewatch::spawn("tls-reload", TlsFiles::from_settings(settings).paths(), timing, reload)
            .map_err(TlsError::Watch)?;
        let tls = Tls {
            mode: settings.tls.tls_mode,
            config,
            first_byte_timeout: Duration::from_secs(settings.listen.idle_timeout_secs),
            handshake_timeout: Duration::from_millis(settings.tls.tls_handshake_timeout_ms),
            warnings: RateLimit::for_peers(),
            metrics,
        };
        Ok(Some((Arc::new(tls), poke)))
    }

    /// Waits for the connection's first byte and, when it starts a TLS handshake, completes it;
    /// `None` when the connection is closed (silent, plain in enforcing mode, failed handshake).
    pub async fn accept(&self, stream: TcpStream, peer: SocketAddr) -> Option<Accepted> {
        let mut first = [0u8; 1];
        match tokio::time::timeout(self.first_byte_timeout, stream.peek(&mut first)).await {
            Ok(Ok(1..)) => {}
            Ok(Ok(0)) | Ok(Err(_)) => return None,
            Err(_) => {
                debug!(%peer, "closing connection: nothing received before the idle timeout");
                return None;
            }
        }
        if first[0] != TLS_HANDSHAKE {
            if self.mode == TlsMode::Enforcing {
                self.count("plain_refused");
                self.warn(peer, "closing connection: plain TCP while tls_mode is enforcing");
                return None;
            }
            self.count("plain");
            return Some(Accepted::Plain(stream));
        }
        let acceptor = TlsAcceptor::from(self.config.load_full());
        match tokio::time::timeout(self.handshake_timeout, acceptor.accept(stream)).await {
            Ok(Ok(tls)) => {
                self.count("tls");
                Some(Accepted::Tls(Box::new(tls)))
            }
            Ok(Err(error)) => {
                self.count("handshake_failed");
                self.warn(peer, &format!("closing connection: TLS handshake failed: {error}"));
                None
            }
            Err(_) => {
                self.count("handshake_timeout");
                let ms = self.handshake_timeout.as_millis();
                self.warn(peer, &format!("closing connection: TLS handshake not complete within {ms} ms"));
                None
            }
        }
    }

    fn count(&self, result: &'static str) {
        self.metrics.tls_connection(result);
    }

    /// A peer-caused warning, rate-limited.
    fn warn(&self, peer: SocketAddr, what: &str) {
        if let Some(suppressed) = self.warnings.admit() {
            warn!(%peer, suppressed, "{what}");
        }
    }
}
