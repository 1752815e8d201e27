//! Loading the layers (TOML or Java properties files, environment, flags) and applying
//! UPDATE_NAMESRV_CONFIG changes to settings.

use std::path::Path;

use config::{Config, Environment, File, FileFormat, Map, Source, Value};
use thiserror::Error;
use tracing::warn;

use super::{properties, Settings, SettingsError, FIXED_BLACK_LIST, JAVA_IGNORED_KEYS, JAVA_NAMES};

impl Settings {
    /// Loads every layer. `overrides` are the command-line flags, as (key, value) pairs.
    pub fn load(
        default_file: Option<&Path>,
        config_file: Option<&Path>,
        env_prefix: &str,
        overrides: &[(String, String)],
    ) -> Result<Settings, SettingsError> {
        let mut layers: Vec<Map<String, Value>> = Vec::new();
        if let Some(path) = default_file.filter(|p| p.exists()) {
            layers.push(read_file(path)?);
        }
        if let Some(path) = config_file {
            if !path.exists() {
                return Err(SettingsError::Missing(path.to_owned()));
            }
            layers.push(read_file(path)?);
        }
        layers.push(Environment::with_prefix(env_prefix).prefix_separator("_").collect()?);
        layers.push(overrides.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect());
        let store_path_set = layers.iter().flat_map(|l| l.keys()).any(|k| canonical_key(k) == "config_store_path");
        let mut settings = merge(&Settings::default(), layers)?;
        // As in Java, a properties file given with -c is where runtime updates are persisted.
        if let Some(path) = config_file.filter(|p| is_properties(p) && !store_path_set) {
            settings.config_store_path = path.display().to_string();
        }
        settings.validate()?;
        Ok(settings)
    }

    /// These settings with `changes` (from an UPDATE_NAMESRV_CONFIG body) applied.
    ///
    /// Refuses blacklisted keys; ignores keys that are not settings, as Java does.
    pub fn with_updates(&self, changes: &[(String, String)]) -> Result<Settings, UpdateError> {
        let black_list: Vec<String> = FIXED_BLACK_LIST
            .iter()
            .map(|k| canonical_key(k))
            .chain(self.config_black_list.split(';').filter(|k| !k.trim().is_empty()).map(|k| canonical_key(k.trim())))
            .collect();
        if let Some((key, _)) = changes.iter().find(|(k, _)| black_list.contains(&canonical_key(k))) {
            return Err(UpdateError::BlackListed(key.clone()));
        }
        let known = serde_json::to_value(self).ok().and_then(|v| v.as_object().cloned()).unwrap_or_default();
        let layer: Map<String, Value> = changes
            .iter()
            .map(|(k, v)| (canonical_key(k), v))
            .filter(|(k, _)| known.contains_key(k))
            .map(|(k, v)| (k, Value::from(v.as_str())))
            .collect();
        let updated = merge(self, vec![layer]).map_err(|e| UpdateError::Invalid(e.to_string()))?;
        updated.validate().map_err(|e| UpdateError::Invalid(e.to_string()))?;
        Ok(updated)
    }
}

/// Why UPDATE_NAMESRV_CONFIG refused a change.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UpdateError {
    /// The key may never change over the wire.
    #[error("Can not update config in black list.")]
    BlackListed(String),
    /// A value does not fit its setting.
    #[error("{0}")]
    Invalid(String),
}

/// `base` with each layer's keys (canonicalized) set over it, in order.
fn merge(base: &Settings, layers: Vec<Map<String, Value>>) -> Result<Settings, SettingsError> {
    let mut builder = Config::builder().add_source(Config::try_from(base)?);
    for layer in layers {
        for (key, value) in layer {
            builder = builder.set_override(canonical_key(&key), value)?;
        }
    }
    Ok(builder.build()?.try_deserialize()?)
}

/// Reads a TOML file, or a Java properties file when its name ends in `.properties`.
fn read_file(path: &Path) -> Result<Map<String, Value>, SettingsError> {
    if is_properties(path) {
        let text = std::fs::read_to_string(path).map_err(|error| SettingsError::Read { path: path.into(), error })?;
        let pairs = properties::parse(&text).map_err(|error| SettingsError::Properties { path: path.into(), error })?;
        return Ok(pairs
            .into_iter()
            .filter(|(k, _)| {
                let ignored = JAVA_IGNORED_KEYS.contains(&k.as_str());
                if ignored {
                    warn!(key = %k, file = %path.display(), "ignoring Java setting with no meaning here");
                }
                !ignored
            })
            .map(|(k, v)| (k, Value::from(v)))
            .collect());
    }
    Ok(File::from(path).format(FileFormat::Toml).collect()?)
}

fn is_properties(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "properties")
}

/// Maps a Java spelling (any case) to our key; other keys pass unchanged, to fail by name.
pub fn canonical_key(key: &str) -> String {
    let folded =
        |s: &str| s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect::<String>();
    let key_folded = folded(key);
    JAVA_NAMES
        .iter()
        .find(|(java, ours)| folded(java) == key_folded || folded(ours) == key_folded)
        .map(|(_, ours)| (*ours).to_owned())
        .unwrap_or_else(|| key.to_owned())
}
