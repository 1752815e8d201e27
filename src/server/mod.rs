//! Start-up of the actors, binding (IPv4, IPv6, dual-stack `::`), the accept loop (one
//! `Connection` actor per socket, behind TLS when it is on), access control, reload requests
//! (SIGHUP: the config layers, the accounts file, the TLS files), service-manager notifications, and
//! graceful shutdown: connections are told to stop reading, and the server waits until the last
//! one has answered what it had in flight (it holds a completion sender each).
//!
//! Here the order of it all; `compose` builds the actors and binds the listener from the
//! settings, `accept` runs the accept loop and tracks the connections until they have drained.

mod accept;
mod compose;
mod controller;

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Instant;

use sd_notify::NotifyState;
use thiserror::Error;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tracing::{info, warn};

use crate::acl::AclError;
use crate::config_store::{ConfigHandle, ReloadConfig};
use crate::filewatch::Poke;
use crate::kv::{Flush, KvError};
use crate::listen::{self, AcceptGate};
use crate::metrics::Metrics;
use crate::observe::{ObserveError, Observer};
use crate::origin::ConnId;
use crate::peers::Peers;
use crate::settings::{Settings, Sources};
use crate::tls::TlsError;
use crate::warm::{final_snapshot, warm_start};

use std::rc::Rc;

use crate::dispatch::batch::RouteBatcher;
use crate::io_pool::IoPool;
use crate::listen::DRAIN_TIMEOUT;
use accept::{accept_until, io_threads, Accept};
pub use compose::bind;
use compose::{Services, State};
pub use controller::{bind_controller, PeerSecurityError};

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
    let standalone = settings.controller.controller_mode == crate::settings::ControllerMode::Standalone;
    let namesrv = if standalone { None } else { Some(bind(&settings)?) };
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
    let (sources, requests) = reload.map(|r| (r.sources, r.requests)).unzip();
    let metrics = if settings.observe.metrics_enabled { Metrics::new() } else { Metrics::off() };
    let mut services = Services::start(&settings, state, sources, metrics.clone())?;
    if let Some(requests) = requests {
        actix::spawn(forward_reloads(requests, services.config.clone(), services.watchers.clone()));
    }
    let warm = warm_start(&settings, &services.context.registry, metrics.clone()).await;
    let observer = Observer::start(&settings, services.handles(), metrics, http)?;
    announce(&settings, &namesrv, &controller, &observer);
    let mut pools = (
        io_threads(settings.connection_threads(), &services.context.registry),
        io_threads(1, &services.context.registry),
    );
    info!(io_threads = pools.0.threads(), registry_thread = services.registry_thread.is_some(), "connection threads");
    let connections = accept_all(&settings, &services, (&namesrv, &controller), &mut pools, shutdown).await;
    // The tables as they stand before our own closes, which are no broker departures.
    final_snapshot(&services.context.registry, warm.writer).await;
    notify(&[NotifyState::Stopping]);
    observer.stop().await;
    drop((namesrv, controller));
    info!("shutting down: stopped accepting connections");
    let begin = Instant::now();
    let mut drained = true;
    for connections in connections.into_iter().flatten() {
        drained &= connections.drain(DRAIN_TIMEOUT).await;
    }
    match services.kv.ask(Flush { conn: ConnId::SERVER }).await {
        Ok(Err(error)) => warn!(%error, "kv snapshot at shutdown failed; the journal beside it keeps every change"),
        Err(error) => warn!(%error, "kv store gone before shutdown"),
        Ok(Ok(())) => {}
    }
    if let Some(controller) = services.controller.take() {
        controller.stop().await;
    }
    services.storage.stop();
    pools.0.stop();
    pools.1.stop();
    if let Some(registry) = services.registry_thread {
        registry.stop();
        let _ = registry.join();
    }
    info!(drained, drain_ms = begin.elapsed().as_millis() as u64, "shutdown complete");
    Ok(())
}

/// Logs the listening addresses and prints the boot lines scripts wait for.
fn announce(settings: &Settings, namesrv: &Option<TcpListener>, controller: &Option<TcpListener>, observer: &Observer) {
    let shown =
        |l: &Option<TcpListener>| l.as_ref().and_then(|l| l.local_addr().ok()).map_or("off".into(), |a| a.to_string());
    let http_addr = observer.http_addr().map_or_else(|| "off".to_owned(), |a| a.to_string());
    info!(addr = %shown(namesrv), controller_addr = %shown(controller), http_addr = %http_addr, "listening");
    observer.listening();
    if let Some(local) = namesrv.as_ref().and_then(|l| l.local_addr().ok()) {
        // The line Java's NamesrvStartup prints once listening, which scripts and containers wait for.
        println!(
            "The Name Server boot success. serializeType=JSON, address {}:{}",
            settings.listen.bind_address,
            local.port()
        );
    }
    if controller.is_some() {
        println!("The controller boot success. address {}", shown(controller));
    }
    notify(&[NotifyState::Ready, NotifyState::Status("listening")]);
}

/// Accepts on the NameServer port and the controller port (each when there) until `shutdown`;
/// their open connections, to drain.
/// How many descriptors the HTTP endpoint may hold: none when it is off.
fn http_connections(settings: &Settings) -> usize {
    if settings.observe.http_listen.trim().is_empty() {
        0
    } else {
        settings.observe.http_max_connections
    }
}

async fn accept_all(
    settings: &Settings,
    services: &Services,
    (namesrv, controller): (&Option<TcpListener>, &Option<TcpListener>),
    (pool, controller_pool): &mut (IoPool<Rc<RouteBatcher>>, IoPool<Rc<RouteBatcher>>),
    shutdown: impl Future<Output = ()>,
) -> [Option<accept::Connections>; 2] {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|s| *s).await;
    };
    // One table of source addresses for both listeners: an address's share is of the whole.
    let peers = Arc::new(Peers::default());
    let limit = listen::connection_limit(settings.limits.max_connections, http_connections(settings));
    let gate = || AcceptGate::new(limit, compose::shares(settings), peers.clone());
    let namesrv_loop = async {
        let listener = namesrv.as_ref()?;
        let accept = Accept { context: services.context.clone(), tls: services.tls.clone(), first_id: 0 };
        Some(accept_until(listener, pool, accept, gate(), until(stopped.clone())).await)
    };
    let controller_loop = async {
        let (Some(listener), Some(running)) = (controller, &services.controller) else { return None };
        let accept =
            Accept { context: running.context.clone(), tls: services.tls.clone(), first_id: CONTROLLER_CONN_IDS };
        Some(accept_until(listener, controller_pool, accept, gate(), until(stopped.clone())).await)
    };
    let signal = async {
        shutdown.await;
        let _ = stop.send(true);
    };
    let ((), namesrv_conns, controller_conns) = tokio::join!(signal, namesrv_loop, controller_loop);
    [namesrv_conns, controller_conns]
}

/// Where the controller listener's connection ids start, apart from the NameServer port's.
const CONTROLLER_CONN_IDS: u64 = 1 << 48;

/// Tells the config store, and the watchers of the accounts and TLS files, to reload once per
/// request.
async fn forward_reloads(mut requests: mpsc::Receiver<()>, config: ConfigHandle, watchers: Vec<Poke>) {
    while requests.recv().await.is_some() {
        info!("reload requested");
        for watcher in &watchers {
            watcher.poke();
        }
        let _ = config.ask(ReloadConfig { conn: ConnId::SERVER }).await;
    }
}

/// sd_notify(3): a no-op unless `NOTIFY_SOCKET` is set; a failure is only logged.
fn notify(state: &[NotifyState]) {
    if let Err(error) = sd_notify::notify(state) {
        warn!(%error, "cannot notify the service manager");
    }
}
