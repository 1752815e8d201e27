//! The runtime configuration (Java's `NamesrvConfig`, `NettyServerConfig`): the `ConfigStore` actor owns the effective
//! settings, answers GET_NAMESRV_CONFIG, applies UPDATE_NAMESRV_CONFIG — refusing blacklisted
//! keys, persisting the changed keys atomically where the next start reads them, and pushing
//! runtime keys to the registry — and reloads the config layers on SIGHUP (`ReloadConfig`).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use actix::prelude::*;
use thiserror::Error;
use tracing::{error, info, warn};

use crate::mailbox::{Apply, Mailbox};
use crate::metrics::Metrics;
use crate::origin::ConnId;
use crate::persist::write_atomically;
use crate::registry::messages::ApplyOptions;
use crate::registry::options::RegistryOptions;
use crate::registry::RegistryHandle;
use crate::settings::{
    canonical_key, overrides, properties, pruned_store_text, updated_store_text, Changed, PersistError, Settings,
    SettingsError, Sources, Update, UpdateError, UpdateScope,
};
use crate::{logged_handler, request};

/// Why an update was not applied.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// A refused key or a bad value.
    #[error(transparent)]
    Update(#[from] UpdateError),
    /// The new settings could not be made durable; nothing changed.
    #[error("cannot write config store {path}: {error}")]
    Write { path: String, error: std::io::Error },
    /// The config store file holds something that cannot be kept; nothing changed.
    #[error(transparent)]
    Store(#[from] PersistError),
}

/// The configuration actor.
pub struct ConfigStore {
    settings: Settings,
    /// The layers to read again on `ReloadConfig` (none for a server started from settings).
    sources: Option<Sources>,
    registry: RegistryHandle,
    /// Counts accepted and refused updates.
    metrics: Arc<Metrics>,
}

/// The config store's address, counting queued messages.
pub type ConfigHandle = Mailbox<ConfigStore>;

impl ConfigStore {
    /// Starts the actor on the given arbiter (disk writes stay off the registry's thread).
    pub fn start(
        settings: Settings,
        sources: Option<Sources>,
        registry: RegistryHandle,
        arbiter: &ArbiterHandle,
        metrics: Arc<Metrics>,
    ) -> ConfigHandle {
        let store = ConfigStore { settings, sources, registry, metrics: metrics.clone() };
        Mailbox::new(ConfigStore::start_in_arbiter(arbiter, |_| store), "config", metrics)
    }
}

impl Actor for ConfigStore {
    type Context = Context<Self>;

    /// Drops the runtime updates the config files changed since from the store, before any request.
    fn started(&mut self, _ctx: &mut Context<Self>) {
        self.reconcile();
    }
}

logged_handler!(ConfigStore);

/// GET_NAMESRV_CONFIG; answers every setting as sorted `key=value` lines, with the Java
/// NameServer's remoting keys (see [`config_view`]).
#[derive(Debug)]
pub struct GetConfig {
    pub conn: ConnId,
}
request!(GetConfig, String, query);

impl Apply<ConfigStore> for GetConfig {
    fn apply(self, store: &mut ConfigStore) -> String {
        properties::write(&config_view(&store.settings))
    }
}

/// Every setting (under Java's name where there is one), and the keys of Java's
/// `NettyServerConfig` and `NamesrvConfig` that tools and dashboards read from a Java NameServer,
/// each with what describes this server: the connection threads for Java's selector and worker
/// threads, the real listen backlog, 0 (the OS default) for socket buffers, which are never set,
/// the reply watermarks, epoll on Linux; `rocketmqHome` is the state directory when unset.
pub fn config_view(settings: &Settings) -> Vec<(String, String)> {
    let threads = settings.connection_threads().to_string();
    let home = match settings.state.rocketmq_home.trim() {
        "" => Path::new(&settings.state.kv_config_path).parent().map(|d| d.display().to_string()).unwrap_or_default(),
        home => home.to_owned(),
    };
    let embedded = settings.controller.controller_mode == crate::settings::ControllerMode::Embedded;
    let java = [
        ("serverWorkerThreads", threads.clone()),
        ("serverSelectorThreads", threads.clone()),
        // Replies are written by the connection threads; there is no callback executor.
        ("serverCallbackExecutorThreads", "0".into()),
        // Java's defaults: its semaphores bound outbound requests, and this server sends only the
        // oneway NOTIFY_MIN_BROKER_ID_CHANGE.
        ("serverOnewaySemaphoreValue", "256".into()),
        ("serverAsyncSemaphoreValue", "64".into()),
        ("serverSocketBacklog", crate::listen::BACKLOG.to_string()),
        ("serverSocketSndBufSize", "0".into()),
        ("serverSocketRcvBufSize", "0".into()),
        ("serverPooledByteBufAllocatorEnable", "false".into()),
        ("useEpollNativeSelector", cfg!(target_os = "linux").to_string()),
        ("writeBufferHighWaterMark", settings.limits.write_buffer_high_bytes.to_string()),
        ("writeBufferLowWaterMark", settings.limits.write_buffer_low_bytes.to_string()),
        ("clusterTest", "false".into()),
        ("productEnvName", "center".into()),
        ("rocketmqHome", home),
        // Route queries and every other request run on the connection threads: both of Java's
        // request pools are those threads here.
        ("clientRequestThreadPoolNums", threads.clone()),
        ("defaultThreadPoolNums", threads.clone()),
        // Java's defaults: there are no such queues here (requests wait in their connection).
        ("clientRequestThreadPoolQueueCapacity", "50000".into()),
        ("defaultThreadPoolQueueCapacity", "10000".into()),
        // Java's default; unregisters are applied before the reply, not queued.
        ("unRegisterBrokerQueueCapacity", "3000".into()),
        // Java's key for controller_mode = "embedded" (the controller beside the NameServer).
        ("enableControllerInNamesrv", embedded.to_string()),
        ("serverNettyWorkerGroupEnable", "true".into()),
        // SIGTERM always drains the connections, for at most DRAIN_TIMEOUT.
        ("enableShutdownGracefully", "true".into()),
        ("shutdownWaitTimeSeconds", crate::listen::DRAIN_TIMEOUT.as_secs().to_string()),
    ];
    let mut view = settings.java_view();
    view.retain(|(key, _)| !java.iter().any(|(k, _)| k == key));
    view.extend(java.into_iter().map(|(k, v)| (k.to_owned(), v)));
    view
}

/// UPDATE_NAMESRV_CONFIG with its parsed properties, from `peer`.
#[derive(Debug)]
pub struct UpdateConfig {
    pub conn: ConnId,
    pub peer: SocketAddr,
    pub changes: Vec<(String, String)>,
}
request!(UpdateConfig, Result<(), ConfigError>);

impl Apply<ConfigStore> for UpdateConfig {
    fn apply(self, store: &mut ConfigStore) -> Result<(), ConfigError> {
        let result = store.update(&self.changes);
        store.metrics.config_update(result.is_ok());
        if matches!(result, Err(ConfigError::Write { .. } | ConfigError::Store(_))) {
            store.metrics.config_write_failures.inc();
        }
        match &result {
            Ok(changed) => {
                for c in changed {
                    info!(peer = %self.peer, key = %c.key, old = %c.old, new = %c.new, "config updated");
                }
            }
            Err(error) => warn!(peer = %self.peer, %error, "config update refused"),
        }
        result.map(|_| ())
    }
}

impl ConfigStore {
    /// Applies `changes` and persists the changed keys over what the config store file holds
    /// (a layer read at start-up over the config files); nothing changes unless all can.
    fn update(&mut self, changes: &[(String, String)]) -> Result<Vec<Changed>, ConfigError> {
        let Update { settings: updated, changed, .. } = self.settings.with_updates(UpdateScope::Namesrv, changes)?;
        let values = updated.values();
        let value_of = |key: &str| values.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).unwrap_or_default();
        let persisted: Vec<(String, String)> = changed
            .iter()
            .map(|c| canonical_key(&c.key))
            .map(|key| {
                let value = value_of(&key);
                (key, value)
            })
            .collect();
        let path = &updated.state.config_store_path;
        if !persisted.is_empty() {
            let text = updated_store_text(path.as_ref(), &persisted)?;
            write_atomically(path.as_ref(), text.as_bytes()).map_err(|error| {
                error!(path = %path, %error, "cannot persist the config update; refused");
                ConfigError::Write { path: path.clone(), error }
            })?;
            self.record_baseline(Path::new(path), &persisted);
        }
        self.registry.tell(ApplyOptions { conn: ConnId::SERVER, options: RegistryOptions::from(&updated) });
        self.settings = updated;
        Ok(changed)
    }
}

/// SIGHUP: the config layers read again (`loaded`; a layer that no longer loads changes nothing
/// and is never sent): apply the runtime keys that changed and log those that need a restart.
#[derive(Debug)]
pub struct ReloadConfig {
    pub conn: ConnId,
    pub loaded: Box<Settings>,
}
request!(ReloadConfig, Result<Reloaded, SettingsError>);

/// What a reload changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reloaded {
    /// Runtime keys now in effect with their new value.
    pub applied: Vec<String>,
    /// Keys whose new value waits for a restart.
    pub needs_restart: Vec<String>,
}

impl Apply<ConfigStore> for ReloadConfig {
    fn apply(self, store: &mut ConfigStore) -> Result<Reloaded, SettingsError> {
        let mut reloaded = *self.loaded;
        if reloaded.listen.listen_port == 0 {
            // 0 asks for any port: the one bound is still what was asked for.
            reloaded.listen.listen_port = store.settings.listen.listen_port;
        }
        let before = store.settings.values();
        let mut next = store.settings.clone();
        let mut report = Reloaded::default();
        for (key, value) in reloaded.values() {
            let Some((_, old)) = before.iter().find(|(k, v)| *k == key && *v != value) else { continue };
            // A key is runtime when changing it alone changes what the registry is told, or
            // when the binary applies it itself on SIGHUP (the log filter).
            let probe = store.settings.with_values(&[(key.clone(), value.clone())])?;
            if !RegistryOptions::from(&probe).acts_like(&RegistryOptions::from(&store.settings)) || key == "log_filter"
            {
                info!(key = %key, old = %old, new = %value, "setting reloaded");
                next = next.with_values(&[(key.clone(), value)])?;
                report.applied.push(key);
            } else {
                warn!(key = %key, old = %old, new = %value, "changed setting needs a restart");
                report.needs_restart.push(key);
            }
        }
        store.registry.tell(ApplyOptions { conn: self.conn, options: RegistryOptions::from(&next) });
        // Logged once queued: a request sent after this line reaches the registry after the options.
        info!(applied = report.applied.len(), needs_restart = report.needs_restart.len(), "config reloaded");
        store.settings = next;
        store.reconcile();
        Ok(report)
    }
}

impl ConfigStore {
    /// Records, for each key an update just persisted, the config files' value now: when they
    /// later set another value, the file wins (see [`overrides`]). Not done when the `-c` file is
    /// the store itself; a failure only means the update keeps winning.
    fn record_baseline(&self, store: &Path, persisted: &[(String, String)]) {
        let files = match &self.sources {
            Some(sources) if sources.is_store(store) => return,
            Some(sources) => sources.file_values(store).unwrap_or_default(),
            None => Default::default(),
        };
        let mut baseline = overrides::read_baseline(store);
        for (key, _) in persisted {
            baseline.insert(key.clone(), files.get(key).cloned());
        }
        write_baseline(store, &baseline);
    }

    /// Rewrites the store without the updates the config files changed since (the loaded
    /// settings already left them out), and the baseline with one entry per update in force.
    fn reconcile(&self) {
        let Some(sources) = &self.sources else { return };
        let found = match sources.runtime_overrides(&self.settings) {
            Ok(Some(found)) => found,
            Ok(None) => return,
            Err(error) => return warn!(%error, "cannot read the runtime updates against the config files"),
        };
        if !found.dropped.is_empty() {
            let keys: Vec<String> = found.dropped.iter().map(|o| canonical_key(&o.key)).collect();
            let written = pruned_store_text(&found.store, &keys)
                .map_err(|e| e.to_string())
                .and_then(|text| write_atomically(&found.store, text.as_bytes()).map_err(|e| e.to_string()));
            if let Err(error) = written {
                return error!(path = %found.store.display(), %error, "cannot drop stale runtime updates");
            }
        }
        let baseline = found.baseline();
        if baseline != overrides::read_baseline(&found.store) {
            write_baseline(&found.store, &baseline);
        }
    }
}

fn write_baseline(store: &Path, baseline: &overrides::Baseline) {
    let path = overrides::baseline_path(store);
    if let Err(error) = write_atomically(&path, overrides::baseline_text(baseline).as_bytes()) {
        warn!(path = %path.display(), %error, "cannot write the runtime-updates baseline");
    }
}
