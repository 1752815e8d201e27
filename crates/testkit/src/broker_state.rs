//! What a test broker is configured with and knows (see `controller_broker`), shared between
//! the test's handle and the broker's loop.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use namesrv::protocol::signature::SessionCredentials;
use namesrv::protocol::RemotingCommand;

/// How a test broker runs.
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    /// Cluster name.
    pub cluster: String,
    /// Broker (group) name.
    pub name: String,
    /// The controllers' addresses (`controllerAddr`).
    pub controllers: Vec<String>,
    /// The id it already has (its metadata file): it registers with 1003 at once.
    pub id: Option<i64>,
    /// `brokerHeartbeatInterval` (Java 1 s).
    pub heartbeat_interval: Duration,
    /// `controllerHeartBeatTimeoutMills` sent in heartbeats (Java 10 s).
    pub heartbeat_timeout_ms: i64,
    /// `syncBrokerMetadataPeriod`: the 1004 poll (Java 5 s).
    pub sync_period: Duration,
    /// `brokerElectionPriority`.
    pub priority: i32,
    /// A NameServer to register with (103), when given.
    pub namesrv: Option<SocketAddr>,
    /// Credentials every controller request is signed with (a broker with an ACL account).
    pub credentials: Option<SessionCredentials>,
    /// TLS to the controllers, when given.
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

impl BrokerConfig {
    /// A broker of `name` in cluster `c` with the controllers at `controllers` (`a;b;c`) and
    /// ten times Java's pace: heartbeats every 100 ms (1 s timeout), polls every 500 ms.
    pub fn new(name: &str, controllers: &str) -> Self {
        BrokerConfig {
            cluster: "c".into(),
            name: name.into(),
            controllers: controllers.split(';').filter(|a| !a.is_empty()).map(str::to_owned).collect(),
            id: None,
            heartbeat_interval: Duration::from_millis(100),
            heartbeat_timeout_ms: 1000,
            sync_period: Duration::from_millis(500),
            priority: i32::MAX,
            namesrv: None,
            credentials: None,
            tls: None,
        }
    }
}

/// One role the broker believed, at one master epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleSeen {
    /// The master epoch.
    pub epoch: i32,
    /// The master's id.
    pub master: i64,
    /// Whether this broker was that master.
    pub is_master: bool,
}

/// What the broker knows, shared with its loop.
#[derive(Debug, Default)]
pub struct BrokerState {
    /// Its controller-assigned id.
    pub id: Option<i64>,
    /// The master epoch it knows (-1 before any).
    pub epoch: i32,
    /// The master it knows.
    pub master: Option<i64>,
    /// The in-sync set and its epoch it knows.
    pub sync_set: BTreeSet<i64>,
    /// See `sync_set`.
    pub sync_epoch: i32,
    /// Every role it believed, in order.
    pub roles: Vec<RoleSeen>,
    /// Every request it sent a controller, in order (heartbeats included).
    pub sent: Vec<RemotingCommand>,
    /// Every NOTIFY_BROKER_ROLE_CHANGED it received.
    pub notified: Vec<RemotingCommand>,
}

/// What the test and the loop share.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) state: Mutex<BrokerState>,
    pub(crate) hung: AtomicBool,
    pub(crate) killed: AtomicBool,
    pub(crate) max_offset: AtomicI64,
    /// Slaves the master counts as caught up (its 1001 set, itself added).
    pub(crate) in_sync: Mutex<BTreeSet<i64>>,
}

impl Shared {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, BrokerState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}
