//! The runtime-updates file (`config_store_path`): read as a layer of the settings, checked
//! against the config files, and rewritten by UPDATE_NAMESRV_CONFIG. As in Java's
//! `Configuration.persist`, it is Java properties under Java's names.

use std::path::{Path, PathBuf};

use super::overrides::{self, FileValues, RuntimeOverrides};
use super::screen::screen;
use super::sources::{read_file, Layer, LayerOrigin, Sources};
use super::{canonical_key, java_name, properties, ConfigFormat, Settings, SettingsError};
use thiserror::Error;
use tracing::info;

/// The runtime-updates file as a layer, when it exists. It holds what UPDATE_NAMESRV_CONFIG may
/// set (see [`overrides::settable`]): every other key (`listenPort`, `bindAddress`, the paths,
/// keys with no setting) is ignored with one warning naming the file and the keys, so that a Java
/// NameServer's store left at Java's default path (`~/namesrv/namesrv.properties`, also ours),
/// which holds every key, cannot move the listener. Such a store is recognised and reported. An
/// update the config files changed since (see [`overrides`]) is left out, with an INFO line.
fn runtime_updates(path: &Path, files: &FileValues, black_list: &str) -> Result<Option<Layer>, SettingsError> {
    if !path.exists() {
        return Ok(None);
    }
    let (layer, ignored) = settable_layer(path, black_list)?;
    let pairs = layer.values.iter().map(|(k, v)| (k.clone(), v.to_string())).collect();
    let found = RuntimeOverrides::classify(path, pairs, files, &overrides::read_baseline(path)).with_ignored(ignored);
    found.log();
    let stale: Vec<&str> = found.dropped.iter().map(|o| o.key.as_str()).collect();
    let values = layer.values.into_iter().filter(|(k, _)| !stale.contains(&k.as_str())).collect();
    Ok(Some(Layer { values, ..layer }))
}

/// The runtime-updates file's settable keys as a layer (Java booleans read as Java reads them),
/// and the keys it holds that it may not set, as spelled.
fn settable_layer(path: &Path, black_list: &str) -> Result<(Layer, Vec<String>), SettingsError> {
    let origin = LayerOrigin::RuntimeUpdates(path.into());
    let (mut layer, _) = read_file(path, ConfigFormat::Properties, origin)?;
    let (kept, ignored): (Vec<_>, Vec<_>) =
        layer.values.into_iter().partition(|(k, _)| overrides::settable(k, black_list));
    layer.values = kept;
    Ok((screen(layer, true)?, ignored.into_iter().map(|(k, _)| k).collect()))
}

/// Drops the `configStorePath` key of a Java `-c` file's layer: the file is its own store, as
/// Java's `NamesrvStartup` overrides that key with the `-c` path. One INFO line when the key named
/// another file (a copied file still naming its original, a saved `-p` output naming Java's
/// default), which is then neither read nor written.
pub(super) fn drop_own_store_key(layer: &mut Layer, path: &Path) {
    let named: Vec<String> =
        layer.values.iter().filter(|(k, _)| canonical_key(k) == STORE_KEY).map(|(_, v)| v.to_string()).collect();
    layer.values.retain(|(k, _)| canonical_key(k) != STORE_KEY);
    for other in named.iter().filter(|v| !same_file(Path::new(v), path)) {
        info!(
            file = %path.display(),
            ignored = %other,
            "configStorePath in a Java -c file is ignored: the file is its own config store, as in Java's NamesrvStartup"
        );
    }
}

/// Our key for `configStorePath`.
const STORE_KEY: &str = "config_store_path";

/// Whether two paths name one file: equal as written, or once resolved (`./ns.conf` and
/// `/etc/ns.conf`).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

impl Sources {
    /// Decides the config store and returns the runtime-updates layer when it is not the `-c`
    /// file. A Java properties `-c` file (`java_conf`) is the store unless the environment or a
    /// flag names one (`layers[after_files..]`: an explicit choice, such as a writable volume
    /// beside a read-only ConfigMap); a TOML `-c` file can never be (updates are written as Java
    /// properties).
    pub(super) fn store_layer(
        &self,
        settings: &mut Settings,
        layers: &[Layer],
        after_files: usize,
        java_conf: Option<&Path>,
    ) -> Result<Option<Layer>, SettingsError> {
        let chosen = layers[after_files..].iter().any(|l| l.sets(STORE_KEY));
        if let Some(path) = java_conf.filter(|_| !chosen) {
            settings.state.config_store_path = path.display().to_string();
            return Ok(None);
        }
        let store = Path::new(&settings.state.config_store_path);
        if self.is_store(store) {
            if java_conf.is_none() {
                let reason = "names the -c file, which is TOML; runtime updates are written as Java properties";
                return Err(SettingsError::Invalid { key: "config_store_path", reason: reason.into() });
            }
            return Ok(None);
        }
        if let Some(path) = java_conf {
            info!(
                config_file = %path.display(),
                config_store_path = %store.display(),
                "config_store_path is set by the environment or a flag: runtime updates go there, over the Java -c file"
            );
        }
        let files = overrides::file_values(&layers[..after_files]);
        runtime_updates(store, &files, &settings.state.config_black_list)
    }

    /// The config files' values (defaults file, then `-c` file), by our key; none when the `-c`
    /// file is itself where runtime updates go (`is_store`).
    pub fn file_values(&self, store: &Path) -> Result<FileValues, SettingsError> {
        let mut layers = Vec::new();
        if let Some(path) = self.defaults_file.as_deref().filter(|p| p.exists()) {
            layers.push(read_file(path, ConfigFormat::Toml, LayerOrigin::DefaultsFile(path.into()))?.0);
        }
        if let Some(path) = self.config_file.as_deref().filter(|p| p.exists()) {
            layers.push(read_file(path, self.config_format, LayerOrigin::ConfigFile(path.into()))?.0);
        }
        Ok(if self.is_store(store) { FileValues::new() } else { overrides::file_values(&layers) })
    }

    /// Whether `store` (`config_store_path`) is the `-c` file: updates are then written into it
    /// (Java's way) and no update overrides it.
    pub fn is_store(&self, store: &Path) -> bool {
        self.config_file.as_deref().is_some_and(|file| same_file(file, store))
    }

    /// The runtime-updates file of `settings` against the config files, without logging; `None`
    /// when there is no such file or it is the `-c` file.
    pub fn runtime_overrides(&self, settings: &Settings) -> Result<Option<RuntimeOverrides>, SettingsError> {
        let store = Path::new(&settings.state.config_store_path);
        if self.is_store(store) || !store.exists() {
            return Ok(None);
        }
        let files = self.file_values(store)?;
        let (layer, ignored) = settable_layer(store, &settings.state.config_black_list)?;
        let pairs = layer.values.into_iter().map(|(k, v)| (k, v.to_string())).collect();
        let found = RuntimeOverrides::classify(store, pairs, &files, &overrides::read_baseline(store));
        Ok(Some(found.with_ignored(ignored)))
    }
}

/// The properties text of the file at `path` with `changes` (our keys) set in it, every other
/// key it holds kept: what UPDATE_NAMESRV_CONFIG writes there, the runtime-updates layer the
/// next start reads.
pub fn updated_store_text(path: &Path, changes: &[(String, String)]) -> Result<String, PersistError> {
    let mut pairs = match super::file::read_config_text(path) {
        Ok(text) => properties::parse(&properties::strip_java_console(&text))
            .map_err(|error| PersistError::Parse { path: path.into(), error })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => return Err(PersistError::Read { path: path.into(), error }),
    };
    for (key, value) in changes {
        pairs.retain(|(k, _)| canonical_key(k) != *key);
        pairs.push((java_name(key).to_owned(), value.clone()));
    }
    // A store naming another file as configStorePath (a copied Java -c file) names itself once
    // written, as Java's persist would write it: a rollback to Java keeps using this file.
    for (_, value) in pairs.iter_mut().filter(|(k, _)| canonical_key(k) == STORE_KEY) {
        *value = path.display().to_string();
    }
    Ok(properties::write(&pairs))
}

/// The properties text of the runtime-updates file at `path` without `keys` (our spelling).
pub fn pruned_store_text(path: &Path, keys: &[String]) -> Result<String, PersistError> {
    let text = super::file::read_config_text(path).map_err(|error| PersistError::Read { path: path.into(), error })?;
    let mut pairs = properties::parse(&properties::strip_java_console(&text))
        .map_err(|error| PersistError::Parse { path: path.into(), error })?;
    pairs.retain(|(k, _)| !keys.contains(&canonical_key(k)));
    Ok(properties::write(&pairs))
}

/// The runtime-updates file cannot be read back before it is rewritten.
#[derive(Debug, Error)]
pub enum PersistError {
    /// It exists but cannot be read.
    #[error("cannot read {}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    /// It is not properties text.
    #[error("{}: {error}", path.display())]
    Parse { path: PathBuf, error: properties::PropertiesError },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updated_store_text_replaces_changed_keys_and_keeps_the_rest() {
        let dir = std::env::temp_dir().join(format!("namesrv-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("namesrv.properties");
        std::fs::write(&path, "# comment\nlistenPort=9876\nenableTopicList=true\nuseTLS=false\n").unwrap();
        let text = updated_store_text(&path, &[("enable_topic_list".into(), "false".into())]).unwrap();
        assert_eq!(text, "enableTopicList=false\nlistenPort=9876\nuseTLS=false\n");
        let fresh = updated_store_text(&dir.join("missing"), &[("order_message_enable".into(), "true".into())]);
        assert_eq!(fresh.unwrap(), "orderMessageEnable=true\n");
    }
}
