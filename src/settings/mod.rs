//! Settings and their layered loading: built-in defaults < `<config dir>/default.toml` <
//! `-c FILE` (TOML or Java properties) < runtime updates (`config_store_path`) < environment
//! (`NAMESRV_<KEY>`, settings only) < command-line flags.
//!
//! Keys are snake_case with the unit in the name; keys that mirror Java's NamesrvConfig /
//! NettyServerConfig are also accepted under their Java spelling (see [`JAVA_NAMES`]); the other
//! keys Java reads warn and are ignored (see [`java`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use thiserror::Error;

pub mod addr;
pub mod choice;
pub mod controller;
pub mod credentials;
pub mod file;
mod groups;
pub mod java;
mod keys;
mod load;
pub mod overrides;
pub mod properties;
mod screen;
pub mod sources;
mod store;
mod update;
mod validate;

pub use choice::{
    AclProtect, ConfigFormat, ControllerMode, LargeBodyDecode, LogFormat, PrintFormat, ResponseSerializeType, TlsMode,
};
pub use controller::ControllerSettings;
pub use groups::{
    AclSettings, LimitSettings, ListenSettings, ObserveSettings, RoutingSettings, StateSettings, TlsSettings,
};
pub use keys::KEY_ORDER;
pub use load::{canonical_key, java_name};
pub use sources::{LayerOrigin, Sources};
pub use store::{pruned_store_text, updated_store_text, PersistError};
pub use update::{Changed, Update, UpdateError, UpdateScope, CONTROLLER_FIXED, RUNTIME_KEYS};

/// The defaults file as shipped in this repository (relative to its root). The binary reads
/// `default.toml` from its config directory (`--config-dir`, default `/etc/namesrv`), never
/// from the working directory.
pub const DEFAULT_CONFIG_FILE: &str = "config/default.toml";

/// Where state goes when neither `STATE_DIRECTORY` nor a usable `HOME` is set.
pub const FALLBACK_STATE_DIR: &str = "/var/lib/namesrv";

/// Java spellings accepted for our NameServer keys: (Java name, our key). The controller's are
/// in [`controller::CONTROLLER_KEYS`]; [`java_names`] gives both.
pub const JAVA_NAMES: &[(&str, &str)] = &[
    ("bindAddress", "bind_address"),
    ("listenPort", "listen_port"),
    ("scanNotActiveBrokerInterval", "scan_interval_ms"),
    ("serverChannelMaxIdleTimeSeconds", "idle_timeout_secs"),
    ("deleteTopicWithBrokerRegistration", "delete_topic_with_broker_registration"),
    ("supportActingMaster", "support_acting_master"),
    ("orderMessageEnable", "order_message_enable"),
    ("returnOrderTopicConfigToBroker", "return_order_topic_config_to_broker"),
    ("enableAllTopicList", "enable_all_topic_list"),
    ("enableTopicList", "enable_topic_list"),
    ("notifyMinBrokerIdChanged", "notify_min_broker_id_changed"),
    ("needWaitForService", "need_wait_for_service"),
    ("waitSecondsForService", "wait_seconds_for_service"),
    ("kvConfigPath", "kv_config_path"),
    ("configStorePath", "config_store_path"),
    ("rocketmqHome", "rocketmq_home"),
    ("configBlackList", "config_black_list"),
];

/// Every Java spelling accepted for one of our keys: (Java name, our key).
pub fn java_names() -> impl Iterator<Item = (&'static str, &'static str)> {
    let controller = controller::CONTROLLER_KEYS.iter().filter_map(|k| k.java.map(|java| (java, k.key)));
    JAVA_NAMES.iter().copied().chain(controller)
}

/// Keys UPDATE_NAMESRV_CONFIG refuses whatever `config_black_list` says, with NO_PERMISSION:
/// the paths (CVE-2023-33246), and every access-control and TLS key, so that no peer can turn
/// the checks off or point them at other files over the wire. The runtime-updates file
/// (`config_store_path`) cannot set them either; they come from the config files, the
/// environment or the command line.
pub const FIXED_BLACK_LIST: &[&str] = &[
    "configBlackList",
    "configStorePath",
    "kvConfigPath",
    "rocketmqHome",
    "acl_enabled",
    "acl_accounts_file",
    "acl_protect",
    "acl_admin_requires_tls",
    "acl_broker_addr_matches_peer",
    "tls_mode",
    "tls_cert_file",
    "tls_key_file",
    "tls_client_ca_file",
];

/// The directory state files go to by default, never the working directory: systemd's
/// `$STATE_DIRECTORY` (from `StateDirectory=`), else `$HOME/namesrv` as Java's
/// `${user.home}/namesrv`, else (no `HOME`, or `HOME=/` as for service and container users
/// without one) [`FALLBACK_STATE_DIR`].
pub fn default_state_dir() -> PathBuf {
    let var = |name| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if let Some(dirs) = var("STATE_DIRECTORY") {
        // systemd passes one path per StateDirectory= entry, separated by colons.
        return PathBuf::from(dirs.split(':').next().unwrap_or(FALLBACK_STATE_DIR));
    }
    match var("HOME").filter(|h| !h.trim_end_matches('/').is_empty()) {
        Some(home) => PathBuf::from(home).join("namesrv"),
        None => PathBuf::from(FALLBACK_STATE_DIR),
    }
}

fn state_path(file: &str) -> String {
    default_state_dir().join(file).display().to_string()
}

/// Every setting of the server, with its default, grouped by what it governs. Each group is
/// flattened: keys keep their flat names everywhere (files, variables, flags, the wire).
/// Settings are read through `load`, which deserializes group by group and names unknown keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Settings {
    /// The remoting listener and how its connections run.
    #[serde(flatten)]
    pub listen: ListenSettings,
    /// The route registry's behaviour.
    #[serde(flatten)]
    pub routing: RoutingSettings,
    /// State files and what runtime updates may change.
    #[serde(flatten)]
    pub state: StateSettings,
    /// Bounds on frames, buffers, connections, topics and the KV store.
    #[serde(flatten)]
    pub limits: LimitSettings,
    /// The HTTP endpoint, metrics and logging.
    #[serde(flatten)]
    pub observe: ObserveSettings,
    /// Access control and the security files' reloading.
    #[serde(flatten)]
    pub acl: AclSettings,
    /// TLS on the remoting port.
    #[serde(flatten)]
    pub tls: TlsSettings,
    /// The RocketMQ 5 controller.
    #[serde(flatten)]
    pub controller: ControllerSettings,
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
    /// A Java properties file that does not parse.
    #[error("{path}: {error}")]
    Properties { path: PathBuf, error: properties::PropertiesError },
    /// A config file that cannot be read.
    #[error("cannot read {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    /// A config file read as TOML that does not parse.
    #[error("{path} (read as TOML; --config-format properties reads Java properties): {error}")]
    Toml { path: PathBuf, error: config::ConfigError },
    /// A layer with an unknown key or a value of the wrong type, named.
    #[error("{origin}: {error}")]
    InLayer { origin: LayerOrigin, error: Box<SettingsError> },
    /// A value of the wrong type or out of its type's range, with the key (or variable) as the
    /// operator spelled it.
    #[error("{origin}: {key}={value}: expected {expected}")]
    BadValue { origin: LayerOrigin, key: String, value: String, expected: &'static str },
    /// A value out of range, with the key (or variable) as the operator spelled it.
    #[error("{origin}: {spelled}: {error}")]
    Spelled { origin: LayerOrigin, spelled: String, error: Box<SettingsError> },
    /// A key in a file or flag that names no setting, with the setting it most likely meant.
    #[error("unknown key {key}{}", match suggestion {
        Some(s) => format!(" (did you mean {s}?)"),
        None => " (namesrv -p lists every key; docs/configuration.md describes them)".to_owned(),
    })]
    UnknownKey { key: String, suggestion: Option<String> },
    /// `NAMESRV_*` variables that name no setting: a typo must not start the server on defaults.
    #[error("{}", sources::describe_unknown(.0))]
    UnknownVariables(Vec<sources::UnknownVariable>),
    /// A `NAMESRV_<KEY>` setting whose value is not valid UTF-8.
    #[error("{variable}: the value is not valid UTF-8")]
    NotUnicode { variable: String },
}

impl Settings {
    /// How many threads connections run on: `io_threads`, where 0 means one per core.
    pub fn connection_threads(&self) -> usize {
        match self.listen.io_threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// Every setting's key (our spelling).
    pub fn keys() -> Vec<String> {
        Settings::default().values().into_iter().map(|(k, _)| k).collect()
    }

    /// Every setting as (our key, value as text), sorted by key.
    pub fn values(&self) -> Vec<(String, String)> {
        let value = serde_json::to_value(self).unwrap_or_default();
        let Some(map) = value.as_object() else {
            return Vec::new();
        };
        let text = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        map.iter().map(|(key, v)| (key.clone(), text(v))).collect::<BTreeMap<_, _>>().into_iter().collect()
    }

    /// Every setting as (name, value) strings, under the Java name where there is one:
    /// what GET_NAMESRV_CONFIG answers and what the config store file holds.
    pub fn java_view(&self) -> Vec<(String, String)> {
        self.values().into_iter().map(|(key, v)| (java_name(&key).to_owned(), v)).collect()
    }

    /// The effective settings as `key=value` lines under Java's names, sorted, unescaped as
    /// Java's `-p` prints them; settings Java has no name for follow under a comment.
    pub fn to_properties_lines(&self) -> String {
        let mut java: Vec<String> = Vec::new();
        let mut ours: Vec<String> = Vec::new();
        for (key, value) in self.values() {
            match java_name(&key) {
                name if name != key => java.push(format!("{name}={value}\n")),
                _ => ours.push(format!("{key}={value}\n")),
            }
        }
        java.sort();
        format!("{}# namesrv settings without a Java counterpart\n{}", java.concat(), ours.concat())
    }

    /// The socket addresses `bind_address` and `listen_port` name (a host name resolved).
    pub fn listen_addrs(&self) -> std::io::Result<Vec<std::net::SocketAddr>> {
        addr::resolve(&self.listen.bind_address, self.listen.listen_port)
    }

    /// The effective settings as sorted `key = value` lines (valid TOML).
    pub fn to_toml_lines(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or_default();
        let map: BTreeMap<String, serde_json::Value> =
            value.as_object().map(|m| m.clone().into_iter().collect()).unwrap_or_default();
        map.iter().map(|(k, v)| format!("{k} = {v}\n")).collect()
    }
}

#[cfg(test)]
mod tests;
