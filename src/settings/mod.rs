//! Settings and their layered loading: built-in defaults < `<config dir>/default.toml` <
//! `-c FILE` (TOML or Java properties) < runtime updates (`config_store_path`) < environment
//! (`NAMESRV_<KEY>`, settings only) < command-line flags.
//!
//! Keys are snake_case with the unit in the name; keys that mirror Java's NamesrvConfig /
//! NettyServerConfig are also accepted under their Java spelling (see [`JAVA_NAMES`]); the other
//! keys Java reads warn and are ignored (see [`java`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::protocol::codec::DEFAULT_MAX_FRAME_BYTES;

pub mod addr;
pub mod choice;
pub mod file;
pub mod java;
mod load;
pub mod overrides;
pub mod properties;
pub mod sources;
mod update;
mod validate;

pub use choice::{AclProtect, ConfigFormat, LargeBodyDecode, LogFormat, PrintFormat, ResponseSerializeType, TlsMode};
pub use load::{canonical_key, java_name, pruned_store_text, updated_store_text, PersistError};
pub use sources::{Origin, Sources};
pub use update::{Changed, UpdateError, RUNTIME_KEYS};

/// The defaults file as shipped in this repository (relative to its root). The binary reads
/// `default.toml` from its config directory (`--config-dir`, default `/etc/namesrv`), never
/// from the working directory.
pub const DEFAULT_CONFIG_FILE: &str = "config/default.toml";

/// Where state goes when neither `STATE_DIRECTORY` nor a usable `HOME` is set.
pub const FALLBACK_STATE_DIR: &str = "/var/lib/namesrv";

/// Java spellings accepted for our keys: (Java name, our key).
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
    /// Keep a route snapshot in the state directory and load it at start (warm restart).
    pub warm_restart: bool,
    /// A route snapshot older than this at start is ignored.
    pub warm_restart_max_age_ms: u64,
    /// At most this share (percent) of the live brokers expire in one expiry tick, the longest
    /// silent first, the rest in the next ticks; 0: no limit.
    pub expiry_guard_percent: u32,
    /// The lowest `broker_timeout_ms` UPDATE_NAMESRV_CONFIG may set: well above the brokers'
    /// 30 s heartbeat period, so one request cannot expire every broker between heartbeats.
    pub runtime_min_broker_timeout_ms: u64,
    /// Connections with no traffic either way for this long are closed.
    pub idle_timeout_secs: u64,
    /// Largest accepted frame, length field included (Java's `frameMaxLength`).
    pub max_frame_bytes: usize,
    /// Largest accepted inflated size of a compressed register body.
    pub max_inflated_body_bytes: usize,
    /// Response header serialization.
    pub response_serialize_type: ResponseSerializeType,
    /// The MQVersion ordinal stamped on responses.
    pub response_version: i32,
    /// Drop a broker's topics that its registration no longer lists.
    pub delete_topic_with_broker_registration: bool,
    /// Rewrite routes of master-less acting-master groups.
    pub support_acting_master: bool,
    /// Fill `orderTopicConf` in routes from the ORDER_TOPIC_CONFIG KV namespace.
    pub order_message_enable: bool,
    /// Answer REGISTER_BROKER with the ORDER_TOPIC_CONFIG KV namespace.
    pub return_order_topic_config_to_broker: bool,
    /// Serve GET_ALL_TOPIC_LIST_FROM_NAMESERVER.
    pub enable_all_topic_list: bool,
    /// Serve GET_TOPICS_BY_CLUSTER and the unit topic lists.
    pub enable_topic_list: bool,
    /// Send NOTIFY_MIN_BROKER_ID_CHANGE to brokers when a group's lowest id changes.
    pub notify_min_broker_id_changed: bool,
    /// Those notifications under way at once (each a connection to a broker); more are dropped.
    pub notify_max_in_flight: usize,
    /// Those notifications started per second; more are dropped.
    pub notify_max_per_second: u32,
    /// Refuse route queries for `wait_seconds_for_service` after start.
    pub need_wait_for_service: bool,
    /// See `need_wait_for_service`.
    pub wait_seconds_for_service: u64,
    /// The KV config file (Java's kvConfig.json format).
    pub kv_config_path: String,
    /// Where UPDATE_NAMESRV_CONFIG persists the settings (Java properties format).
    pub config_store_path: String,
    /// RocketMQ home directory (informational, as in Java).
    pub rocketmq_home: String,
    /// `;`-separated keys UPDATE_NAMESRV_CONFIG must refuse (on top of the fixed set).
    pub config_black_list: String,
    /// Budget of the cache of encoded route bodies (0 disables it).
    pub route_cache_max_bytes: usize,
    /// Where register bodies are decoded: compressed ones and those over 64 KiB.
    pub large_body_decode: LargeBodyDecode,
    /// Reading from a connection stops above this many reply bytes waiting to be written.
    pub write_buffer_high_bytes: usize,
    /// ... and resumes at or below this many.
    pub write_buffer_low_bytes: usize,
    /// A reply that would leave more than this many bytes unwritten on its connection closes it.
    pub write_buffer_max_bytes: usize,
    /// Bytes all connections together may hold in unwritten replies over 64 KiB.
    pub reply_budget_bytes: usize,
    /// Reading from a connection stops while it has this many requests in flight.
    pub max_in_flight_per_connection: usize,
    /// Most remoting connections open at once; more are closed as they are accepted. 0: the
    /// open-file soft limit less the descriptors open at start and 64 kept for the HTTP
    /// endpoint and state files.
    pub max_connections: usize,
    /// Bytes all connections together may hold in frames over 64 KiB, from their first byte
    /// until their request has been handled.
    pub frame_budget_bytes: usize,
    /// A frame not complete this long after its first byte closes its connection.
    pub frame_receive_timeout_secs: u64,
    /// Most topics one registration may carry.
    pub max_topics_per_broker: usize,
    /// Most distinct topics the route tables hold, all brokers together; a registration that
    /// would add topics past it is refused whole.
    pub max_topics_total: usize,
    /// Largest KV value.
    pub kv_max_value_bytes: usize,
    /// Largest KV store: keys and values of every namespace, each entry counted with its
    /// overhead in memory (160 bytes).
    pub kv_max_store_bytes: usize,
    /// Largest ORDER_TOPIC_CONFIG table (keys, values and their JSON), which every
    /// REGISTER_BROKER reply carries.
    pub kv_max_order_topic_config_bytes: usize,
    /// `host:port` of the HTTP endpoint (metrics, probes, status page); empty disables it.
    /// Unset in every layer: the remoting listener's host, its port + 4 (0 stays 0).
    pub http_listen: String,
    /// What `GET /rocketmq/nsaddr` answers (`host:port;host:port`); empty: this server's own
    /// remoting address, as the client reached its HTTP endpoint.
    pub address_server_list: String,
    /// Count requests and actor messages for `/metrics` (off only to measure what it costs).
    pub metrics_enabled: bool,
    /// Log lines as text or as one JSON object per line.
    pub log_format: LogFormat,
    /// The log filter (`RUST_LOG` syntax, e.g. `info,namesrv::connection=debug`); empty: `RUST_LOG`,
    /// else `info`. SIGHUP applies a new one.
    pub log_filter: String,
    /// Requests taking longer than this are logged at WARN.
    pub slow_request_ms: u64,
    /// A one-line INFO summary (connections, brokers, topics, rate, p99, mailbox depth) this
    /// often; 0 disables it.
    pub log_summary_secs: u64,
    /// Threads connections run on, the registry then on a thread of its own; 0: one per core,
    /// 1: everything on one thread.
    pub io_threads: usize,
    /// Verify RocketMQ session credentials (`AccessKey`, `Signature`) on the codes
    /// `acl_protect` names.
    pub acl_enabled: bool,
    /// The accounts file (TOML): access keys, secrets, roles, allowed addresses.
    pub acl_accounts_file: String,
    /// Which codes need credentials: `admin`, `broker` or `all`.
    pub acl_protect: AclProtect,
    /// TLS on the remoting port: `disabled`, `permissive` or `enforcing`.
    pub tls_mode: TlsMode,
    /// The server's certificate chain (PEM).
    pub tls_cert_file: String,
    /// The server's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub tls_key_file: String,
    /// CA certificates (PEM) client certificates must chain to; empty: no client certificates.
    pub tls_client_ca_file: String,
    /// A TLS handshake (from the first byte) not complete this long closes its connection.
    pub tls_handshake_timeout_ms: u64,
    /// How often the accounts file and the TLS files are checked for changes; 0: only SIGHUP.
    pub security_reload_interval_ms: u64,
    /// How long the accounts and TLS files must stay unchanged (size, mtime, content) before a
    /// change or SIGHUP loads them, so a file written in place is never loaded half-written.
    pub security_reload_settle_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            bind_address: "0.0.0.0".into(),
            listen_port: 9876,
            scan_interval_ms: 5_000,
            broker_timeout_ms: 120_000,
            warm_restart: true,
            warm_restart_max_age_ms: 360_000,
            expiry_guard_percent: 0,
            runtime_min_broker_timeout_ms: 60_000,
            idle_timeout_secs: 120,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            max_inflated_body_bytes: 64 * 1024 * 1024,
            response_serialize_type: ResponseSerializeType::Request,
            response_version: crate::protocol::code::version::V5_3_3,
            delete_topic_with_broker_registration: false,
            support_acting_master: false,
            order_message_enable: false,
            return_order_topic_config_to_broker: true,
            enable_all_topic_list: true,
            enable_topic_list: true,
            notify_min_broker_id_changed: false,
            notify_max_in_flight: 16,
            notify_max_per_second: 64,
            need_wait_for_service: false,
            wait_seconds_for_service: 45,
            kv_config_path: state_path("kvConfig.json"),
            config_store_path: state_path("namesrv.properties"),
            rocketmq_home: std::env::var("ROCKETMQ_HOME").unwrap_or_default(),
            config_black_list: "configBlackList;configStorePath;kvConfigPath".into(),
            route_cache_max_bytes: 16 * 1024 * 1024,
            large_body_decode: LargeBodyDecode::Auto,
            write_buffer_high_bytes: 4 * 1024 * 1024,
            write_buffer_low_bytes: 1024 * 1024,
            write_buffer_max_bytes: 64 * 1024 * 1024,
            reply_budget_bytes: 256 * 1024 * 1024,
            max_in_flight_per_connection: 64,
            max_connections: 0,
            frame_budget_bytes: 256 * 1024 * 1024,
            frame_receive_timeout_secs: 30,
            max_topics_per_broker: 200_000,
            max_topics_total: 1_000_000,
            kv_max_value_bytes: 1024 * 1024,
            kv_max_store_bytes: 64 * 1024 * 1024,
            kv_max_order_topic_config_bytes: 1024 * 1024,
            http_listen: "0.0.0.0:9880".into(),
            address_server_list: String::new(),
            metrics_enabled: true,
            log_format: LogFormat::Text,
            log_filter: String::new(),
            slow_request_ms: 100,
            log_summary_secs: 60,
            io_threads: 0,
            acl_enabled: false,
            acl_accounts_file: String::new(),
            acl_protect: AclProtect::Admin,
            tls_mode: TlsMode::Disabled,
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
            tls_client_ca_file: String::new(),
            tls_handshake_timeout_ms: 10_000,
            security_reload_interval_ms: 2_000,
            security_reload_settle_ms: 1_000,
        }
    }
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
    InLayer { origin: Origin, error: Box<SettingsError> },
    /// A value of the wrong type or out of its type's range, with the key (or variable) as the
    /// operator spelled it.
    #[error("{origin}: {key}={value}: expected {expected}")]
    BadValue { origin: Origin, key: String, value: String, expected: &'static str },
    /// A value out of range, with the key (or variable) as the operator spelled it.
    #[error("{origin}: {spelled}: {error}")]
    Spelled { origin: Origin, spelled: String, error: Box<SettingsError> },
    /// `NAMESRV_*` variables that name no setting: a typo must not start the server on defaults.
    #[error("{}", sources::describe_unknown(.0))]
    UnknownVariables(Vec<sources::UnknownVariable>),
    /// A `NAMESRV_<KEY>` setting whose value is not valid UTF-8.
    #[error("{variable}: the value is not valid UTF-8")]
    NotUnicode { variable: String },
    /// `enableControllerInNamesrv=true`: the controller Java would embed does not exist here.
    #[error(
        "{origin}: enableControllerInNamesrv=true: embedded controller not supported: run the RocketMQ controller separately"
    )]
    EmbeddedController { origin: Origin },
}

impl Settings {
    /// How many threads connections run on: `io_threads`, where 0 means one per core.
    pub fn connection_threads(&self) -> usize {
        match self.io_threads {
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
        addr::resolve(&self.bind_address, self.listen_port)
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
