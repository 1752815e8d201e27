//! Start-up of the actors, binding (IPv4, IPv6, dual-stack `::`), the accept loop (one
//! `Connection` actor per socket, behind TLS when it is on), access control, reload requests
//! (SIGHUP: the config layers, the accounts file, the TLS files), service-manager notifications, and
//! graceful shutdown: connections are told to stop reading, and the server waits until the last
//! one has answered what it had in flight (it holds a completion sender each).

use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::Arbiter;
use sd_notify::NotifyState;
use thiserror::Error;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc};
use tracing::{info, warn};

use crate::acl::{Acl, AclError};
use crate::config_store::{ConfigHandle, ConfigStore, ReloadConfig};
use crate::connection::flow::{FlowLimits, ReplyBudget};
use crate::connection::frames::FrameBudget;
use crate::connection::{Connection, ConnectionContext, Lifecycle};
use crate::dispatch::{Actors, DispatchOptions, Dispatcher};
use crate::filewatch::Poke;
use crate::io_pool::IoPool;
use crate::kv::journal::KvFiles;
use crate::kv::{self, Flush, KvError, KvHandle, KvLimits, KvStore, KvTable};
use crate::listen::{self, AcceptGate};
use crate::mailbox::{ConnId, Origin};
use crate::metrics::Metrics;
use crate::notifier::{Notifier, NotifyLimits};
use crate::observe::{ObserveError, Observer};
use crate::protocol::RemotingCodec;
use crate::registry::options::RegistryOptions;
use crate::registry::snapshot_file::{final_snapshot, warm_start};
use crate::registry::RouteRegistry;
use crate::settings::{Settings, Sources};
use crate::tls::{Accepted, Tls, TlsError};

/// How long shutdown waits for connections to answer what they have in flight.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

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
}

/// Binds the configured remoting address (see [`listen::bind_addrs`]).
pub fn bind(settings: &Settings) -> io::Result<TcpListener> {
    let shown = format!("{}:{}", settings.listen.bind_address, settings.listen.listen_port);
    let addrs = settings
        .listen_addrs()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad listen address {shown}: {e}")))?;
    TcpListener::from_std(listen::bind_addrs(&shown, addrs)?)
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
    serve_loaded(settings, state, listener, shutdown, reload, http).await
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
    let listener = bind(&settings)?;
    serve_loaded(settings, state, listener, shutdown, reload, None).await
}

/// What start-up reads from the state directory before anything is bound.
struct State {
    /// The KV files and the table they hold.
    kv: (KvFiles, KvTable),
}

impl State {
    /// Loads the KV file (a corrupt, oversized or planted one stops start-up).
    fn load(settings: &Settings) -> Result<State, ServeError> {
        let kv_path = PathBuf::from(&settings.state.kv_config_path);
        let kv = kv::open(&kv_path, settings.limits.kv_max_store_bytes)?;
        info!(path = %kv_path.display(), namespaces = kv.1.len(), "kv config loaded");
        Ok(State { kv })
    }
}

async fn serve_loaded(
    mut settings: Settings,
    state: State,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    reload: Option<Reload>,
    http: Option<std::net::TcpListener>,
) -> Result<(), ServeError> {
    // As Java does for listenPort=0: the port actually bound is the one reported and persisted.
    settings.listen.listen_port = listener.local_addr()?.port();
    let (sources, requests) = reload.map(|r| (r.sources, r.requests)).unzip();
    let metrics = settings.observe.metrics_enabled.then(Metrics::new);
    let services = Services::start(&settings, state, sources, metrics.clone())?;
    if let Some(requests) = requests {
        actix::spawn(forward_reloads(requests, services.config.clone(), services.watchers.clone()));
    }
    let warm = warm_start(&settings, &services.context.registry).await;
    // Routes are served at once from a loaded snapshot: no readiness wait either.
    let wait = settings.routing.need_wait_for_service && warm.loaded == 0;
    let mut observed = settings.clone();
    observed.routing.need_wait_for_service = wait;
    let observer = Observer::start(&observed, services.context.registry.clone(), metrics, http)?;
    let local = listener.local_addr()?;
    let http_addr = observer.http_addr().map_or_else(|| "off".to_owned(), |a| a.to_string());
    info!(addr = %local, http_addr = %http_addr, "listening");
    observer.listening();
    // The line Java's NamesrvStartup prints once listening, which scripts and containers wait for.
    println!(
        "The Name Server boot success. serializeType=JSON, address {}:{}",
        settings.listen.bind_address,
        local.port()
    );
    notify(&[NotifyState::Ready, NotifyState::Status("listening")]);
    let mut pool = IoPool::new(settings.connection_threads());
    info!(io_threads = pool.threads(), registry_thread = services.registry_thread.is_some(), "connection threads");
    let accept = Accept { context: services.context.clone(), tls: services.tls.clone() };
    let gate = AcceptGate::new(listen::connection_limit(settings.limits.max_connections));
    let connections = accept_until(&listener, &mut pool, accept, gate, shutdown).await;
    // The tables as they stand before our own closes, which are no broker departures.
    final_snapshot(&services.context.registry, warm.writer).await;
    notify(&[NotifyState::Stopping]);
    observer.stop().await;
    drop(listener);
    info!("shutting down: stopped accepting connections");
    let begin = Instant::now();
    let drained = connections.drain(DRAIN_TIMEOUT).await;
    match services.kv.ask(Flush { conn: ConnId(0) }).await {
        Ok(Err(error)) => warn!(%error, "kv snapshot at shutdown failed; the journal beside it keeps every change"),
        Err(error) => warn!(%error, "kv store gone before shutdown"),
        Ok(Ok(())) => {}
    }
    services.storage.stop();
    pool.stop();
    if let Some(registry) = services.registry_thread {
        registry.stop();
        let _ = registry.join();
    }
    info!(drained, drain_ms = begin.elapsed().as_millis() as u64, "shutdown complete");
    Ok(())
}

/// Tells the config store, and the watchers of the accounts and TLS files, to reload once per
/// request.
async fn forward_reloads(mut requests: mpsc::Receiver<()>, config: ConfigHandle, watchers: Vec<Poke>) {
    while requests.recv().await.is_some() {
        info!("reload requested");
        for watcher in &watchers {
            watcher.poke();
        }
        let _ = config.ask(ReloadConfig { conn: ConnId(0) }).await;
    }
}

/// sd_notify(3): a no-op unless `NOTIFY_SOCKET` is set; a failure is only logged.
fn notify(state: &[NotifyState]) {
    if let Err(error) = sd_notify::notify(state) {
        warn!(%error, "cannot notify the service manager");
    }
}

/// The actors behind the connections.
struct Services {
    /// What every connection gets.
    context: ConnectionContext,
    /// The KV store, flushed at shutdown.
    kv: KvHandle,
    /// The runtime configuration, told to reload.
    config: ConfigHandle,
    /// The thread of the KV and config stores.
    storage: Arbiter,
    /// The registry's own thread, when connections run on several.
    registry_thread: Option<Arbiter>,
    /// TLS, when on.
    tls: Option<Arc<Tls>>,
    /// Reload the accounts file and the TLS files; dropped at shutdown, which ends their threads.
    watchers: Vec<Poke>,
}

impl Services {
    /// Starts every actor on the loaded state.
    fn start(
        settings: &Settings,
        state: State,
        sources: Option<Sources>,
        metrics: Option<Arc<Metrics>>,
    ) -> Result<Self, ServeError> {
        let kv_files = state.kv;
        let limits = NotifyLimits {
            max_in_flight: settings.routing.notify_max_in_flight,
            max_per_second: settings.routing.notify_max_per_second,
        };
        let notifier = Notifier::start(settings.listen.response_version, limits, metrics.clone());
        let scan_interval = Duration::from_millis(settings.routing.scan_interval_ms);
        let options = RegistryOptions::from(settings);
        let registry_thread = (settings.connection_threads() > 1).then(Arbiter::new);
        let registry = match &registry_thread {
            Some(thread) => {
                RouteRegistry::start_on(&thread.handle(), options, scan_interval, notifier, metrics.clone())
            }
            None => RouteRegistry::start(options, scan_interval, notifier, metrics.clone()),
        };
        let storage = Arbiter::new();
        let (max_kv, handle) = (KvLimits::from(settings), storage.handle());
        let kv = KvStore::start(kv_files, max_kv, registry.clone(), &handle, metrics.clone());
        let config = ConfigStore::start(settings.clone(), sources, registry.clone(), &handle, metrics.clone());
        let actors = Actors { registry: registry.clone(), kv: kv.clone(), config: config.clone() };
        let mut dispatcher = Dispatcher::new(actors, DispatchOptions::from(settings));
        let mut watchers = Vec::new();
        if settings.acl.acl_enabled {
            let (acl, poke) = Acl::start(settings, metrics.clone())?;
            dispatcher = dispatcher.with_acl(Arc::new(acl));
            watchers.push(poke);
        }
        let tls = Tls::start(settings, metrics.clone())?.map(|(tls, poke)| {
            watchers.push(poke);
            tls
        });
        let context = ConnectionContext {
            dispatcher,
            registry,
            codec: RemotingCodec::new(settings.limits.max_frame_bytes),
            frame_budget: FrameBudget::new(settings.limits.frame_budget_bytes),
            frame_timeout: Duration::from_secs(settings.limits.frame_receive_timeout_secs),
            idle_timeout: Duration::from_secs(settings.listen.idle_timeout_secs),
            flow_limits: FlowLimits {
                high_bytes: settings.limits.write_buffer_high_bytes,
                low_bytes: settings.limits.write_buffer_low_bytes,
                max_in_flight: settings.limits.max_in_flight_per_connection,
                max_bytes: settings.limits.write_buffer_max_bytes,
            },
            reply_budget: ReplyBudget::new(settings.limits.reply_budget_bytes),
            metrics,
            slow_request: Duration::from_millis(settings.observe.slow_request_ms),
        };
        Ok(Services { context, kv, config, storage, registry_thread, tls, watchers })
    }
}

/// The open connections, as the server sees them at shutdown.
struct Connections {
    /// Tells every connection to stop reading.
    stop: broadcast::Sender<()>,
    /// Cloned into every connection.
    done: mpsc::Sender<()>,
    /// Closes when the last connection is gone.
    all_done: mpsc::Receiver<()>,
}

impl Connections {
    fn new() -> Self {
        let (stop, _) = broadcast::channel(1);
        let (done, all_done) = mpsc::channel(1);
        Connections { stop, done, all_done }
    }

    /// How many connections are open (each holds a `done` sender until it ends; a TLS
    /// handshake counts from its accept).
    fn open(&self) -> usize {
        self.done.strong_count().saturating_sub(1)
    }

    /// What a new connection holds.
    fn lifecycle(&self) -> Lifecycle {
        Lifecycle { stop: self.stop.subscribe(), done: self.done.clone() }
    }

    /// Tells every connection to stop reading and waits, at most `timeout`, until each has
    /// answered its requests in flight and closed. Returns whether all did.
    async fn drain(mut self, timeout: Duration) -> bool {
        let _ = self.stop.send(());
        drop(self.done);
        tokio::time::timeout(timeout, self.all_done.recv()).await.is_ok()
    }
}

/// What the accept loop hands each socket to.
#[derive(Clone)]
struct Accept {
    /// What every connection gets.
    context: ConnectionContext,
    /// TLS, when on: it sees each socket first.
    tls: Option<Arc<Tls>>,
}

impl Accept {
    /// Starts the connection of an accepted socket; with TLS on, once TLS is done with it (in a
    /// task of its own, so a slow handshake holds up nothing else). The lifecycle is taken now,
    /// so a shutdown during the handshake still reaches the connection.
    fn start(&self, stream: tokio::net::TcpStream, origin: Origin, lifecycle: Lifecycle) {
        let context = self.context.clone();
        let Some(tls) = self.tls.clone() else {
            let (read, write) = stream.into_split();
            Connection::start(read, write, origin, context, lifecycle);
            return;
        };
        actix::spawn(async move {
            match tls.accept(stream, origin.peer).await {
                Some(Accepted::Plain(stream)) => {
                    let (read, write) = stream.into_split();
                    Connection::start(read, write, origin, context, lifecycle);
                }
                Some(Accepted::Tls(stream)) => {
                    let (read, write) = tokio::io::split(*stream);
                    Connection::start(read, write, origin, context, lifecycle);
                }
                None => {}
            }
        });
    }
}

/// Accepts connections, one `Connection` actor each on the pool's threads in turn, until
/// `shutdown` completes; `gate` closes those over the connection limit and paces failed accepts.
async fn accept_until(
    listener: &TcpListener,
    pool: &mut IoPool,
    accept: Accept,
    mut gate: AcceptGate,
    shutdown: impl Future<Output = ()>,
) -> Connections {
    let connections = Connections::new();
    tokio::pin!(shutdown);
    let mut next_id = 0u64;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    if !gate.admit(connections.open(), peer) {
                        continue;
                    }
                    next_id += 1;
                    let _ = stream.set_nodelay(true);
                    let origin = Origin { conn: ConnId(next_id), peer };
                    let (accept, lifecycle) = (accept.clone(), connections.lifecycle());
                    pool.start(stream, peer, move |stream| accept.start(stream, origin, lifecycle));
                }
                Err(error) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    let pause = gate.failed(&error);
                    tokio::select! {
                        _ = tokio::time::sleep(pause) => {}
                        _ = &mut shutdown => return connections,
                    }
                }
            },
            _ = &mut shutdown => return connections,
        }
    }
}
