//! The runtime configuration (spec §2.3.19–2.3.20): the `ConfigStore` actor owns the effective
//! settings, answers GET_NAMESRV_CONFIG, and applies UPDATE_NAMESRV_CONFIG — refusing
//! blacklisted keys, persisting the result atomically, and pushing runtime keys to the registry.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use actix::prelude::*;
use thiserror::Error;
use tracing::info;

use crate::mailbox::{Apply, ConnId, Mailbox};
use crate::persist::write_atomically;
use crate::registry::messages::ApplyOptions;
use crate::registry::options::RegistryOptions;
use crate::registry::RegistryHandle;
use crate::settings::{properties, Settings, UpdateError};
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
}

/// The configuration actor.
pub struct ConfigStore {
    settings: Settings,
    registry: RegistryHandle,
    queued: Arc<AtomicUsize>,
}

/// The config store's address, counting queued messages.
pub type ConfigHandle = Mailbox<ConfigStore>;

impl ConfigStore {
    /// Starts the actor on the given arbiter (disk writes stay off the registry's thread).
    pub fn start(settings: Settings, registry: RegistryHandle, arbiter: &ArbiterHandle) -> ConfigHandle {
        let queued = Arc::new(AtomicUsize::new(0));
        let store = ConfigStore { settings, registry, queued: queued.clone() };
        Mailbox::new(ConfigStore::start_in_arbiter(arbiter, |_| store), queued)
    }
}

impl Actor for ConfigStore {
    type Context = Context<Self>;
}

logged_handler!(ConfigStore, "config");

/// GET_NAMESRV_CONFIG; answers every setting as sorted `key=value` lines.
#[derive(Debug)]
pub struct GetConfig {
    pub conn: ConnId,
}
request!(GetConfig, String);

impl Apply<ConfigStore> for GetConfig {
    fn apply(self, store: &mut ConfigStore) -> String {
        properties::write(&store.settings.java_view())
    }
}

/// UPDATE_NAMESRV_CONFIG with its parsed properties.
#[derive(Debug)]
pub struct UpdateConfig {
    pub conn: ConnId,
    pub changes: Vec<(String, String)>,
}
request!(UpdateConfig, Result<(), ConfigError>);

impl Apply<ConfigStore> for UpdateConfig {
    fn apply(self, store: &mut ConfigStore) -> Result<(), ConfigError> {
        let updated = store.settings.with_updates(&self.changes)?;
        let text = properties::write(&updated.java_view());
        let path = &updated.config_store_path;
        write_atomically(path.as_ref(), text.as_bytes())
            .map_err(|error| ConfigError::Write { path: path.clone(), error })?;
        info!(keys = ?self.changes.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), path = %path, "config updated");
        store.registry.tell(ApplyOptions { conn: self.conn, options: RegistryOptions::from(&updated) });
        store.settings = updated;
        Ok(())
    }
}
