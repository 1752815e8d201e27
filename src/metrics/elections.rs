//! The controller's elections and broker groups (`namesrv_controller_*`): elections by cause
//! and result, the time from a master's loss to NOTIFY_BROKER_ROLE_CHANGED, and, on the serving
//! leader, each group's alive brokers and in-sync set. Java's controller counts elections
//! (`elect_total`) but not the failover time; it exports neither per group.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Every `cause` of `namesrv_controller_elections_total`: a master's connection closed, its
/// heartbeats stopped, the sweep found it dead, a broker asked (CONTROLLER_ELECT_MASTER with
/// its own id), or an administrator designated a master (`designateElect`, or broker id -1).
pub const ELECTION_CAUSES: [&str; 5] = ["connection_closed", "heartbeat_timeout", "sweep", "broker", "admin"];

/// The causes that are a master's loss, each a `cause` of `namesrv_controller_failover_seconds`.
pub const FAILOVER_CAUSES: [&str; 3] = ["connection_closed", "heartbeat_timeout", "sweep"];

/// Every `result` of `namesrv_controller_elections_total`: a new master, the old one kept
/// (2011), no candidate alive (2004, 2012), refused otherwise (an unknown group or broker), or
/// not committed (no quorum, leadership lost).
pub const ELECTION_RESULTS: [&str; 5] = ["elected", "master_kept", "no_candidate", "refused", "failed"];

/// Upper bounds of the failover histogram, in seconds: 5 ms to 30 s.
const FAILOVER_BUCKETS: [f64; 12] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// `cause` and `result` of an election.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ElectionLabels {
    cause: &'static str,
    result: &'static str,
}

/// `cause` of a failover.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CauseLabel {
    cause: &'static str,
}

/// `group` (the broker name) of a per-group figure.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GroupLabel {
    group: String,
}

/// One broker group as the serving leader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupFigure {
    /// The broker name.
    pub name: String,
    /// Replicas alive (heartbeating) on this peer.
    pub alive: usize,
    /// Members of the SyncStateSet.
    pub in_sync: usize,
    /// A master is elected and alive.
    pub has_live_master: bool,
}

fn failover_histogram() -> Histogram {
    Histogram::new(FAILOVER_BUCKETS)
}

/// The election and group figures; zero (groups absent) when no controller leads here.
#[derive(Debug)]
pub struct ElectionFigures {
    elections: Family<ElectionLabels, Counter>,
    failover: Family<CauseLabel, Histogram, fn() -> Histogram>,
    alive: Family<GroupLabel, Gauge>,
    in_sync: Family<GroupLabel, Gauge>,
    groups: Gauge,
    without_master: Gauge,
    serving: Gauge,
}

impl Default for ElectionFigures {
    fn default() -> Self {
        let figures = ElectionFigures {
            elections: Family::default(),
            failover: Family::new_with_constructor(failover_histogram),
            alive: Family::default(),
            in_sync: Family::default(),
            groups: Gauge::default(),
            without_master: Gauge::default(),
            serving: Gauge::default(),
        };
        for cause in ELECTION_CAUSES {
            for result in ELECTION_RESULTS {
                drop(figures.elections.get_or_create(&ElectionLabels { cause, result }));
            }
        }
        for cause in FAILOVER_CAUSES {
            drop(figures.failover.get_or_create(&CauseLabel { cause }));
        }
        figures
    }
}

impl ElectionFigures {
    /// Registers the figures in `c` (the `namesrv_controller` prefix).
    pub fn register(&self, c: &mut Registry) {
        c.register("elections", "Master elections, by cause and result", self.elections.clone());
        let failover = self.failover.clone();
        c.register("failover_seconds", "Time from a master's loss to NOTIFY_BROKER_ROLE_CHANGED", failover);
        c.register("group_brokers_alive", "Brokers of a group alive on the serving leader", self.alive.clone());
        c.register("group_sync_state_set_size", "Members of a group's SyncStateSet", self.in_sync.clone());
        c.register("groups", "Broker groups the serving leader knows", self.groups.clone());
        let without = self.without_master.clone();
        c.register("groups_without_master", "Broker groups with no alive master, on the serving leader", without);
        let serving = self.serving.clone();
        c.register("serving", "1 while this peer serves as the leader (first commit applied, quorum heard)", serving);
    }

    /// Counts an election that ended (`cause` of [`ELECTION_CAUSES`], `result` of [`ELECTION_RESULTS`]).
    pub fn election(&self, cause: &'static str, result: &'static str) {
        self.elections.get_or_create(&ElectionLabels { cause, result }).inc();
    }

    /// Records a failover of `seconds` from a master's loss (`cause` of [`FAILOVER_CAUSES`]).
    pub fn failover(&self, cause: &'static str, seconds: f64) {
        self.failover.get_or_create(&CauseLabel { cause }).observe(seconds);
    }

    /// Replaces the per-group figures with `groups`; `serving`: this peer serves as the leader
    /// (else `groups` is empty).
    pub fn set_groups(&self, serving: bool, groups: &[GroupFigure]) {
        self.serving.set(i64::from(serving));
        self.alive.clear();
        self.in_sync.clear();
        for g in groups {
            let label = GroupLabel { group: g.name.clone() };
            self.alive.get_or_create(&label).set(g.alive as i64);
            self.in_sync.get_or_create(&label).set(g.in_sync as i64);
        }
        self.groups.set(groups.len() as i64);
        self.without_master.set(groups.iter().filter(|g| !g.has_live_master).count() as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    #[test]
    fn elections_are_zero_until_counted_and_groups_are_replaced() {
        let m = Metrics::new();
        let e = &m.controller.elections;
        e.election("connection_closed", "elected");
        e.failover("connection_closed", 0.02);
        let group =
            |name: &str, has_live_master| GroupFigure { name: name.into(), alive: 2, in_sync: 1, has_live_master };
        e.set_groups(true, &[group("a", true), group("b", false)]);
        e.set_groups(true, &[group("b", false)]);
        let text = m.encode();
        for line in [
            r#"namesrv_controller_elections_total{cause="connection_closed",result="elected"} 1"#,
            r#"namesrv_controller_elections_total{cause="admin",result="failed"} 0"#,
            r#"namesrv_controller_failover_seconds_count{cause="connection_closed"} 1"#,
            r#"namesrv_controller_failover_seconds_count{cause="sweep"} 0"#,
            r#"namesrv_controller_group_brokers_alive{group="b"} 2"#,
            r#"namesrv_controller_group_sync_state_set_size{group="b"} 1"#,
            "namesrv_controller_groups 1",
            "namesrv_controller_groups_without_master 1",
            "namesrv_controller_serving 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
        assert!(!text.contains(r#"group="a""#), "a group gone is no longer exported");
    }
}
