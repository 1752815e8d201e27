//! The settings grouped by what they govern, each group with its defaults. Every key keeps its
//! flat name in files, variables and flags: the groups are flattened wherever settings are
//! written or read (see `load`).

use serde::{Deserialize, Serialize};

use super::{state_path, AclProtect, LargeBodyDecode, LogFormat, ResponseSerializeType, TlsMode};
use crate::protocol::codec::DEFAULT_MAX_FRAME_BYTES;

/// The remoting listener: where it listens, how long an idle connection stays, the threads
/// connections run on and how replies are encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ListenSettings {
    /// Address to listen on.
    pub bind_address: String,
    /// Port to listen on (0 picks a free one).
    pub listen_port: u16,
    /// Connections with no traffic either way for this long are closed.
    pub idle_timeout_secs: u64,
    /// Threads connections run on, the registry then on a thread of its own; 0: one per core,
    /// 1: everything on one thread.
    pub io_threads: usize,
    /// Response header serialization.
    pub response_serialize_type: ResponseSerializeType,
    /// The MQVersion ordinal stamped on responses.
    pub response_version: i32,
    /// Where register bodies are decoded: compressed ones and those over 64 KiB.
    pub large_body_decode: LargeBodyDecode,
}

impl Default for ListenSettings {
    fn default() -> Self {
        Self {
            bind_address: "0.0.0.0".into(),
            listen_port: 9876,
            idle_timeout_secs: 120,
            io_threads: 0,
            response_serialize_type: ResponseSerializeType::Request,
            response_version: crate::protocol::code::version::V5_3_3,
            large_body_decode: LargeBodyDecode::Auto,
        }
    }
}

/// The route registry: broker expiry, warm restart, the switches Java's NamesrvConfig has, the
/// outbound notifications and the route cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RoutingSettings {
    /// Period of the broker expiry scan.
    pub scan_interval_ms: u64,
    /// Expiry of brokers that register no `heartbeatTimeoutMillis`.
    pub broker_timeout_ms: u64,
    /// The longest `heartbeatTimeoutMillis` a broker may ask for (a longer one is clamped to
    /// it; a shorter one than 1 s to 1 s), on the wire and from the route snapshot.
    pub max_heartbeat_timeout_ms: u64,
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
    /// Budget of the cache of encoded route bodies (0 disables it).
    pub route_cache_max_bytes: usize,
}

impl Default for RoutingSettings {
    fn default() -> Self {
        Self {
            scan_interval_ms: 5_000,
            broker_timeout_ms: 120_000,
            max_heartbeat_timeout_ms: 600_000,
            warm_restart: true,
            warm_restart_max_age_ms: 360_000,
            expiry_guard_percent: 0,
            runtime_min_broker_timeout_ms: 60_000,
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
            route_cache_max_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Where state lives: the KV store, the runtime-updates file, and which keys updates may not
/// change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StateSettings {
    /// The KV config file (Java's kvConfig.json format).
    pub kv_config_path: String,
    /// Where UPDATE_NAMESRV_CONFIG persists the settings (Java properties format).
    pub config_store_path: String,
    /// RocketMQ home directory (informational, as in Java).
    pub rocketmq_home: String,
    /// `;`-separated keys UPDATE_NAMESRV_CONFIG must refuse (on top of the fixed set).
    pub config_black_list: String,
}

impl Default for StateSettings {
    fn default() -> Self {
        Self {
            kv_config_path: state_path("kvConfig.json"),
            config_store_path: state_path("namesrv.properties"),
            rocketmq_home: std::env::var("ROCKETMQ_HOME").unwrap_or_default(),
            config_black_list: "configBlackList;configStorePath;kvConfigPath".into(),
        }
    }
}

/// Bounds on what peers may send, hold and store: frames, reply buffers, connections, topics and
/// the KV store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LimitSettings {
    /// Largest accepted frame, length field included (Java's `frameMaxLength`).
    pub max_frame_bytes: usize,
    /// Largest accepted inflated size of a compressed register body.
    pub max_inflated_body_bytes: usize,
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
    /// A connection that sends no byte this long after it was accepted is closed (its slot
    /// and descriptor go back).
    pub first_byte_timeout_ms: u64,
    /// A connection in the middle of a frame that sends no byte for this long is closed (what
    /// its frame holds of the budget goes back).
    pub frame_progress_timeout_ms: u64,
    /// A connection with replies waiting whose socket takes no byte for this long (a peer that
    /// does not read) is closed (what its replies hold goes back).
    pub reply_drain_timeout_ms: u64,
    /// Most topics one registration may carry.
    pub max_topics_per_broker: usize,
    /// Most distinct topics the route tables hold, all brokers together; a registration that
    /// would add topics past it is refused whole.
    pub max_topics_total: usize,
    /// Most queue entries (a topic's queue data on one broker group) the route tables hold, all
    /// brokers together: what the tables cost in memory. A registration that would add entries
    /// past it is refused whole; entries already held never count against re-registering.
    pub max_queue_entries_total: usize,
    /// Largest KV value.
    pub kv_max_value_bytes: usize,
    /// Largest KV store: keys and values of every namespace, each entry counted with its
    /// overhead in memory (160 bytes).
    pub kv_max_store_bytes: usize,
    /// Largest ORDER_TOPIC_CONFIG table (keys, values and their JSON), which every
    /// REGISTER_BROKER reply carries.
    pub kv_max_order_topic_config_bytes: usize,
    /// Costly requests (topic listings, KV namespace lists) one source address may send a
    /// second, twice that at once; more wait on their own connection. 0: no limit.
    pub costly_requests_per_second_per_peer: u32,
    /// The most one source address (an IPv4 address, an IPv6 /64) may hold of each shared
    /// bound: connection slots, the frame budget, the reply budget, in percent. 100: no
    /// per-address share.
    pub peer_share_percent: u32,
    /// The part of each shared bound kept for connections that carry a broker registration, in
    /// percent: others never take it, and a new connection given a slot of it must register a
    /// broker first.
    pub broker_reserve_percent: u32,
}

impl Default for LimitSettings {
    fn default() -> Self {
        Self {
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            max_inflated_body_bytes: 64 * 1024 * 1024,
            write_buffer_high_bytes: 4 * 1024 * 1024,
            write_buffer_low_bytes: 1024 * 1024,
            write_buffer_max_bytes: 64 * 1024 * 1024,
            reply_budget_bytes: 256 * 1024 * 1024,
            max_in_flight_per_connection: 64,
            max_connections: 0,
            frame_budget_bytes: 256 * 1024 * 1024,
            frame_receive_timeout_secs: 30,
            first_byte_timeout_ms: 10_000,
            frame_progress_timeout_ms: 5_000,
            reply_drain_timeout_ms: 15_000,
            max_topics_per_broker: 200_000,
            max_topics_total: 1_000_000,
            max_queue_entries_total: 2_000_000,
            kv_max_value_bytes: 1024 * 1024,
            kv_max_store_bytes: 64 * 1024 * 1024,
            kv_max_order_topic_config_bytes: 1024 * 1024,
            costly_requests_per_second_per_peer: 10,
            peer_share_percent: 25,
            broker_reserve_percent: 20,
        }
    }
}

/// Watching the server: the HTTP endpoint, metrics and logging.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ObserveSettings {
    /// `host:port` of the HTTP endpoint (metrics, probes, status page); empty disables it.
    /// Unset in every layer: the remoting listener's host, its port + 4 (0 stays 0).
    pub http_listen: String,
    /// What `GET /rocketmq/nsaddr` answers (`host:port;host:port`); empty: this server's own
    /// remoting address, as the client reached its HTTP endpoint.
    pub address_server_list: String,
    /// At most this many HTTP connections at once (probes, scrapes, the status page); more wait
    /// in the listen queue. Their descriptors come out of what remoting connections may use.
    pub http_max_connections: usize,
    /// An HTTP connection that sends no complete request for this long is closed (keep-alive
    /// idle time and request-head deadline alike).
    pub http_idle_timeout_ms: u64,
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
}

impl Default for ObserveSettings {
    fn default() -> Self {
        Self {
            http_listen: "0.0.0.0:9880".into(),
            address_server_list: String::new(),
            http_max_connections: 32,
            http_idle_timeout_ms: 5_000,
            metrics_enabled: true,
            log_format: LogFormat::Text,
            log_filter: String::new(),
            slow_request_ms: 100,
            log_summary_secs: 60,
        }
    }
}

/// Access control: session credentials on the protected codes, and how often the security files
/// (accounts and TLS) are checked for changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AclSettings {
    /// Verify RocketMQ session credentials (`AccessKey`, `Signature`) on the codes
    /// `acl_protect` names.
    pub acl_enabled: bool,
    /// The accounts file (TOML): access keys, secrets, roles, allowed addresses.
    pub acl_accounts_file: String,
    /// Which codes need credentials: `admin`, `broker` or `all`.
    pub acl_protect: AclProtect,
    /// Admin codes are refused over plain TCP (a signed admin request seen on the wire could
    /// otherwise be resent, as another admin code with the same fields among them).
    pub acl_admin_requires_tls: bool,
    /// For broker codes, the host of `brokerAddr` must be the peer's own IP: a registration
    /// replayed, or its fields shifted, from another host is refused. Off by default: brokers
    /// announcing a NAT or Service address (`brokerIP1`) would be refused.
    pub acl_broker_addr_matches_peer: bool,
    /// How often the accounts file and the TLS files are checked for changes; 0: only SIGHUP.
    pub security_reload_interval_ms: u64,
    /// How long the accounts and TLS files must stay unchanged (size, inode, content) before a
    /// change or SIGHUP loads them, so a file written in place is never loaded half-written.
    pub security_reload_settle_ms: u64,
    /// How long a change may wait for those files to settle: past it they are loaded as they
    /// are (when they parse), so a file that keeps changing cannot keep a revoked key working.
    pub security_reload_max_settle_ms: u64,
}

impl Default for AclSettings {
    fn default() -> Self {
        Self {
            acl_enabled: false,
            acl_accounts_file: String::new(),
            acl_protect: AclProtect::Admin,
            acl_admin_requires_tls: false,
            acl_broker_addr_matches_peer: false,
            security_reload_interval_ms: 2_000,
            security_reload_settle_ms: 1_000,
            security_reload_max_settle_ms: 10_000,
        }
    }
}

/// TLS on the remoting port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TlsSettings {
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
}

impl Default for TlsSettings {
    fn default() -> Self {
        Self {
            tls_mode: TlsMode::Disabled,
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
            tls_client_ca_file: String::new(),
            tls_handshake_timeout_ms: 10_000,
        }
    }
}
