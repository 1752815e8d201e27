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
    pub provisional: Option<FromSnapshot>,
}

/// Where a provisional broker came from: the route snapshot loaded at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FromSnapshot {
    /// When it was loaded (ms on the registry clock).
    pub loaded_at_ms: u64,
    /// How long it had been silent when loaded: its silence when the snapshot was taken plus
    /// the snapshot's age (no heartbeat could reach a server that was down).
    pub silent_at_load_ms: u64,
    /// How old the snapshot was when it was loaded.
    pub age_at_load_ms: u64,
}

impl LiveBroker {
    /// Whether it was loaded from a route snapshot and has not registered since.
    pub fn is_provisional(&self) -> bool {
        self.provisional.is_some()
    }

    /// How long since it was last heard from at `now_ms`: for a provisional broker not heard
    /// since the load, counted from its last heartbeat before the snapshot, not from the load.
    pub fn silent_ms(&self, now_ms: u64) -> u64 {
        let since = now_ms.saturating_sub(self.last_update_ms);
        match self.provisional {
            Some(from) if self.last_update_ms == from.loaded_at_ms => since.saturating_add(from.silent_at_load_ms),
            _ => since,
        }
    }

    /// How long it has left at `now_ms` if it stays silent. (A provisional broker's timeout
    /// counts from the load: a server that was down heard nobody.)
    pub fn expires_in_ms(&self, now_ms: u64) -> u64 {
        self.timeout_ms.saturating_sub(now_ms.saturating_sub(self.last_update_ms))
    }

    /// How old the snapshot it was loaded from is at `now_ms`; `None` when it registered.
    pub fn snapshot_age_ms(&self, now_ms: u64) -> Option<u64> {
        self.provisional.map(|from| now_ms.saturating_sub(from.loaded_at_ms).saturating_add(from.age_at_load_ms))
    }

    /// Whether `other` holds what a route snapshot keeps of this one (all but the time, the
    /// connection and the access key): a re-registration that changes nothing.
    pub fn same_registration(&self, other: &LiveBroker) -> bool {
        (&self.cluster, &self.broker_name, self.broker_id, self.version, self.timeout_ms)
            == (&other.cluster, &other.broker_name, other.broker_id, other.version, other.timeout_ms)
            && (self.data_version, &self.ha_server_addr, self.applied_topics, self.is_provisional())
                == (other.data_version, &other.ha_server_addr, other.applied_topics, other.is_provisional())
    }
}
