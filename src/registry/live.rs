//! What the registry knows about each live broker instance (Java's `BrokerLiveInfo`).
//!
//! One broker process serves an address, so liveness is keyed by address alone; the cluster it
//! registered in is kept with it, and lookups by (cluster, address), as Java's `BrokerAddrInfo`
//! keys them, match only that cluster.

use crate::model::DataVersion;
use crate::origin::ConnId;

/// The live registration at one address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveBroker {
    /// The cluster it registered in.
    pub cluster: String,
    /// Its broker group.
    pub broker_name: String,
    /// Its id in the group.
    pub broker_id: i64,
    /// The MQVersion ordinal of its latest registration.
    pub version: i32,
    /// When the latest registration or heartbeat arrived (ms on the registry clock).
    pub last_update_ms: u64,
    /// How long the broker may stay silent.
    pub timeout_ms: u64,
    /// The topic-config version of its latest registration.
    pub data_version: DataVersion,
    /// The connection its latest registration came over.
    pub conn: ConnId,
    /// Its HA address, handed to its slaves.
    pub ha_server_addr: String,
    /// Fingerprint of the topic table its latest registration applied; `None` when that
    /// registration applied no topics (not master or prime slave).
    pub applied_topics: Option<u64>,
    /// The access key its latest registration was signed with, when access control checked it.
    pub access_key: Option<String>,
    /// Loaded from a route snapshot at start and not registered since: no connection, and it
    /// expires on its timeout counted from the start unless it registers.
    pub provisional: bool,
}

impl LiveBroker {
    /// Whether `other` holds what a route snapshot keeps of this one (all but the time, the
    /// connection and the access key): a re-registration that changes nothing.
    pub fn same_registration(&self, other: &LiveBroker) -> bool {
        (&self.cluster, &self.broker_name, self.broker_id, self.version, self.timeout_ms)
            == (&other.cluster, &other.broker_name, other.broker_id, other.version, other.timeout_ms)
            && (self.data_version, &self.ha_server_addr, self.applied_topics, self.provisional)
                == (other.data_version, &other.ha_server_addr, other.applied_topics, other.provisional)
    }
}
