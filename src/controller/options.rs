//! What the controller runs with, taken from the settings once at start.

use std::path::PathBuf;
use std::time::Duration;

use super::raft::{node_id, Peer};

/// The controller's options.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// `controllerDLegerGroup`: the Raft cluster name and 1005's `group`.
    pub group: String,
    /// This peer's id (`controllerDLegerSelfId`).
    pub self_name: String,
    /// Every peer, this one included, in configured order.
    pub peers: Vec<Peer>,
    /// Where the log, vote and snapshot live.
    pub store_dir: PathBuf,
    /// Raft heartbeat period.
    pub raft_heartbeat: Duration,
    /// Raft election timeout range.
    pub raft_election_min: Duration,
    /// See `raft_election_min`.
    pub raft_election_max: Duration,
    /// A snapshot after this many entries.
    pub snapshot_every_entries: u64,
    /// A write not committed in this time is answered with an error.
    pub write_timeout: Duration,
    /// Most requests waiting for their turn.
    pub max_pending_writes: usize,
    /// The leader answers only while a quorum acknowledged it this recently.
    pub leader_lease: Duration,
    /// Send NOTIFY_BROKER_ROLE_CHANGED after elections (`notifyBrokerRoleChanged`).
    pub notify_broker_role_changed: bool,
    /// Elect out-of-sync replicas when no in-sync one lives (`enableElectUncleanMaster`).
    pub elect_unclean_master: bool,
    /// Tries of a controller-triggered election that failed to commit (`electMasterMaxRetryCount`).
    pub elect_max_retries: u32,
    /// Period of the sweep for groups whose master is dead (`scanInactiveMasterInterval`).
    pub sweep_interval: Duration,
    /// Most brokers the liveness table holds.
    pub max_live_brokers: usize,
}

impl ControllerOptions {
    /// This peer's Raft node id.
    pub fn self_id(&self) -> u64 {
        node_id(&self.self_name)
    }

    /// The address of peer `id`, when it is configured.
    pub fn peer(&self, id: u64) -> Option<&Peer> {
        self.peers.iter().find(|p| node_id(&p.name) == id)
    }

    /// `id:addr;` per peer, as 1005 lists them.
    pub fn peers_text(&self) -> String {
        self.peers.iter().map(|p| format!("{}:{};", p.name, p.addr)).collect()
    }

    /// The openraft configuration (validated by the caller).
    pub fn raft_config(&self) -> openraft::Config {
        let ms = |d: Duration| d.as_millis() as u64;
        openraft::Config {
            cluster_name: self.group.clone(),
            heartbeat_interval: ms(self.raft_heartbeat),
            election_timeout_min: ms(self.raft_election_min),
            election_timeout_max: ms(self.raft_election_max),
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(self.snapshot_every_entries),
            max_in_snapshot_log_to_keep: 100,
            ..Default::default()
        }
    }
}
