//! Settings and their layered loading: built-in defaults < `config/default.toml` < `-c FILE`
//! < environment (`NAMESRV_<KEY>`) < command-line flags.
//!
//! Keys are snake_case with the unit in the name; keys that mirror Java's NamesrvConfig /
//! NettyServerConfig are also accepted under their Java spelling (see [`JAVA_NAMES`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::protocol::codec::DEFAULT_MAX_FRAME_BYTES;

mod load;
pub mod properties;

pub use load::{canonical_key, UpdateError};

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

/// Java NamesrvConfig / NettyServerConfig keys with no meaning here: accepted and ignored in a
/// Java properties file, so operators can bring theirs unchanged.
pub const JAVA_IGNORED_KEYS: &[&str] = &[
    "productEnvName",
    "clusterTest",
    "clientRequestThreadPoolNums",
    "defaultThreadPoolNums",
    "clientRequestThreadPoolQueueCapacity",
    "defaultThreadPoolQueueCapacity",
    "unRegisterBrokerQueueCapacity",
    "enableControllerInNamesrv",
    "serverWorkerThreads",
    "serverCallbackExecutorThreads",
    "serverSelectorThreads",
    "serverOnewaySemaphoreValue",
    "serverAsyncSemaphoreValue",
    "serverSocketSndBufSize",
    "serverSocketRcvBufSize",
    "writeBufferHighWaterMark",
    "writeBufferLowWaterMark",
    "serverSocketBacklog",
    "serverNettyWorkerGroupEnable",
    "serverPooledByteBufAllocatorEnable",
    "enableShutdownGracefully",
    "shutdownWaitTimeSeconds",
    "useEpollNativeSelector",
];

/// Keys UPDATE_NAMESRV_CONFIG refuses whatever `config_black_list` says (CVE-2023-33246).
pub const FIXED_BLACK_LIST: &[&str] = &["configBlackList", "configStorePath", "kvConfigPath", "rocketmqHome"];

/// Keys UPDATE_NAMESRV_CONFIG applies at once; the others take effect after a restart.
pub const RUNTIME_KEYS: &[&str] = &[
    "enable_all_topic_list",
    "enable_topic_list",
    "notify_min_broker_id_changed",
    "need_wait_for_service",
    "wait_seconds_for_service",
    "order_message_enable",
    "return_order_topic_config_to_broker",
    "support_acting_master",
    "delete_topic_with_broker_registration",
    "broker_timeout_ms",
];

/// `$HOME/<rest>`, as Java's `${user.home}` defaults.
fn home_path(rest: &str) -> String {
    let home = std::env::var("HOME").unwrap_or_else(|_| ".".into());
    format!("{}/{rest}", home.trim_end_matches('/'))
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
    /// Where register bodies over 64 KiB are decoded: "auto" (on the blocking pool when the
    /// process may use more than one core, else in place), "blocking" or "inline".
    pub large_body_decode: String,
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
            max_inflated_body_bytes: 64 * 1024 * 1024,
            response_serialize_type: "request".into(),
            response_version: crate::protocol::code::version::V5_3_3,
            delete_topic_with_broker_registration: false,
            support_acting_master: false,
            order_message_enable: false,
            return_order_topic_config_to_broker: true,
            enable_all_topic_list: true,
            enable_topic_list: true,
            notify_min_broker_id_changed: false,
            need_wait_for_service: false,
            wait_seconds_for_service: 45,
            kv_config_path: home_path("namesrv/kvConfig.json"),
            config_store_path: home_path("namesrv/namesrv.properties"),
            rocketmq_home: std::env::var("ROCKETMQ_HOME").unwrap_or_default(),
            config_black_list: "configBlackList;configStorePath;kvConfigPath".into(),
            route_cache_max_bytes: 16 * 1024 * 1024,
            large_body_decode: "auto".into(),
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
    /// A Java properties file that does not parse.
    #[error("{path}: {error}")]
    Properties { path: PathBuf, error: properties::PropertiesError },
    /// A config file that cannot be read.
    #[error("cannot read {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
}

impl Settings {
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
        if !["auto", "blocking", "inline"].contains(&self.large_body_decode.to_ascii_lowercase().as_str()) {
            return invalid("large_body_decode", "must be auto, blocking or inline");
        }
        if !(1024..=(i32::MAX as usize)).contains(&self.max_inflated_body_bytes) {
            return invalid("max_inflated_body_bytes", "must be between 1024 and 2147483647");
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

    /// Every setting as (name, value) strings, under the Java name where there is one:
    /// what GET_NAMESRV_CONFIG answers and what the config store file holds.
    pub fn java_view(&self) -> Vec<(String, String)> {
        let value = serde_json::to_value(self).unwrap_or_default();
        let Some(map) = value.as_object() else {
            return Vec::new();
        };
        map.iter()
            .map(|(key, v)| {
                let name = JAVA_NAMES.iter().find(|(_, ours)| ours == key).map_or(key.as_str(), |(java, _)| java);
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                (name.to_owned(), text)
            })
            .collect()
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
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::Path;

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
    fn a_java_properties_file_is_accepted_with_its_java_only_keys_ignored() {
        let file = temp_file(
            "namesrv.properties",
            "listenPort=9999\nclientRequestThreadPoolNums=8\nscanNotActiveBrokerInterval : 700\norderMessageEnable=true\n",
        );
        let s = Settings::load(None, Some(&file), "NAMESRV_TEST_PROPS", &[]).unwrap();
        assert_eq!((s.listen_port, s.scan_interval_ms, s.order_message_enable), (9999, 700, true));
        let bad = temp_file("bad.properties", "noSuchKey=1\n");
        let err = Settings::load(None, Some(&bad), "NAMESRV_TEST_PROPS2", &[]).unwrap_err().to_string();
        assert!(err.contains("noSuchKey"), "{err}");
    }

    #[test]
    fn updates_refuse_blacklisted_keys_and_apply_the_rest() {
        let s = Settings::default();
        for key in ["configStorePath", "kvConfigPath", "configBlackList", "rocketmqHome", "kv_config_path"] {
            assert_eq!(s.with_updates(&[(key.into(), "x".into())]), Err(UpdateError::BlackListed(key.into())));
        }
        let updated =
            s.with_updates(&[("enableTopicList".into(), "false".into()), ("{key".into(), "value}".into())]).unwrap();
        assert!(!updated.enable_topic_list);
        assert!(s.with_updates(&[("scanNotActiveBrokerInterval".into(), "soon".into())]).is_err());
    }

    #[test]
    fn java_view_uses_java_names() {
        let view = Settings::default().java_view();
        assert!(view.contains(&("listenPort".to_owned(), "9876".to_owned())));
        assert!(view.contains(&("scanNotActiveBrokerInterval".to_owned(), "5000".to_owned())));
        assert!(view.contains(&("max_frame_bytes".to_owned(), "16777216".to_owned())));
    }

    #[test]
    fn printed_config_loads_back_to_the_same_settings() {
        let original = Settings { listen_port: 1234, ..Settings::default() };
        let path = temp_file("printed.toml", &original.to_toml_lines());
        assert_eq!(Settings::load(None, Some(&path), "NAMESRV_TEST_PRINTED", &[]).unwrap(), original);
    }
}
