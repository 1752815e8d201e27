//! The controller's Raft figures (`namesrv_controller_raft_*`): this peer's role, whether it
//! knows a leader, how often the leader and the term changed, and on the leader how far each
//! peer lags; and its elections ([`super::elections`]). Java's controller exports its role only
//! through its own OpenTelemetry metrics (`ControllerMetricsManager`'s `role` gauge and
//! `elect_total`); these are the Prometheus side of the same figures, updated from openraft's
//! metrics as they change. The term and log index themselves are not published: `/metrics`
//! is open, and they are what a forged Raft frame would need.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::elections::ElectionFigures;

/// What openraft last reported about this peer, as exported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RaftSample {
    /// This peer leads.
    pub leader: bool,
    /// The leader's node id, when one is known.
    pub leader_id: Option<u64>,
    /// The current term (counted when it changes, never exported).
    pub term: u64,
}

/// The `peer` label of a replication lag.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PeerLabel {
    peer: String,
}

/// Why the controller refused a request or heartbeat it took no action on, as counted.
pub const REFUSALS: [&str; 4] = ["bound_elsewhere", "not_heard", "unknown_replica", "queue_share"];

/// The `reason` label of a refusal.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// The controller's figures; zero (and never changed) when no controller runs.
#[derive(Debug, Default)]
pub struct ControllerFigures {
    /// Elections, failovers and broker groups.
    pub elections: ElectionFigures,
    refused: Family<ReasonLabel, Counter>,
    leader: Gauge,
    leader_known: Gauge,
    enabled: Gauge,
    term_changes: Counter,
    leader_changes: Counter,
    lag: Family<PeerLabel, Gauge>,
}

impl ControllerFigures {
    /// Registers the figures in `ns` (the `namesrv` prefix).
    pub fn register(&self, ns: &mut Registry) {
        let c = ns.sub_registry_with_prefix("controller");
        c.register("raft_leader", "1 while this controller peer is the Raft leader", self.leader.clone());
        c.register("raft_leader_known", "1 while this peer knows a Raft leader", self.leader_known.clone());
        c.register("enabled", "1 while a controller runs in this process", self.enabled.clone());
        let changes = self.leader_changes.clone();
        c.register("raft_leader_changes", "Times this peer saw another Raft leader named", changes);
        c.register("raft_term_changes", "Raft terms this peer moved into since it started", self.term_changes.clone());
        let lag = self.lag.clone();
        c.register("raft_replication_lag", "On the leader: log entries each other peer lacks", lag);
        for reason in REFUSALS {
            drop(self.refused.get_or_create(&ReasonLabel { reason }));
        }
        let refused = self.refused.clone();
        c.register("refused", "Requests and heartbeats refused for what they claimed, by reason", refused);
        self.elections.register(c);
    }

    /// Counts a refusal for `reason` (one of [`REFUSALS`]).
    pub fn refused(&self, reason: &'static str) {
        self.refused.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Marks a controller as running in this process.
    pub fn enable(&self) {
        self.enabled.set(1);
    }

    /// Records `now`, counting a leader change when a leader other than `before`'s is named,
    /// and a term change when the term moved.
    pub fn observe(&self, before: RaftSample, now: RaftSample) {
        self.leader.set(i64::from(now.leader));
        self.leader_known.set(i64::from(now.leader_id.is_some()));
        if now.leader_id.is_some() && now.leader_id != before.leader_id {
            self.leader_changes.inc();
        }
        if now.term > before.term {
            self.term_changes.inc();
        }
    }

    /// Sets how many entries each other peer lacks (`peer`, lag), as the leader sees it; an
    /// empty list (a follower) clears them.
    pub fn lags(&self, lags: &[(String, u64)]) {
        self.lag.clear();
        for (peer, lag) in lags {
            self.lag.get_or_create(&PeerLabel { peer: peer.clone() }).set(i64::try_from(*lag).unwrap_or(i64::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    #[test]
    fn role_changes_and_lags_are_exported_and_never_the_term_or_index() {
        let m = Metrics::new();
        let none = RaftSample::default();
        let led_by_1 = RaftSample { leader: false, leader_id: Some(1), term: 3 };
        let leading = RaftSample { leader: true, leader_id: Some(2), term: 4 };
        m.controller.enable();
        m.controller.observe(none, led_by_1);
        m.controller.observe(led_by_1, led_by_1);
        m.controller.observe(led_by_1, RaftSample { term: 3, ..none });
        m.controller.observe(RaftSample { term: 3, ..none }, leading);
        m.controller.lags(&[("n0".into(), 0), ("n2".into(), 12)]);
        let text = m.encode();
        for line in [
            "namesrv_controller_enabled 1",
            "namesrv_controller_raft_leader 1",
            "namesrv_controller_raft_leader_known 1",
            "namesrv_controller_raft_leader_changes_total 2",
            "namesrv_controller_raft_term_changes_total 2",
            "namesrv_controller_raft_replication_lag{peer=\"n2\"} 12",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
        assert!(!text.contains("raft_term ") && !text.contains("index"), "{text}");
        m.controller.lags(&[]);
        assert!(!m.encode().contains("replication_lag{"), "a follower shows no lags");
    }
}
