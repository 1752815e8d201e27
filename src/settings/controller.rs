//! The controller's settings (Java's `ControllerConfig` keys under our names; the Java names
//! are accepted through `JAVA_NAMES`), with the peer list parsed as Java's
//! `controllerDLegerPeers` is written (`n0-host:port;n1-host:port`).

use serde::{Deserialize, Serialize};

use super::{ControllerMode, SettingsError};

/// The RocketMQ 5 controller: whether it runs, its Raft peers, its state, its timings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ControllerSettings {
    /// `off`, `embedded` (Java: `enableControllerInNamesrv=true`) or `standalone` (no
    /// NameServer port, as Java's `mqcontroller`).
    pub controller_mode: ControllerMode,
    /// The Raft group's name, also 1005's `group` (Java: controllerDLegerGroup).
    pub controller_group: String,
    /// Every peer as `id-host:port`, `;`-separated (Java: controllerDLegerPeers); this peer's
    /// controller listener binds its port.
    pub controller_peers: String,
    /// This peer's id in `controller_peers` (Java: controllerDLegerSelfId).
    pub controller_self_id: String,
    /// Host the controller listener binds; empty: `bind_address`.
    pub controller_bind_address: String,
    /// Directory of the Raft log, vote and snapshot; empty: `controller` beside `kv_config_path`
    /// (Java: controllerStorePath).
    pub controller_store_path: String,
    /// Period of the sweep for groups whose master is dead, in ms (Java: scanInactiveMasterInterval).
    pub controller_scan_inactive_master_interval_ms: u64,
    /// Tries of an election the controller starts, when its write fails (Java: electMasterMaxRetryCount).
    pub controller_elect_master_max_retry_count: u32,
    /// Elect an out-of-sync replica when no in-sync one lives (Java: enableElectUncleanMaster).
    pub controller_enable_elect_unclean_master: bool,
    /// Tell a group's alive members of a new master at once (Java: notifyBrokerRoleChanged).
    pub controller_notify_broker_role_changed: bool,
    /// Raft heartbeat period, in ms.
    pub controller_raft_heartbeat_ms: u64,
    /// Raft election timeout, lower bound, in ms.
    pub controller_raft_election_timeout_min_ms: u64,
    /// Raft election timeout, upper bound, in ms.
    pub controller_raft_election_timeout_max_ms: u64,
    /// A Raft snapshot after this many entries.
    pub controller_snapshot_every_entries: u64,
    /// A write not committed within this time is answered with an error, in ms (Java waits 5 s).
    pub controller_write_timeout_ms: u64,
    /// Most requests waiting for their turn; more are answered SYSTEM_BUSY.
    pub controller_max_pending_writes: usize,
    /// The leader serves, and names itself in 1005, only while a quorum acknowledged it this
    /// recently, in ms.
    pub controller_leader_lease_ms: u64,
    /// Most brokers the liveness table holds; heartbeats of more are dropped.
    pub controller_max_live_brokers: usize,
    /// Raft frames only from the peers' addresses.
    pub controller_peer_addresses_only: bool,
    /// With access control on, the account (role `peer`, in the accounts file) this peer signs
    /// its Raft frames with; every peer names one, the same or each its own.
    pub controller_peer_access_key: String,
    /// With TLS on, the CA certificates (PEM) the links to the other peers trust; empty:
    /// `tls_client_ca_file`, else the system's.
    pub controller_peer_tls_ca_file: String,
}

impl Default for ControllerSettings {
    fn default() -> Self {
        Self {
            controller_mode: ControllerMode::Off,
            controller_group: "DefaultControllerGroup".into(),
            controller_peers: String::new(),
            controller_self_id: String::new(),
            controller_bind_address: String::new(),
            controller_store_path: String::new(),
            controller_scan_inactive_master_interval_ms: 5_000,
            controller_elect_master_max_retry_count: 3,
            controller_enable_elect_unclean_master: false,
            controller_notify_broker_role_changed: true,
            controller_raft_heartbeat_ms: 100,
            controller_raft_election_timeout_min_ms: 500,
            controller_raft_election_timeout_max_ms: 1_000,
            controller_snapshot_every_entries: 1_000,
            controller_write_timeout_ms: 5_000,
            controller_max_pending_writes: 1_024,
            controller_leader_lease_ms: 2_000,
            controller_max_live_brokers: 65_536,
            controller_peer_addresses_only: true,
            controller_peer_access_key: String::new(),
            controller_peer_tls_ca_file: String::new(),
        }
    }
}

/// One configured peer: its id and controller address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerAddr {
    /// The id (`n0`).
    pub id: String,
    /// `host:port`.
    pub addr: String,
}

impl ControllerSettings {
    /// Whether a controller runs.
    pub fn enabled(&self) -> bool {
        self.controller_mode != ControllerMode::Off
    }

    /// The peers, split at the first `-` of each `;`-separated item, as Java does.
    pub fn peers(&self) -> Result<Vec<PeerAddr>, String> {
        let mut peers: Vec<PeerAddr> = Vec::new();
        for item in self.controller_peers.split(';').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((id, addr)) = item.split_once('-') else {
                return Err(format!("{item:?} is not id-host:port"));
            };
            let (id, addr) = (id.trim(), addr.trim());
            if id.is_empty() || super::addr::split_host_port(addr).is_err() {
                return Err(format!("{item:?} is not id-host:port"));
            }
            if peers.iter().any(|p| p.id == id) {
                return Err(format!("peer id {id} listed twice"));
            }
            peers.push(PeerAddr { id: id.to_owned(), addr: addr.to_owned() });
        }
        Ok(peers)
    }

    /// The address of this peer.
    pub fn self_peer(&self) -> Option<PeerAddr> {
        self.peers().ok()?.into_iter().find(|p| p.id == self.controller_self_id)
    }

    /// Checks what a running controller needs.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let invalid = |key, reason: String| Err(SettingsError::Invalid { key, reason });
        if !self.enabled() {
            return Ok(());
        }
        let peers = match self.peers() {
            Ok(peers) if !peers.is_empty() => peers,
            Ok(_) => return invalid("controller_peers", "must list the peers (n0-host:port;n1-host:port)".into()),
            Err(reason) => return invalid("controller_peers", reason),
        };
        if !peers.iter().any(|p| p.id == self.controller_self_id) {
            let ids: Vec<&str> = peers.iter().map(|p| p.id.as_str()).collect();
            return invalid("controller_self_id", format!("must be one of the peers' ids {ids:?}"));
        }
        let (heartbeat, min, max) = (
            self.controller_raft_heartbeat_ms,
            self.controller_raft_election_timeout_min_ms,
            self.controller_raft_election_timeout_max_ms,
        );
        if heartbeat == 0 || heartbeat >= min || min >= max {
            let reason = "needs 0 < controller_raft_heartbeat_ms < election timeout min < max".into();
            return invalid("controller_raft_election_timeout_min_ms", reason);
        }
        if self.controller_write_timeout_ms == 0 || self.controller_max_pending_writes == 0 {
            return invalid(
                "controller_write_timeout_ms",
                "write timeout and max pending writes must be at least 1".into(),
            );
        }
        if self.controller_max_live_brokers == 0 || self.controller_scan_inactive_master_interval_ms == 0 {
            let reason = "max live brokers and the sweep interval must be at least 1".into();
            return invalid("controller_max_live_brokers", reason);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_parse_as_java_writes_them_and_bad_lists_are_named() {
        let s = ControllerSettings {
            controller_mode: ControllerMode::Embedded,
            controller_peers: "n0-127.0.0.1:9878; n1-[::1]:9879;".into(),
            controller_self_id: "n1".into(),
            ..Default::default()
        };
        let peers = s.peers().unwrap();
        assert_eq!((peers[1].id.as_str(), peers[1].addr.as_str()), ("n1", "[::1]:9879"));
        assert!(s.validate().is_ok());
        let bad = |peers: &str, me: &str| {
            let s = ControllerSettings { controller_peers: peers.into(), controller_self_id: me.into(), ..s.clone() };
            s.validate().unwrap_err().to_string()
        };
        assert!(bad("n0", "n0").contains("not id-host:port"));
        assert!(bad("n0-a:1;n0-b:2", "n0").contains("listed twice"));
        assert!(bad("n0-a:1", "n9").contains("controller_self_id"));
        assert!(bad("", "n0").contains("controller_peers"));
    }
}
