//! Composition: the state read before binding, the remoting listener, and every actor behind
//! the connections, each built from the settings.

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
use crate::config_store::{ConfigHandle, ConfigStore};
use crate::connection::flow::{FlowLimits, ReplyBudget};
use crate::connection::frames::FrameBudget;
use crate::connection::ConnectionContext;
use crate::controller::{ControllerHandle, ControllerOptions, ControllerStore};
use crate::dispatch::{Actors, DispatchOptions, Dispatcher};
use crate::filewatch::Poke;
use crate::kv::journal::KvFiles;
use crate::kv::{self, KvHandle, KvLimits, KvStore, KvTable};
use crate::listen;
use crate::mailbox::Mailbox;
use crate::metrics::Metrics;
use crate::notifier::{Notifier, NotifyLimits};
use crate::peers::{Kind, Shares};
use crate::protocol::RemotingCodec;
use crate::registry::options::RegistryOptions;
use crate::registry::{RegistryHandle, RouteRegistry};
use crate::settings::{Settings, Sources};
use crate::tls::Tls;

/// Binds the configured remoting address (see [`listen::bind_addrs`]).
pub fn bind(settings: &Settings) -> io::Result<TcpListener> {
    let shown = format!("{}:{}", settings.listen.bind_address, settings.listen.listen_port);
    let addrs = settings
        .listen_addrs()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad listen address {shown}: {e}")))?;
    TcpListener::from_std(listen::bind_addrs(&shown, addrs)?)
}

/// What start-up reads from the state directory before anything is bound.
pub(super) struct State {
    /// The KV files and the table they hold.
    pub(super) kv: (KvFiles, KvTable),
    /// The controller's options and Raft state, when it runs.
    pub(super) controller: Option<(ControllerOptions, ControllerStore)>,
}

impl State {
    /// Loads the KV file (a corrupt, oversized or planted one stops start-up).
    pub(super) fn load(settings: &Settings) -> Result<State, ServeError> {
        let kv_path = PathBuf::from(&settings.state.kv_config_path);
        let kv = kv::open(&kv_path, settings.limits.kv_max_store_bytes)?;
        info!(path = %kv_path.display(), namespaces = kv.1.len(), "kv config loaded");
        let controller = super::controller::load(settings)?;
        Ok(State { kv, controller })
    }
}

/// The actors behind the connections.
pub(super) struct Services {
    /// What every connection gets.
    pub(super) context: ConnectionContext,
    /// The KV store, flushed at shutdown.
    pub(super) kv: KvHandle,
    /// The runtime configuration, told to reload.
    pub(super) config: ConfigHandle,
    /// The thread of the KV and config stores.
    pub(super) storage: Arbiter,
    /// The registry's own thread, when connections run on several.
    pub(super) registry_thread: Option<Arbiter>,
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
        let kv_files = state.kv;
        let limits = NotifyLimits {
            max_in_flight: settings.routing.notify_max_in_flight,
            max_per_second: settings.routing.notify_max_per_second,
        };
        let notifier = Notifier::start(settings.listen.response_version, limits, metrics.clone());
        let controller_notifier = notifier.clone();
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
        let context = connection_context(settings, dispatcher, registry, metrics.clone());
        let controller = state
            .controller
            .map(|loaded| RunningController::start(loaded, &context, controller_notifier, settings, metrics))
            .transpose()?;
        Ok(Services { context, kv, config, storage, registry_thread, tls, watchers, controller })
    }
}

impl Services {
    /// The registry and (when it runs) the controller, as the HTTP endpoint asks them.
    pub(super) fn handles(&self) -> (RegistryHandle, Option<ControllerHandle>) {
        (self.context.registry.clone(), self.controller.as_ref().map(|c| c.handle.clone()))
    }
}

/// What every connection shares: the dispatcher, the registry, the codec, the budgets and the
/// deadlines.
fn connection_context(
    settings: &Settings,
    dispatcher: Dispatcher,
    registry: Mailbox<RouteRegistry>,
    metrics: Arc<Metrics>,
) -> ConnectionContext {
    ConnectionContext {
        dispatcher,
        registry,
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
        metrics: metrics.clone(),
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
