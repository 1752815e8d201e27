//! Command-line surface: subcommands named as mqadmin names them, with mqadmin's short options.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// The NameServer half of RocketMQ's mqadmin, for any RocketMQ NameServer, plus drift detection
/// across a NameServer fleet.
///
/// Exit codes: 0 success, 1 error, 2 drift found (`diff`).
#[derive(Debug, Parser)]
#[command(name = "nsadmin", version = VERSION)]
pub struct Cli {
    /// Options every subcommand takes.
    #[command(flatten)]
    pub global: Global,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// `nsadmin --version`: the version and the commit it was built from (`unknown` outside a git
/// checkout).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("BUILD_GIT_COMMIT"), ")");

/// Options shared by every subcommand (they may come before or after it).
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// NameServer addresses, `host:port;host:port`; without it `NSADMIN_NAMESRV_ADDR`, then
    /// `NAMESRV_ADDR` (as mqadmin reads it), then 127.0.0.1:9876.
    #[arg(short = 'n', long = "namesrv-addr", global = true, env = "NSADMIN_NAMESRV_ADDR")]
    pub namesrv: Option<String>,
    /// Print JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Read from every NameServer instead of the first that answers.
    #[arg(long, global = true)]
    pub all: bool,
    /// Connect and answer timeout per request, in milliseconds.
    #[arg(long = "timeout-ms", global = true, default_value_t = 3000)]
    pub timeout_ms: u64,
    /// Access key: sign every request with RocketMQ's session-credential signature.
    #[arg(long, global = true, env = "NSADMIN_ACCESS_KEY")]
    pub access_key: Option<String>,
    /// Secret key for the signature (never sent).
    #[arg(long, global = true, env = "NSADMIN_SECRET_KEY", hide_env_values = true)]
    pub secret_key: Option<String>,
    /// Session token sent and signed with the request, if the credentials have one.
    #[arg(long, global = true, env = "NSADMIN_SECURITY_TOKEN", hide_env_values = true)]
    pub security_token: Option<String>,
    /// Connect over TLS (a NameServer with `tls_mode` permissive or enforcing), trusting the
    /// system's CA certificates unless --tls-ca is given.
    #[arg(long, global = true)]
    pub tls: bool,
    /// Connect over TLS, trusting the CA certificates in this PEM file.
    #[arg(long = "tls-ca", global = true, env = "NSADMIN_TLS_CA", value_name = "PEM")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate chain (PEM), for a NameServer that asks for one (mutual TLS).
    #[arg(long = "tls-cert", global = true, requires = "tls_key", value_name = "PEM")]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long = "tls-key", global = true, requires = "tls_cert", value_name = "PEM")]
    pub tls_key: Option<PathBuf>,
    /// The largest answer accepted from a NameServer, controller or broker, in bytes (the whole
    /// frame): a larger one is refused as soon as its size arrives, before it is read.
    #[arg(
        long = "max-answer-bytes",
        global = true,
        value_name = "BYTES",
        default_value_t = DEFAULT_MAX_ANSWER_BYTES,
        value_parser = clap::value_parser!(u64).range(1024..)
    )]
    pub max_answer_bytes: u64,
}

/// The default `--max-answer-bytes`, 64 MiB: above the largest answer an honest cluster gives (a
/// topic list of 1,000,000 topics of ~30 bytes is about 32 MB; namesrv's KV store at its default
/// bound, `kv_max_store_bytes` 64 MiB, lists in less, each entry counting 160 bytes beyond its
/// key and value), 4 times what Java's mqadmin reads at all (16 MiB), and a fourth of the
/// client's own default.
pub const DEFAULT_MAX_ANSWER_BYTES: u64 = 64 * 1024 * 1024;

/// The NameServers when neither `-n` nor `NSADMIN_NAMESRV_ADDR` names them and `NAMESRV_ADDR` is
/// not set either.
pub const DEFAULT_NAMESRV: &str = "127.0.0.1:9876";

/// RocketMQ's variable for the NameServer list, read by mqadmin, clients and brokers.
pub const NAMESRV_ADDR: &str = "NAMESRV_ADDR";

impl Global {
    /// The NameServers to talk to: `-n` (or `NSADMIN_NAMESRV_ADDR`), else `NAMESRV_ADDR` as
    /// mqadmin reads it, else [`DEFAULT_NAMESRV`]; an empty value counts as unset.
    pub fn namesrv_addrs(&self) -> String {
        let given = |v: &str| !v.trim().is_empty();
        self.namesrv
            .clone()
            .filter(|v| given(v))
            .or_else(|| std::env::var(NAMESRV_ADDR).ok().filter(|v| given(v)))
            .unwrap_or_else(|| DEFAULT_NAMESRV.to_owned())
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
#[command(rename_all = "camelCase")]
pub enum Command {
    /// Clusters, broker groups, ids and addresses (GET_BROKER_CLUSTER_INFO, 106); with -m each
    /// broker's message counts, asked of the broker itself.
    ClusterList(ClusterListArgs),
    /// The clusters a topic is in: its route's broker groups (105) looked up in the cluster
    /// list (106).
    TopicClusterList {
        /// The topic.
        #[arg(short = 't', long)]
        topic: String,
    },
    /// A topic's route: queue datas, broker datas, order conf (GET_ROUTEINFO_BY_TOPIC, 105).
    TopicRoute {
        /// The topic.
        #[arg(short = 't', long)]
        topic: String,
        /// One line per broker address with its group's queues, instead of the sections.
        #[arg(short = 'l', long)]
        list: bool,
    },
    /// Topic names, all of them (206) or one cluster's (224).
    TopicList {
        /// Only the topics of this cluster.
        #[arg(short = 'c', long)]
        cluster: Option<String>,
    },
    /// Each NameServer's configuration (GET_NAMESRV_CONFIG, 319).
    GetNamesrvConfig,
    /// Changes one setting on every NameServer (UPDATE_NAMESRV_CONFIG, 318).
    UpdateNamesrvConfig {
        /// The key (Java's name, e.g. orderMessageEnable).
        #[arg(short = 'k', long)]
        key: String,
        /// The new value.
        #[arg(short = 'v', long)]
        value: String,
    },
    /// A KV config value (101), or a whole namespace without -k (219), from every NameServer.
    GetKvConfig {
        /// The namespace, e.g. ORDER_TOPIC_CONFIG.
        #[arg(short = 's', long)]
        namespace: String,
        /// The key; without it the whole namespace is listed.
        #[arg(short = 'k', long)]
        key: Option<String>,
    },
    /// Sets a KV config value on every NameServer (PUT_KV_CONFIG, 100).
    UpdateKvConfig {
        /// The namespace.
        #[arg(short = 's', long)]
        namespace: String,
        /// The key.
        #[arg(short = 'k', long)]
        key: String,
        /// The value.
        #[arg(short = 'v', long)]
        value: String,
    },
    /// Deletes a KV config value on every NameServer (DELETE_KV_CONFIG, 102).
    DeleteKvConfig {
        /// The namespace.
        #[arg(short = 's', long)]
        namespace: String,
        /// The key.
        #[arg(short = 'k', long)]
        key: String,
    },
    /// Takes write permission from a broker group's topics on every NameServer (205).
    WipeWritePerm {
        /// The broker group.
        #[arg(short = 'b', long = "broker-name")]
        broker: String,
    },
    /// Gives write permission back to a broker group's topics on every NameServer (327).
    AddWritePerm {
        /// The broker group.
        #[arg(short = 'b', long = "broker-name")]
        broker: String,
    },
    /// Deletes a topic's route on every NameServer (DELETE_TOPIC_IN_NAMESRV, 216).
    DeleteTopic {
        /// The topic.
        #[arg(short = 't', long)]
        topic: String,
        /// Only from this cluster's brokers.
        #[arg(short = 'c', long)]
        cluster: Option<String>,
    },
    /// A broker group's members (GET_BROKER_MEMBER_GROUP, 901).
    BrokerMembers {
        /// The broker group.
        #[arg(short = 'b', long = "broker-name")]
        broker: String,
        /// Its cluster; looked up in the cluster list when not given.
        #[arg(short = 'c', long)]
        cluster: Option<String>,
    },
    /// A topic's order conf in the ORDER_TOPIC_CONFIG namespace on every NameServer (mqadmin's
    /// updateOrderConf: PUT_KV_CONFIG 100, GET_KV_CONFIG 101, DELETE_KV_CONFIG 102).
    UpdateOrderConf {
        /// The topic.
        #[arg(short = 't', long)]
        topic: String,
        /// put, get or delete.
        #[arg(short = 'm', long)]
        method: String,
        /// The order conf for put: `brokerName:queueNum;brokerName:queueNum`.
        #[arg(short = 'v', long = "orderConf")]
        conf: Option<String>,
    },
    /// Prints the named KV namespaces of the first NameServer that answers as a kvConfig.json
    /// (GET_KVLIST_BY_NAMESPACE, 219), for a backup or to move them to another fleet.
    ExportKv {
        /// A namespace to export (repeatable), e.g. ORDER_TOPIC_CONFIG.
        #[arg(short = 's', long = "namespace", required = true)]
        namespaces: Vec<String>,
    },
    /// Puts every entry of a kvConfig.json (Java's format, as `exportKv` or `namesrv
    /// --export-kv` write it) on every NameServer (PUT_KV_CONFIG, 100).
    ImportKv {
        /// The kvConfig.json to import (a regular file).
        #[arg(short = 'f', long = "file")]
        file: PathBuf,
        /// A larger file is refused before it is read whole.
        #[arg(long = "max-bytes", default_value_t = crate::backup::DEFAULT_MAX_BYTES)]
        max_bytes: u64,
        /// Import a file with no entries (refused otherwise: it is more likely a mistake).
        #[arg(long = "allow-empty")]
        allow_empty: bool,
    },
    /// Compares what every NameServer in -n tells clients; exit 2 when they disagree.
    Diff(DiffArgs),
    /// A controller's group, leader and peers (CONTROLLER_GET_METADATA_INFO, 1005).
    #[command(name = "getControllerMetaData")]
    GetControllerMetaData {
        /// Controller addresses, `host:port;host:port`: the first that answers is asked.
        #[arg(short = 'a', long = "controllerAddress")]
        controllers: String,
    },
    /// Each broker group's master, epochs and replicas in sync or not, from the controller
    /// leader (CONTROLLER_GET_SYNC_STATE_DATA, 1006).
    GetSyncStateSet {
        /// Controller addresses, `host:port;host:port`.
        #[arg(short = 'a', long = "controllerAddress")]
        controllers: String,
        /// The broker group.
        #[arg(short = 'b', long = "brokerName")]
        broker: Option<String>,
        /// Every group of this cluster (its groups read from the NameServers of -n).
        #[arg(short = 'c', long = "clusterName")]
        cluster: Option<String>,
    },
    /// Makes broker `-b` its group's master (CONTROLLER_ELECT_MASTER designating it, 1002).
    ElectMaster {
        /// Controller addresses, `host:port;host:port`.
        #[arg(short = 'a', long = "controllerAddress")]
        controllers: String,
        /// The group's cluster.
        #[arg(short = 'c', long = "clusterName")]
        cluster: String,
        /// The broker group (mqadmin's -bn).
        #[arg(long = "brokerName", alias = "bn")]
        broker: String,
        /// The broker id to make master.
        #[arg(short = 'b', long = "brokerId", allow_negative_numbers = true)]
        id: i64,
    },
    /// Removes a broker group, or some of its ids, from the controller (CLEAN_BROKER_DATA, 1011).
    CleanBrokerMetadata {
        /// Controller addresses, `host:port;host:port`.
        #[arg(short = 'a', long = "controllerAddress")]
        controllers: String,
        /// The broker group (mqadmin's -bn).
        #[arg(long = "brokerName", alias = "bn")]
        broker: String,
        /// Only these ids, `1;2`.
        #[arg(short = 'b', long = "brokerControllerIdsToClean")]
        ids: Option<String>,
        /// The group's cluster (needed unless -l).
        #[arg(short = 'c', long = "clusterName")]
        cluster: Option<String>,
        /// Clean brokers that are still alive too.
        #[arg(short = 'l', long = "cleanLivingBroker")]
        living: bool,
    },
    /// Compares what every controller of -a says about the leader (1005) and, with -b or -c,
    /// each group's master, epochs and in-sync set (1006, served by the leader); exit 2 when
    /// they disagree or one does not answer.
    DiffControllers {
        /// Controller addresses, `host:port;host:port`: every one is asked.
        #[arg(short = 'a', long = "controllerAddress")]
        controllers: String,
        /// The broker group.
        #[arg(short = 'b', long = "brokerName")]
        broker: Option<String>,
        /// Every group of this cluster (its groups read from the NameServers of -n).
        #[arg(short = 'c', long = "clusterName")]
        cluster: Option<String>,
    },
    /// Each controller's configuration (GET_CONTROLLER_CONFIG, 1010).
    GetControllerConfig {
        /// Controller addresses, `host:port;host:port`: every one is asked.
        #[arg(short = 'a', long = "controllerAddress")]
        controllers: String,
    },
    /// Changes one setting on every controller (UPDATE_CONTROLLER_CONFIG, 1009).
    UpdateControllerConfig {
        /// Controller addresses, `host:port;host:port`: every one is changed.
        #[arg(short = 'a', long = "controllerAddress")]
        controllers: String,
        /// The key (Java's name).
        #[arg(short = 'k', long)]
        key: String,
        /// The new value.
        #[arg(short = 'v', long)]
        value: String,
    },
    /// A refreshing view of the brokers and topics of one NameServer.
    Watch(WatchArgs),
    /// Waits until a broker group is listed (or gone) on every NameServer in -n.
    Wait(WaitArgs),
}

/// Options of `clusterList`.
#[derive(Debug, Clone, Args)]
pub struct ClusterListArgs {
    /// Only this cluster's brokers.
    #[arg(short = 'c', long = "clusterName", alias = "cluster")]
    pub cluster: Option<String>,
    /// Messages put (in) and got (out) yesterday and today so far, per broker member, from
    /// each broker's runtime info (GET_BROKER_RUNTIME_INFO, 28: the NameServer has no such
    /// figures, so every broker address is connected to); `-` where a broker does not answer.
    #[arg(short = 'm', long = "moreStats")]
    pub more_stats: bool,
    /// Print again every this many seconds, until interrupted (or --count rounds).
    #[arg(short = 'i', long = "interval", value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub interval: Option<u64>,
    /// With -i: stop after this many rounds.
    #[arg(long, requires = "interval", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// The NameServer's HTTP endpoint (`host:port`): brokers loaded from its route snapshot at
    /// start and not registered since are marked "from snapshot (age N s)".
    #[arg(long)]
    pub http: Option<String>,
}

/// Options of `diff`.
#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// Route queries in flight per NameServer.
    #[arg(long, default_value_t = 256)]
    pub window: usize,
}

/// Options of `watch`.
#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Refresh period in milliseconds.
    #[arg(long = "interval-ms", default_value_t = 2000)]
    pub interval_ms: u64,
    /// Stop after this many refreshes (default: until interrupted).
    #[arg(long)]
    pub count: Option<u64>,
    /// The NameServer's HTTP endpoint (`host:port`) for request rate, mailbox depth and heartbeat ages.
    #[arg(long)]
    pub http: Option<String>,
}

/// Options of `wait`.
#[derive(Debug, Clone, Args)]
pub struct WaitArgs {
    /// The broker group to wait for.
    #[arg(short = 'b', long = "broker-name")]
    pub broker: String,
    /// Wait until the group is no longer listed instead.
    #[arg(long)]
    pub gone: bool,
    /// Give up (exit 1) after this many seconds.
    #[arg(long = "timeout-secs", default_value_t = 30.0)]
    pub timeout_secs: f64,
}
