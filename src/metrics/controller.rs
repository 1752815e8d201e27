//! The controller's Raft figures (`namesrv_controller_raft_*`): this peer's role, term, last
//! applied index, whether it knows a leader, and how often the leader changed; and its
//! elections ([`super::elections`]). Java's controller exports its role only through its own
//! OpenTelemetry metrics (`ControllerMetricsManager`'s `role` gauge and `elect_total`); these
//! are the Prometheus side of the same figures, updated from openraft's metrics as they change.

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
    /// The current term.
    pub term: u64,
    /// The index of the last applied (hence committed) entry.
    pub applied: u64,
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
    term: Gauge,
    applied: Gauge,
    leader_changes: Counter,
}

impl ControllerFigures {
    /// Registers the figures in `ns` (the `namesrv` prefix).
    pub fn register(&self, ns: &mut Registry) {
        let c = ns.sub_registry_with_prefix("controller");
        c.register("raft_leader", "1 while this controller peer is the Raft leader", self.leader.clone());
        c.register("raft_leader_known", "1 while this peer knows a Raft leader", self.leader_known.clone());
        c.register("raft_term", "The controller's current Raft term", self.term.clone());
        c.register("raft_applied_index", "Index of the last committed entry applied here", self.applied.clone());
        let changes = self.leader_changes.clone();
        c.register("raft_leader_changes", "Times this peer saw another Raft leader named", changes);
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

    /// Records `now`, counting a leader change when a leader other than `before`'s is named.
    pub fn observe(&self, before: RaftSample, now: RaftSample) {
        self.leader.set(i64::from(now.leader));
        self.leader_known.set(i64::from(now.leader_id.is_some()));
        self.term.set(i64::try_from(now.term).unwrap_or(i64::MAX));
        self.applied.set(i64::try_from(now.applied).unwrap_or(i64::MAX));
        if now.leader_id.is_some() && now.leader_id != before.leader_id {
            self.leader_changes.inc();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    #[test]
    fn role_term_index_and_leader_changes_are_exported() {
        let m = Metrics::new();
        let none = RaftSample::default();
        let led_by_1 = RaftSample { leader: false, leader_id: Some(1), term: 3, applied: 7 };
        let leading = RaftSample { leader: true, leader_id: Some(2), term: 4, applied: 9 };
        m.controller.observe(none, led_by_1);
        m.controller.observe(led_by_1, led_by_1);
        m.controller.observe(led_by_1, none);
        m.controller.observe(none, leading);
        let text = m.encode();
        for line in [
            "namesrv_controller_raft_leader 1",
            "namesrv_controller_raft_leader_known 1",
            "namesrv_controller_raft_term 4",
            "namesrv_controller_raft_applied_index 9",
            "namesrv_controller_raft_leader_changes_total 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
    }
}
