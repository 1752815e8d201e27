//! The order of a server's life: its services started on the loaded state, the route snapshot
//! loaded back (warm restart), the HTTP endpoint and the boot lines, the accept loops until
//! shutdown, then the drain: snapshot, stop accepting, let connections answer what they hold,
//! flush the KV store, stop the controller, the threads.

use std::future::Future;
use std::time::Instant;

use sd_notify::NotifyState;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tracing::{error, info, warn};

use super::accept::{accept_all, io_threads, Connections, Pools};
use super::compose::{Services, State};
use super::{Reload, ServeError};
use crate::config_store::{ConfigHandle, ReloadConfig};
use crate::controller::config::ReloadControllerSettings;
use crate::controller::ControllerHandle;
use crate::filewatch::Poke;
use crate::kv::Flush;
use crate::listen::DRAIN_TIMEOUT;
use crate::metrics::Metrics;
use crate::observe::Observer;
use crate::origin::ConnId;
use crate::settings::{Settings, Sources};
use crate::warm::{final_snapshot, warm_start, SnapshotWriter};

/// The listeners of a running server: the NameServer port, the controller port, the HTTP
/// endpoint's (each when there).
pub(super) type Bound = (Option<TcpListener>, Option<TcpListener>, Option<std::net::TcpListener>);

/// A server between its start and its stop.
pub(super) struct Running {
    settings: Settings,
    services: Services,
    namesrv: Option<TcpListener>,
    controller: Option<TcpListener>,
    /// Writes the route snapshot while serving, when warm restart is on.
    warm: Option<SnapshotWriter>,
    observer: Observer,
    pools: Pools,
}

impl Running {
    /// Starts the services on `state`, loads the route snapshot back, starts the HTTP endpoint
    /// and says the server listens. Must run inside an actix System.
    pub(super) async fn start(
        settings: Settings,
        state: State,
        (namesrv, controller, http): Bound,
        reload: Option<Reload>,
    ) -> Result<Running, ServeError> {
        let (sources, requests) = reload.map(|r| (r.sources, r.requests)).unzip();
        let metrics = if settings.observe.metrics_enabled { Metrics::new() } else { Metrics::off() };
        let services = Services::start(&settings, state, sources.clone(), metrics.clone())?;
        if let (Some(requests), Some(sources)) = (requests, sources) {
            let reloaded = Reloaded {
                config: services.namesrv.as_ref().map(|n| n.config.clone()),
                controller: services.controller.as_ref().map(|c| c.handle.clone()),
                watchers: services.watchers.clone(),
            };
            actix::spawn(forward_reloads(requests, sources, reloaded));
        }
        let warm = match &services.namesrv {
            Some(namesrv) => warm_start(&settings, &namesrv.registry, metrics.clone()).await.writer,
            None => None,
        };
        let observer = Observer::start(&settings, services.handles(), metrics, http)?;
        let pools = Pools {
            namesrv: services.namesrv.as_ref().map(|n| io_threads(settings.connection_threads(), &n.service)),
            controller: services.controller.as_ref().map(|c| io_threads(1, &c.service)),
        };
        let threads = pools.namesrv.as_ref().map_or(0, |p| p.threads());
        info!(io_threads = threads, registry_thread = settings.connection_threads() > 1, "connection threads");
        let running = Running { settings, services, namesrv, controller, warm, observer, pools };
        running.announce();
        Ok(running)
    }

    /// Accepts on every listener until `shutdown`; the open connections, to drain.
    pub(super) async fn accept_until(&mut self, shutdown: impl Future<Output = ()>) -> Vec<Connections> {
        let listeners = (self.namesrv.as_ref(), self.controller.as_ref());
        accept_all(&self.settings, &self.services, listeners, &mut self.pools, shutdown).await
    }

    /// Stops: the route snapshot as the tables stand before our own closes (which are no
    /// broker departures), the controller's serving and electing (nor are they a master's
    /// loss), the HTTP endpoint, the listeners; then every connection answers
    /// what it holds, the KV store is flushed, the controller and the threads stop.
    pub(super) async fn stop(self, connections: Vec<Connections>) {
        let Running { services, namesrv, controller, warm, observer, pools, .. } = self;
        if let Some(namesrv) = &services.namesrv {
            final_snapshot(&namesrv.registry, warm).await;
        }
        notify(&[NotifyState::Stopping]);
        if let Some(controller) = &services.controller {
            controller.retire().await;
        }
        observer.stop().await;
        drop((namesrv, controller));
        info!("shutting down: stopped accepting connections");
        let begin = Instant::now();
        let mut drained = true;
        for connections in connections {
            drained &= connections.drain(DRAIN_TIMEOUT).await;
        }
        let Services { namesrv, controller, .. } = services;
        if let Some(namesrv) = namesrv {
            match namesrv.kv.ask(Flush { conn: ConnId::SERVER }).await {
                Ok(Err(error)) => {
                    warn!(%error, "kv snapshot at shutdown failed; the journal beside it keeps every change")
                }
                Err(error) => warn!(%error, "kv store gone before shutdown"),
                Ok(Ok(())) => {}
            }
            namesrv.stop();
        }
        if let Some(controller) = controller {
            controller.stop().await;
        }
        pools.stop();
        info!(drained, drain_ms = begin.elapsed().as_millis() as u64, "shutdown complete");
    }

    /// Logs the listening addresses and prints the boot lines scripts wait for.
    fn announce(&self) {
        let shown =
            |l: Option<&TcpListener>| l.and_then(|l| l.local_addr().ok()).map_or("off".into(), |a| a.to_string());
        let (namesrv, controller) = (shown(self.namesrv.as_ref()), shown(self.controller.as_ref()));
        let http_addr = self.observer.http_addr().map_or_else(|| "off".to_owned(), |a| a.to_string());
        info!(addr = %namesrv, controller_addr = %controller, http_addr = %http_addr, "listening");
        self.observer.listening();
        if let Some(local) = self.namesrv.as_ref().and_then(|l| l.local_addr().ok()) {
            // The line Java's NamesrvStartup prints once listening, which scripts and containers wait for.
            let bind = &self.settings.listen.bind_address;
            println!("The Name Server boot success. serializeType=JSON, address {bind}:{}", local.port());
        }
        if self.controller.is_some() {
            println!("The controller boot success. address {controller}");
        }
        notify(&[NotifyState::Ready, NotifyState::Status("listening")]);
    }
}

/// What a reload request reaches.
struct Reloaded {
    /// The NameServer's runtime configuration, when it runs.
    config: Option<ConfigHandle>,
    /// The controller, when it runs.
    controller: Option<ControllerHandle>,
    /// The watchers of the accounts and TLS files.
    watchers: Vec<Poke>,
}

/// Once per request: the watchers of the accounts and TLS files are poked, the config sources
/// read again (once), and the settings they give handed to the config store and the controller;
/// sources that no longer load change nothing.
async fn forward_reloads(mut requests: mpsc::Receiver<()>, sources: Sources, reloaded: Reloaded) {
    while requests.recv().await.is_some() {
        info!("reload requested");
        for watcher in &reloaded.watchers {
            watcher.poke();
        }
        let loaded = match sources.load() {
            Ok(loaded) => Box::new(loaded),
            Err(error) => {
                error!(%error, "reload failed; settings unchanged");
                continue;
            }
        };
        if let Some(controller) = &reloaded.controller {
            controller.tell(ReloadControllerSettings { conn: ConnId::SERVER, loaded: loaded.clone() });
        }
        if let Some(config) = &reloaded.config {
            let _ = config.ask(ReloadConfig { conn: ConnId::SERVER, loaded }).await;
        }
    }
}

/// sd_notify(3): a no-op unless `NOTIFY_SOCKET` is set; a failure is only logged.
fn notify(state: &[NotifyState]) {
    if let Err(error) = sd_notify::notify(state) {
        warn!(%error, "cannot notify the service manager");
    }
}
