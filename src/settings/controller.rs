//! The controller's settings (Java's `ControllerConfig` keys under our names), each defined once
//! in [`CONTROLLER_KEYS`]: its Java name, the range its value must fall in and whether it changes
//! while the controller runs. The file loader, the environment and flags (through `validate`),
//! UPDATE_CONTROLLER_CONFIG, SIGHUP and the configuration reference's check all read that one
//! table. The peer list is parsed as Java's `controllerDLegerPeers` is written
//! (`n0-host:port;n1-host:port`).

use serde::{Deserialize, Serialize};
use thiserror::Error;

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
    /// Most requests waiting for their turn; more are answered SYSTEM_BUSY (Java:
    /// controllerRequestThreadPoolQueueCapacity).
    pub controller_max_pending_writes: usize,
    /// The leader serves, and names itself in 1005, only while a quorum acknowledged it this
    /// recently, in ms; shorter than the election timeout's lower bound, so no other peer can
    /// have been elected while it still serves.
    pub controller_leader_lease_ms: u64,
    /// A new leader starts no election of its own for this long, in ms, so that every live
    /// master has heartbeated to it first.
    pub controller_election_warm_up_ms: u64,
    /// The longest `heartbeatTimeoutMills` a broker may ask for, in ms (a longer one is clamped
    /// to it, a shorter one than 1 s to 1 s).
    pub controller_max_heartbeat_timeout_ms: u64,
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
    /// A file holding the secret every peer of the group shares (at least 16 bytes): every
    /// Raft frame and answer then also carries its HMAC, so no stranger's key is ever pinned
    /// and a peer whose store was rebuilt is pinned again. Empty: keys are pinned on first use.
    pub controller_peer_secret_file: String,
    /// With access control off, the networks (`,`-separated CIDR blocks or addresses) besides
    /// loopback that may send the requests that change the controller (its configuration,
    /// cleaning a group, an election an admin designates).
    pub controller_admin_networks: String,
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
            controller_leader_lease_ms: 400,
            controller_election_warm_up_ms: 10_000,
            controller_max_heartbeat_timeout_ms: 60_000,
            controller_max_live_brokers: 65_536,
            controller_peer_addresses_only: true,
            controller_peer_access_key: String::new(),
            controller_peer_tls_ca_file: String::new(),
            controller_peer_secret_file: String::new(),
            controller_admin_networks: String::new(),
        }
    }
}

/// When a setting's change takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// At once: UPDATE_CONTROLLER_CONFIG and SIGHUP apply it to the running controller.
    Runtime,
    /// At the next start.
    Restart,
}

/// One controller setting, defined once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerKey {
    /// Our key.
    pub key: &'static str,
    /// Java's name for it (`ControllerConfig`'s field), also accepted as the key.
    pub java: Option<&'static str>,
    /// The range a number must fall in, from every source; `None`: not a number.
    pub range: Option<(u64, u64)>,
    /// When a change takes effect.
    pub change: Change,
}

const fn key(
    key: &'static str,
    java: Option<&'static str>,
    range: Option<(u64, u64)>,
    change: Change,
) -> ControllerKey {
    ControllerKey { key, java, range, change }
}

/// An hour, in ms: the longest of the controller's periods and timeouts.
const HOUR_MS: u64 = 3_600_000;

/// Every controller setting, in the order [`ControllerSettings`] declares them.
pub const CONTROLLER_KEYS: &[ControllerKey] = {
    use Change::{Restart, Runtime};
    &[
        key("controller_mode", None, None, Restart),
        key("controller_group", Some("controllerDLegerGroup"), None, Restart),
        key("controller_peers", Some("controllerDLegerPeers"), None, Restart),
        key("controller_self_id", Some("controllerDLegerSelfId"), None, Restart),
        key("controller_bind_address", None, None, Restart),
        key("controller_store_path", Some("controllerStorePath"), None, Restart),
        key(
            "controller_scan_inactive_master_interval_ms",
            Some("scanInactiveMasterInterval"),
            Some((100, HOUR_MS)),
            Runtime,
        ),
        key("controller_elect_master_max_retry_count", Some("electMasterMaxRetryCount"), Some((1, 100)), Runtime),
        key("controller_enable_elect_unclean_master", Some("enableElectUncleanMaster"), None, Runtime),
        key("controller_notify_broker_role_changed", Some("notifyBrokerRoleChanged"), None, Runtime),
        key("controller_raft_heartbeat_ms", None, Some((10, 60_000)), Restart),
        key("controller_raft_election_timeout_min_ms", None, Some((20, HOUR_MS)), Restart),
        key("controller_raft_election_timeout_max_ms", None, Some((30, HOUR_MS)), Restart),
        key("controller_snapshot_every_entries", None, Some((1, 100_000_000)), Restart),
        key("controller_write_timeout_ms", None, Some((100, HOUR_MS)), Restart),
        key(
            "controller_max_pending_writes",
            Some("controllerRequestThreadPoolQueueCapacity"),
            Some((1, 1_000_000)),
            Restart,
        ),
        key("controller_leader_lease_ms", None, Some((10, HOUR_MS)), Restart),
        key("controller_election_warm_up_ms", None, Some((0, HOUR_MS)), Restart),
        key("controller_max_heartbeat_timeout_ms", None, Some((1_000, HOUR_MS)), Restart),
        key("controller_max_live_brokers", None, Some((1, 10_000_000)), Restart),
        key("controller_peer_addresses_only", None, None, Restart),
        key("controller_peer_access_key", None, None, Restart),
        key("controller_peer_tls_ca_file", None, None, Restart),
        key("controller_peer_secret_file", None, None, Restart),
        key("controller_admin_networks", None, None, Restart),
    ]
};

/// The definition of controller setting `key` (ours), if it is one.
pub fn controller_key(key: &str) -> Option<&'static ControllerKey> {
    CONTROLLER_KEYS.iter().find(|k| k.key == key)
}

/// One configured peer: its id and controller address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerAddr {
    /// The id (`n0`).
    pub id: String,
    /// `host:port`.
    pub addr: String,
}

/// Why `controller_peers` cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PeerListError {
    /// An item that is not `id-host:port`.
    #[error("{0:?} is not id-host:port")]
    NotIdHostPort(String),
    /// An id listed twice.
    #[error("peer id {0} listed twice")]
    Twice(String),
}

impl ControllerSettings {
    /// Whether a controller runs.
    pub fn enabled(&self) -> bool {
        self.controller_mode != ControllerMode::Off
    }

    /// The peers, split at the first `-` of each `;`-separated item, as Java does.
    pub fn peers(&self) -> Result<Vec<PeerAddr>, PeerListError> {
        let mut peers: Vec<PeerAddr> = Vec::new();
        for item in self.controller_peers.split(';').map(str::trim).filter(|i| !i.is_empty()) {
            let not_a_peer = || PeerListError::NotIdHostPort(item.to_owned());
            let (id, addr) = item.split_once('-').ok_or_else(not_a_peer)?;
            let (id, addr) = (id.trim(), addr.trim());
            if id.is_empty() || super::addr::split_host_port(addr).is_err() {
                return Err(not_a_peer());
            }
            if peers.iter().any(|p| p.id == id) {
                return Err(PeerListError::Twice(id.to_owned()));
            }
            peers.push(PeerAddr { id: id.to_owned(), addr: addr.to_owned() });
        }
        Ok(peers)
    }

    /// The peers as Java writes `controllerDLegerPeers` (`n0-host:port;n1-host:port`).
    pub fn peers_text(&self) -> String {
        let peers = self.peers().unwrap_or_default();
        peers.iter().map(|p| format!("{}-{}", p.id, p.addr)).collect::<Vec<_>>().join(";")
    }

    /// The address of this peer.
    pub fn self_peer(&self) -> Option<PeerAddr> {
        self.peers().ok()?.into_iter().find(|p| p.id == self.controller_self_id)
    }

    /// Checks what a running controller needs: every number in its range ([`CONTROLLER_KEYS`],
    /// the same ranges UPDATE_CONTROLLER_CONFIG holds a change to), the peers, and the Raft
    /// timings' order.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let invalid = |key, reason: String| Err(SettingsError::Invalid { key, reason });
        let values = serde_json::to_value(self).unwrap_or_default();
        for def in CONTROLLER_KEYS {
            let (Some((min, max)), Some(value)) = (def.range, values.get(def.key).and_then(|v| v.as_u64())) else {
                continue;
            };
            if !(min..=max).contains(&value) {
                return invalid(def.key, format!("must be between {min} and {max}"));
            }
        }
        if let Err(not_a_net) = super::addr::parse_nets(&self.controller_admin_networks) {
            return invalid("controller_admin_networks", not_a_net.to_string());
        }
        if !self.enabled() {
            return Ok(());
        }
        let peers = match self.peers() {
            Ok(peers) if !peers.is_empty() => peers,
            Ok(_) => return invalid("controller_peers", "must list the peers (n0-host:port;n1-host:port)".into()),
            Err(reason) => return invalid("controller_peers", reason.to_string()),
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
        if heartbeat >= min || min >= max {
            let reason = "needs controller_raft_heartbeat_ms < election timeout min < max".into();
            return invalid("controller_raft_election_timeout_min_ms", reason);
        }
        if self.controller_leader_lease_ms >= min {
            let reason = format!(
                "must be below controller_raft_election_timeout_min_ms ({min}): a leader cut off from its peers \
                 must stop serving before another can be elected"
            );
            return invalid("controller_leader_lease_ms", reason);
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
        assert_eq!(s.peers_text(), "n0-127.0.0.1:9878;n1-[::1]:9879");
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

    #[test]
    fn every_number_is_held_to_its_range_under_its_own_key_controller_on_or_off() {
        for (edit, key) in [
            (
                Box::new(|s: &mut ControllerSettings| s.controller_scan_inactive_master_interval_ms = 1)
                    as Box<dyn Fn(&mut ControllerSettings)>,
                "controller_scan_inactive_master_interval_ms",
            ),
            (
                Box::new(|s| s.controller_scan_inactive_master_interval_ms = 0),
                "controller_scan_inactive_master_interval_ms",
            ),
            (Box::new(|s| s.controller_elect_master_max_retry_count = 0), "controller_elect_master_max_retry_count"),
            (Box::new(|s| s.controller_max_live_brokers = 0), "controller_max_live_brokers"),
            (Box::new(|s| s.controller_max_pending_writes = 0), "controller_max_pending_writes"),
            (Box::new(|s| s.controller_snapshot_every_entries = 0), "controller_snapshot_every_entries"),
        ] {
            let mut s = ControllerSettings::default();
            edit(&mut s);
            let error = s.validate().unwrap_err();
            assert!(matches!(error, SettingsError::Invalid { key: k, .. } if k == key), "{key}: {error}");
        }
        assert_eq!(
            controller_key("controller_scan_inactive_master_interval_ms").map(|k| k.change),
            Some(Change::Runtime)
        );
        let keys: Vec<&str> = CONTROLLER_KEYS.iter().map(|k| k.key).collect();
        assert_eq!(keys, super::super::keys::fields::<ControllerSettings>(), "one definition per setting, in order");
    }
}
