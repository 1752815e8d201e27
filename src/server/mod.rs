//! Start-up of the actors, binding (IPv4, IPv6, dual-stack `::`), the accept loop (one
//! `Connection` actor per socket, behind TLS when it is on), access control, reload requests
//! (SIGHUP: the config layers, the accounts file, the TLS files), service-manager notifications, and
//! graceful shutdown: connections are told to stop reading, and the server waits until the last
//! one has answered what it had in flight (it holds a completion sender each).
//!
//! Here what a caller starts a server with; `run` the order of it all, `compose` builds the
//! services and binds the listener from the settings, `controller` the controller beside or
//! instead of the NameServer, `accept` runs the accept loops and tracks the connections until
//! they have drained.

mod accept;
mod compose;
mod controller;
mod run;

use std::future::Future;
use std::io;

use thiserror::Error;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::acl::AclError;
use crate::kv::KvError;
use crate::observe::ObserveError;
use crate::settings::{Settings, Sources};
use crate::tls::TlsError;
pub use compose::bind;
use compose::{runs_namesrv, State};
pub use controller::{bind_controller, PeerSecurityError};
use run::Running;

/// Why the server could not start or run.
#[derive(Debug, Error)]
pub enum ServeError {
    /// Binding or accepting failed.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The HTTP endpoint cannot listen.
    #[error(transparent)]
    Http(#[from] ObserveError),
    /// The KV config file cannot be loaded; start-up stops rather than empty it.
    #[error(transparent)]
    Kv(#[from] KvError),
    /// Access control is on and its accounts file does not load.
    #[error(transparent)]
    Acl(#[from] AclError),
    /// TLS is on and its certificate or key does not load.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The controller's Raft state does not load.
    #[error(transparent)]
    Controller(#[from] crate::controller::raft::log::StoreError),
    /// The links between controller peers cannot be protected as the settings ask.
    #[error(transparent)]
    ControllerPeers(#[from] controller::PeerSecurityError),
}

/// The listeners a server serves on, bound by the caller (tests pre-bind them).
#[derive(Debug, Default)]
pub struct Listeners {
    /// The NameServer port; `None` in standalone controller mode.
    pub namesrv: Option<TcpListener>,
    /// The controller port; `None`: bound from the settings when the controller runs.
    pub controller: Option<TcpListener>,
    /// The HTTP endpoint; `None`: bound from the settings.
    pub http: Option<std::net::TcpListener>,
}

/// What the binary adds to serving: the config layers, read again on each reload request.
pub struct Reload {
    /// The layers the settings came from.
    pub sources: Sources,
    /// One message per reload request (SIGHUP).
    pub requests: mpsc::Receiver<()>,
}

/// Serves on `listener` until `shutdown` completes, then drains. Must run inside an actix System.
pub async fn serve(
    settings: Settings,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    serve_with(settings, listener, shutdown, None, None).await
}

/// [`serve`], reloading the configuration on each `reload` request, and telling the service
/// manager (systemd `Type=notify`, when `NOTIFY_SOCKET` is set) when it is ready and stopping.
pub async fn serve_with(
    settings: Settings,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    reload: Option<Reload>,
    http: Option<std::net::TcpListener>,
) -> Result<(), ServeError> {
    let state = State::load(&settings)?;
    let listeners = Listeners { namesrv: Some(listener), controller: None, http };
    serve_loaded(settings, state, listeners, shutdown, reload).await
}

/// [`serve_with`] on the given listeners (tests pre-bind the controller port too).
pub async fn serve_on(
    settings: Settings,
    listeners: Listeners,
    shutdown: impl Future<Output = ()>,
    reload: Option<Reload>,
) -> Result<(), ServeError> {
    let state = State::load(&settings)?;
    serve_loaded(settings, state, listeners, shutdown, reload).await
}

/// [`serve_with`] on the configured address, bound only once the state files have loaded: a
/// peer never reaches a port that a server which cannot start (a corrupt or planted state
/// file) already accepts on.
pub async fn load_bind_serve(
    settings: Settings,
    shutdown: impl Future<Output = ()>,
    reload: Option<Reload>,
) -> Result<(), ServeError> {
    let state = State::load(&settings)?;
    let namesrv = if runs_namesrv(&settings) { Some(bind(&settings)?) } else { None };
    let listeners = Listeners { namesrv, controller: bind_controller(&settings)?, http: None };
    serve_loaded(settings, state, listeners, shutdown, reload).await
}

async fn serve_loaded(
    mut settings: Settings,
    state: State,
    listeners: Listeners,
    shutdown: impl Future<Output = ()>,
    reload: Option<Reload>,
) -> Result<(), ServeError> {
    let Listeners { namesrv, controller, http } = listeners;
    // As Java does for listenPort=0: the port actually bound is the one reported and persisted.
    if let Some(listener) = &namesrv {
        settings.listen.listen_port = listener.local_addr()?.port();
    }
    let controller = match controller {
        Some(listener) => Some(listener),
        None => bind_controller(&settings)?,
    };
    let mut running = Running::start(settings, state, (namesrv, controller, http), reload).await?;
    let connections = running.accept_until(shutdown).await;
    running.stop(connections).await;
    Ok(())
}
