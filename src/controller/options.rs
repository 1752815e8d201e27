//! What the controller runs with, taken from the settings once at start.

use std::path::PathBuf;
use std::time::Duration;

use namesrv_controller_core::liveness::DEFAULT_TIMEOUT;

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
    /// How long a new leader starts no election of its own.
    pub election_warm_up: Duration,
    /// The range a broker's heartbeat timeout is clamped to.
    pub heartbeat_timeouts: (Duration, Duration),
    /// The share of the write queue one source may hold, in percent.
    pub source_share_percent: u32,
    /// The file with the secret the peers share, if one is set.
    pub peer_secret_file: Option<PathBuf>,
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

    /// The most requests one source may have waiting, of `max`.
    pub fn source_share(&self, max: usize) -> usize {
        (max * self.source_share_percent as usize / 100).max(1)
    }

    /// A broker's asked heartbeat timeout (ms; absent or not positive: Java's default) in the
    /// clamped range.
    pub fn heartbeat_timeout(&self, asked_ms: Option<i64>) -> Duration {
        let (least, most) = self.heartbeat_timeouts;
        let asked = asked_ms.filter(|ms| *ms > 0).map_or(DEFAULT_TIMEOUT, |ms| Duration::from_millis(ms as u64));
        asked.clamp(least, most)
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
            max_in_snapshot_log_to_keep: self.snapshot_every_entries.min(100),
            ..Default::default()
        }
    }
}

impl ControllerOptions {
    /// The options the settings give, when a controller runs.
    pub fn from_settings(settings: &crate::settings::Settings) -> Option<ControllerOptions> {
        let c = &settings.controller;
        if !c.enabled() {
            return None;
        }
        let peers = c.peers().ok()?.into_iter().map(|p| Peer { name: p.id, addr: p.addr }).collect();
        let store_dir = match c.controller_store_path.trim() {
            "" => std::path::Path::new(&settings.state.kv_config_path)
                .parent()
                .map_or_else(|| PathBuf::from("controller"), |dir| dir.join("controller")),
            path => PathBuf::from(path),
        };
        let ms = Duration::from_millis;
        Some(ControllerOptions {
            group: c.controller_group.clone(),
            self_name: c.controller_self_id.clone(),
            peers,
            store_dir,
            raft_heartbeat: ms(c.controller_raft_heartbeat_ms),
            raft_election_min: ms(c.controller_raft_election_timeout_min_ms),
            raft_election_max: ms(c.controller_raft_election_timeout_max_ms),
            snapshot_every_entries: c.controller_snapshot_every_entries,
            write_timeout: ms(c.controller_write_timeout_ms),
            max_pending_writes: c.controller_max_pending_writes,
            leader_lease: ms(c.controller_leader_lease_ms),
            notify_broker_role_changed: c.controller_notify_broker_role_changed,
            elect_unclean_master: c.controller_enable_elect_unclean_master,
            elect_max_retries: c.controller_elect_master_max_retry_count,
            sweep_interval: ms(c.controller_scan_inactive_master_interval_ms),
            max_live_brokers: c.controller_max_live_brokers,
            election_warm_up: ms(c.controller_election_warm_up_ms),
            heartbeat_timeouts: (Duration::from_secs(1), ms(c.controller_max_heartbeat_timeout_ms)),
            source_share_percent: settings.limits.peer_share_percent,
            peer_secret_file: Some(c.controller_peer_secret_file.trim()).filter(|p| !p.is_empty()).map(PathBuf::from),
        })
    }

    /// The IP addresses of the other peers (names resolved now), which Raft frames come from.
    pub fn peer_ips(&self) -> std::collections::HashSet<std::net::IpAddr> {
        let mut ips = std::collections::HashSet::new();
        for peer in &self.peers {
            if let Ok((host, port)) = crate::settings::addr::split_host_port(&peer.addr) {
                ips.extend(crate::settings::addr::resolve(&host, port).unwrap_or_default().iter().map(|a| a.ip()));
            }
        }
        ips
    }
}
