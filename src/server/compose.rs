//! Composition: the state read before binding, the remoting listener, and the services behind
//! the listeners, each built from the settings: the NameServer (its registry, KV and config
//! stores, and the service its port serves) unless this is a standalone controller, and the
//! controller when it runs. Both sit behind one admission gate and share the connections'
//! limits and budgets.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix::Arbiter;
use tokio::net::TcpListener;
use tracing::info;

use super::controller::RunningController;
use super::ServeError;
use crate::acl::Acl;
use crate::admission::Gate;
use crate::config_store::{ConfigHandle, ConfigStore};
use crate::connection::flow::{FlowLimits, ReplyBudget};
use crate::connection::frames::FrameBudget;
use crate::connection::ConnectionContext;
use crate::controller::{ControllerHandle, ControllerOptions, ControllerStore};
use crate::filewatch::Poke;
use crate::kv::journal::KvFiles;
use crate::kv::{self, KvHandle, KvLimits, KvStore, KvTable};
use crate::listen;
use crate::metrics::Metrics;
use crate::notifier::{Notifier, NotifierHandle, NotifyLimits};
use crate::peers::{Kind, Shares};
use crate::protocol::RemotingCodec;
use crate::registry::options::RegistryOptions;
use crate::registry::{RegistryHandle, RouteRegistry};
use crate::service::namesrv::session::NamesrvService;
use crate::service::namesrv::{Actors, DispatchOptions, Dispatcher};
use crate::settings::{ControllerMode, Settings, Sources};
use crate::tls::Tls;

/// Binds the configured remoting address (see [`listen::bind_addrs`]).
pub fn bind(settings: &Settings) -> io::Result<TcpListener> {
    let shown = format!("{}:{}", settings.listen.bind_address, settings.listen.listen_port);
    let addrs = settings
        .listen_addrs()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad listen address {shown}: {e}")))?;
    TcpListener::from_std(listen::bind_addrs(&shown, addrs)?)
}

/// Whether the NameServer runs: everywhere but a standalone controller.
pub(super) fn runs_namesrv(settings: &Settings) -> bool {
    settings.controller.controller_mode != ControllerMode::Standalone
}

/// What start-up reads from the state directory before anything is bound.
pub(super) struct State {
    /// The KV files and the table they hold, when the NameServer runs.
    pub(super) kv: Option<(KvFiles, KvTable)>,
    /// The controller's options and Raft state, when it runs.
    pub(super) controller: Option<(ControllerOptions, ControllerStore)>,
}

impl State {
    /// Loads the KV file (a corrupt, oversized or planted one stops start-up) when the
    /// NameServer runs, and the controller's state when it does.
    pub(super) fn load(settings: &Settings) -> Result<State, ServeError> {
        let kv = match runs_namesrv(settings) {
            true => {
                let kv_path = PathBuf::from(&settings.state.kv_config_path);
                let kv = kv::open(&kv_path, settings.limits.kv_max_store_bytes)?;
                info!(path = %kv_path.display(), namespaces = kv.1.len(), "kv config loaded");
                Some(kv)
            }
            false => None,
        };
        let controller = super::controller::load(settings)?;
        Ok(State { kv, controller })
    }
}

/// The NameServer: its actors and the service its port serves.
pub(super) struct Namesrv {
    /// What its connections are served by.
    pub(super) service: NamesrvService,
    /// Route state.
    pub(super) registry: RegistryHandle,
    /// The KV store, flushed at shutdown.
    pub(super) kv: KvHandle,
    /// The runtime configuration, told to reload.
    pub(super) config: ConfigHandle,
    /// The thread of the KV and config stores.
    storage: Arbiter,
    /// The registry's own thread, when connections run on several.
    registry_thread: Option<Arbiter>,
}

impl Namesrv {
    /// Starts the registry, the KV and config stores on the loaded KV files, and the service.
    fn start(
        settings: &Settings,
        kv_files: (KvFiles, KvTable),
        sources: Option<Sources>,
        (gate, notifier): (&Arc<Gate>, NotifierHandle),
        metrics: &Arc<Metrics>,
    ) -> Namesrv {
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
        let dispatcher = Dispatcher::new(actors, DispatchOptions::from(settings), gate.clone());
        let service = NamesrvService::new(dispatcher, registry.clone());
        Namesrv { service, registry, kv, config, storage, registry_thread }
    }

    /// Stops the stores' thread and the registry's.
    pub(super) fn stop(self) {
        self.storage.stop();
        if let Some(registry) = self.registry_thread {
            registry.stop();
            let _ = registry.join();
        }
    }
}

/// The services behind the connections.
pub(super) struct Services {
    /// What every connection gets: limits, budgets, deadlines.
    pub(super) context: ConnectionContext,
    /// The NameServer, unless this is a standalone controller.
    pub(super) namesrv: Option<Namesrv>,
    /// TLS, when on.
    pub(super) tls: Option<Arc<Tls>>,
    /// Reload the accounts file and the TLS files; dropped at shutdown, which ends their threads.
    pub(super) watchers: Vec<Poke>,
    /// The controller, when it runs.
    pub(super) controller: Option<RunningController>,
}

impl Services {
    /// Starts every actor on the loaded state.
    pub(super) fn start(
        settings: &Settings,
        state: State,
        sources: Option<Sources>,
        metrics: Arc<Metrics>,
    ) -> Result<Self, ServeError> {
        let limits = NotifyLimits {
            max_in_flight: settings.routing.notify_max_in_flight,
            max_per_second: settings.routing.notify_max_per_second,
        };
        let notifier = Notifier::start(settings.listen.response_version, limits, metrics.clone());
        let mut watchers = Vec::new();
        let acl = match settings.acl.acl_enabled {
            true => {
                let (acl, poke) = Acl::start(settings, metrics.clone())?;
                watchers.push(poke);
                Some(Arc::new(acl))
            }
            false => None,
        };
        let gate = Arc::new(Gate::new(acl, settings));
        let tls = Tls::start(settings, metrics.clone())?.map(|(tls, poke)| {
            watchers.push(poke);
            tls
        });
        let namesrv = state.kv.map(|kv| Namesrv::start(settings, kv, sources, (&gate, notifier.clone()), &metrics));
        let controller = state
            .controller
            .map(|loaded| RunningController::start(loaded, &gate, notifier, settings, metrics.clone()))
            .transpose()?;
        let context = connection_context(settings, metrics);
        Ok(Services { context, namesrv, tls, watchers, controller })
    }

    /// The registry (when the NameServer runs) and the controller (when it runs), as the HTTP
    /// endpoint asks them.
    pub(super) fn handles(&self) -> (Option<RegistryHandle>, Option<ControllerHandle>) {
        (self.namesrv.as_ref().map(|n| n.registry.clone()), self.controller.as_ref().map(|c| c.handle.clone()))
    }
}

/// What every connection shares: the codec, the budgets and the deadlines.
fn connection_context(settings: &Settings, metrics: Arc<Metrics>) -> ConnectionContext {
    ConnectionContext {
        codec: RemotingCodec::new(settings.limits.max_frame_bytes),
        frame_budget: FrameBudget::new(Kind::Frames, settings.limits.frame_budget_bytes, shares(settings)),
        frame_timeout: Duration::from_secs(settings.limits.frame_receive_timeout_secs),
        idle_timeout: Duration::from_secs(settings.listen.idle_timeout_secs),
        first_byte_timeout: Duration::from_millis(settings.limits.first_byte_timeout_ms),
        frame_progress_timeout: Duration::from_millis(settings.limits.frame_progress_timeout_ms),
        reply_drain_timeout: Duration::from_millis(settings.limits.reply_drain_timeout_ms),
        flow_limits: FlowLimits {
            high_bytes: settings.limits.write_buffer_high_bytes,
            low_bytes: settings.limits.write_buffer_low_bytes,
            max_in_flight: settings.limits.max_in_flight_per_connection,
            max_bytes: settings.limits.write_buffer_max_bytes,
        },
        reply_budget: ReplyBudget::new(Kind::Replies, settings.limits.reply_budget_bytes, shares(settings)),
        metrics,
        slow_request: Duration::from_millis(settings.observe.slow_request_ms),
    }
}

/// How the budgets and connection slots are shared out among source addresses.
pub(super) fn shares(settings: &Settings) -> Shares {
    Shares {
        peer_percent: settings.limits.peer_share_percent,
        broker_reserve_percent: settings.limits.broker_reserve_percent,
    }
}
