//! Binding, the accept loop, and one `Connection` actor per accepted socket.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket};
use tracing::{info, warn};

use crate::connection::Connection;
use crate::dispatch::{DispatchOptions, Dispatcher};
use crate::protocol::RemotingCodec;
use crate::registry::messages::ConnId;
use crate::registry::tables::TableOptions;
use crate::registry::RouteRegistry;
use crate::settings::Settings;

/// Listen backlog, as Java's `serverSocketBacklog`.
const BACKLOG: u32 = 1024;

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

/// Table options taken from the settings.
pub fn table_options(settings: &Settings) -> TableOptions {
    TableOptions {
        default_broker_timeout_ms: settings.broker_timeout_ms,
        delete_topic_with_broker_registration: settings.delete_topic_with_broker_registration,
        support_acting_master: settings.support_acting_master,
    }
}

/// Serves on `listener` until `shutdown` completes. Must run inside an actix System.
pub async fn serve(settings: Settings, listener: TcpListener, shutdown: impl Future<Output = ()>) -> io::Result<()> {
    let registry = RouteRegistry::start(table_options(&settings), Duration::from_millis(settings.scan_interval_ms));
    let dispatcher = Dispatcher::new(registry.clone(), DispatchOptions::from(&settings));
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
    info!("stopped accepting connections");
    Ok(())
}
