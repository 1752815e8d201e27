//! Start-up of the actors, binding, the accept loop (one `Connection` actor per socket), and
//! graceful shutdown.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use actix::Arbiter;
use thiserror::Error;
use tokio::net::{TcpListener, TcpSocket};
use tracing::{info, warn};

use crate::config_store::ConfigStore;
use crate::connection::Connection;
use crate::dispatch::{Actors, DispatchOptions, Dispatcher};
use crate::kv::{self, Flush, KvError, KvStore};
use crate::mailbox::ConnId;
use crate::notifier::Notifier;
use crate::protocol::RemotingCodec;
use crate::registry::options::RegistryOptions;
use crate::registry::RouteRegistry;
use crate::settings::Settings;

/// Listen backlog, as Java's `serverSocketBacklog`.
const BACKLOG: u32 = 1024;

/// How long shutdown waits for requests in flight.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the server could not start or run.
#[derive(Debug, Error)]
pub enum ServeError {
    /// Binding or accepting failed.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The KV config file cannot be loaded; start-up stops rather than empty it.
    #[error(transparent)]
    Kv(#[from] KvError),
}

/// Binds the configured address with SO_REUSEADDR and Java's backlog.
pub fn bind(settings: &Settings) -> io::Result<TcpListener> {
    let addr: SocketAddr = format!("{}:{}", settings.bind_address, settings.listen_port)
        .parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad listen address: {e}")))?;
    let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// Serves on `listener` until `shutdown` completes, then drains. Must run inside an actix System.
pub async fn serve(
    mut settings: Settings,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    // As Java does for listenPort=0: the port actually bound is the one reported and persisted.
    settings.listen_port = listener.local_addr()?.port();
    let kv_path = PathBuf::from(&settings.kv_config_path);
    let kv_table = kv::load(&kv_path)?;
    info!(path = %kv_path.display(), namespaces = kv_table.len(), "kv config loaded");

    let notifier = Notifier::start(settings.response_version);
    let scan_interval = Duration::from_millis(settings.scan_interval_ms);
    let registry = RouteRegistry::start(RegistryOptions::from(&settings), scan_interval, notifier);
    let storage = Arbiter::new();
    let kv = KvStore::start(kv_path, kv_table, registry.clone(), &storage.handle());
    let config = ConfigStore::start(settings.clone(), registry.clone(), &storage.handle());
    let actors = Actors { registry: registry.clone(), kv: kv.clone(), config };
    let dispatcher = Dispatcher::new(actors, DispatchOptions::from(&settings));
    let codec = RemotingCodec::new(settings.max_frame_bytes);
    let idle_timeout = Duration::from_secs(settings.idle_timeout_secs);

    info!(addr = %listener.local_addr()?, "listening");
    tokio::pin!(shutdown);
    let mut next_id = 0u64;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    next_id += 1;
                    let _ = stream.set_nodelay(true);
                    Connection::start(stream, peer, ConnId(next_id), dispatcher.clone(), registry.clone(), codec.clone(), idle_timeout);
                }
                Err(error) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    info!(in_flight = dispatcher.in_flight(), "shutting down: stopped accepting connections");
    let begin = Instant::now();
    while dispatcher.in_flight() > 0 && begin.elapsed() < DRAIN_TIMEOUT {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = kv.ask(Flush { conn: ConnId(0) }).await;
    storage.stop();
    info!(left_in_flight = dispatcher.in_flight(), drain_ms = begin.elapsed().as_millis() as u64, "shutdown complete");
    Ok(())
}
