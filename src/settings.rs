//! Settings and their layered loading: built-in defaults < `config/default.toml` < `-c FILE`
//! < environment (`NAMESRV_<KEY>`) < command-line flags.
//!
//! Keys are snake_case with the unit in the name; keys that mirror Java's NamesrvConfig /
//! NettyServerConfig are also accepted under their Java spelling (see [`JAVA_NAMES`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use config::{Config, Environment, File, FileFormat, Map, Source, Value};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::protocol::codec::DEFAULT_MAX_FRAME_BYTES;

/// The built-in config file, read from the working directory when present.
pub const DEFAULT_CONFIG_FILE: &str = "config/default.toml";

/// Java spellings accepted for our keys: (Java name, our key).
pub const JAVA_NAMES: &[(&str, &str)] = &[
    ("bindAddress", "bind_address"),
    ("listenPort", "listen_port"),
    ("scanNotActiveBrokerInterval", "scan_interval_ms"),
    ("serverChannelMaxIdleTimeSeconds", "idle_timeout_secs"),
    ("deleteTopicWithBrokerRegistration", "delete_topic_with_broker_registration"),
    ("supportActingMaster", "support_acting_master"),
];

/// Every setting of the server, with its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Address to listen on.
    pub bind_address: String,
    /// Port to listen on (0 picks a free one).
    pub listen_port: u16,
    /// Period of the broker expiry scan.
    pub scan_interval_ms: u64,
    /// Expiry of brokers that register no `heartbeatTimeoutMillis`.
    pub broker_timeout_ms: u64,
    /// Connections with no traffic either way for this long are closed.
    pub idle_timeout_secs: u64,
    /// Largest accepted frame, length field included (Java's `frameMaxLength`).
    pub max_frame_bytes: usize,
    /// Largest accepted inflated size of a compressed register body.
    pub max_inflated_body_bytes: usize,
    /// Response header serialization: "request" (same as the request), "json" or "rocketmq".
    pub response_serialize_type: String,
    /// The MQVersion ordinal stamped on responses.
    pub response_version: i32,
    /// Drop a broker's topics that its registration no longer lists.
    pub delete_topic_with_broker_registration: bool,
    /// Rewrite routes of master-less acting-master groups.
    pub support_acting_master: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            bind_address: "0.0.0.0".into(),
            listen_port: 9876,
            scan_interval_ms: 5_000,
            broker_timeout_ms: 120_000,
            idle_timeout_secs: 120,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            max_inflated_body_bytes: 256 * 1024 * 1024,
            response_serialize_type: "request".into(),
            response_version: crate::protocol::code::version::V5_3_3,
            delete_topic_with_broker_registration: false,
            support_acting_master: false,
        }
    }
}

/// Which serialization responses use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseSerialization {
    /// The request's own serialization (4.9.x behaviour, what the spec recommends).
    SameAsRequest,
    /// Always this one (5.x behaviour with JSON).
    Fixed(crate::protocol::SerializeType),
}

/// Settings that cannot be loaded or make no sense; start-up stops with this message.
#[derive(Debug, Error)]
pub enum SettingsError {
    /// A file or value could not be read or has the wrong type or an unknown key.
    #[error("{0}")]
    Load(#[from] config::ConfigError),
    /// A config file named on the command line does not exist.
    #[error("config file not found: {0}")]
    Missing(PathBuf),
    /// A value is out of range.
    #[error("invalid setting {key}: {reason}")]
    Invalid { key: &'static str, reason: String },
}

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

        let mut builder = Config::builder();
        for layer in layers {
            for (key, value) in layer {
                builder = builder.set_override(canonical_key(&key), value)?;
            }
        }
        let settings: Settings = builder.build()?.try_deserialize()?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks ranges the types cannot express.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let invalid = |key, reason: &str| Err(SettingsError::Invalid { key, reason: reason.to_owned() });
        if self.scan_interval_ms == 0 {
            return invalid("scan_interval_ms", "must be at least 1");
        }
        if self.idle_timeout_secs == 0 {
            return invalid("idle_timeout_secs", "must be at least 1");
        }
        if !(1024..=(i32::MAX as usize)).contains(&self.max_frame_bytes) {
            return invalid("max_frame_bytes", "must be between 1024 and 2147483647");
        }
        if self.response_serialization().is_none() {
            return invalid("response_serialize_type", "must be request, json or rocketmq");
        }
        Ok(())
    }

    /// The parsed `response_serialize_type`.
    pub fn response_serialization(&self) -> Option<ResponseSerialization> {
        use crate::protocol::SerializeType;
        match self.response_serialize_type.to_ascii_lowercase().as_str() {
            "request" => Some(ResponseSerialization::SameAsRequest),
            "json" => Some(ResponseSerialization::Fixed(SerializeType::Json)),
            "rocketmq" => Some(ResponseSerialization::Fixed(SerializeType::RocketMq)),
            _ => None,
        }
    }

    /// The effective settings as sorted `key = value` lines (valid TOML).
    pub fn to_toml_lines(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or_default();
        let map: BTreeMap<String, serde_json::Value> =
            value.as_object().map(|m| m.clone().into_iter().collect()).unwrap_or_default();
        map.iter().map(|(k, v)| format!("{k} = {v}\n")).collect()
    }
}

fn read_file(path: &Path) -> Result<Map<String, Value>, SettingsError> {
    Ok(File::from(path).format(FileFormat::Toml).collect()?)
}

/// Maps a Java spelling (any case) to our key; other keys pass unchanged, to fail by name.
fn canonical_key(key: &str) -> String {
    let folded =
        |s: &str| s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect::<String>();
    let key_folded = folded(key);
    JAVA_NAMES
        .iter()
        .find(|(java, ours)| folded(java) == key_folded || folded(ours) == key_folded)
        .map(|(_, ours)| (*ours).to_owned())
        .unwrap_or_else(|| key.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("namesrv-settings-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::File::create(&path).unwrap().write_all(text.as_bytes()).unwrap();
        path
    }

    #[test]
    fn no_layers_gives_the_built_in_defaults() {
        let s = Settings::load(None, None, "NAMESRV_TEST_NONE", &[]).unwrap();
        assert_eq!(s, Settings::default());
    }

    #[test]
    fn later_layers_win_and_java_names_are_accepted() {
        let base = temp_file("base.toml", "scan_interval_ms = 1000\nlisten_port = 1\n");
        let user = temp_file("user.toml", "scanNotActiveBrokerInterval = 2000\nbindAddress = \"127.0.0.1\"\n");
        let flags = vec![("listen_port".to_owned(), "3".to_owned())];
        let s = Settings::load(Some(&base), Some(&user), "NAMESRV_TEST_LAYERS", &flags).unwrap();
        assert_eq!((s.scan_interval_ms, s.listen_port, s.bind_address.as_str()), (2000, 3, "127.0.0.1"));
    }

    #[test]
    fn unknown_keys_fail_naming_the_key() {
        let user = temp_file("typo.toml", "scan_intervl_ms = 5\n");
        let err = Settings::load(None, Some(&user), "NAMESRV_TEST_TYPO", &[]).unwrap_err().to_string();
        assert!(err.contains("scan_intervl_ms"), "{err}");
    }

    #[test]
    fn bad_values_fail_start_up() {
        let flags = vec![("scan_interval_ms".to_owned(), "0".to_owned())];
        assert!(Settings::load(None, None, "NAMESRV_TEST_BAD", &flags).is_err());
        let flags = vec![("response_serialize_type".to_owned(), "xml".to_owned())];
        assert!(Settings::load(None, None, "NAMESRV_TEST_BAD2", &flags).is_err());
        assert!(Settings::load(None, Some(Path::new("/nonexistent/x.toml")), "NAMESRV_TEST_BAD3", &[]).is_err());
    }

    #[test]
    fn the_shipped_default_file_parses_and_matches_the_built_in_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_CONFIG_FILE);
        let s = Settings::load(Some(&path), None, "NAMESRV_TEST_SHIPPED", &[]).unwrap();
        assert_eq!(s, Settings::default());
    }

    #[test]
    fn printed_config_loads_back_to_the_same_settings() {
        let original = Settings { listen_port: 1234, ..Settings::default() };
        let path = temp_file("printed.toml", &original.to_toml_lines());
        assert_eq!(Settings::load(None, Some(&path), "NAMESRV_TEST_PRINTED", &[]).unwrap(), original);
    }
}
