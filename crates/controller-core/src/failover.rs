//! What the serving leader decides from liveness: which brokers that went were masters, which
//! groups have a dead master while a replica lives (the sweep elects for them), whom to tell of
//! a new master, how each group stands, and when a leader has heard every broker long enough to
//! start elections of its own. Pure: the caller passes the tables, a liveness view and the time.

use std::time::{Duration, Instant};

use namesrv_protocol::controller::body::MemberGroup;

use crate::decision::LiveView;
use crate::liveness::LiveKey;
use crate::ReplicaTables;

/// Whether the broker `key` names is its group's master (same cluster, same id).
pub fn is_master(tables: &ReplicaTables, key: &LiveKey) -> bool {
    tables.group(&key.name).is_some_and(|g| g.master() == Some(key.id) && g.cluster() == key.cluster)
}

/// The groups whose master is not alive while another replica is: a master that went without
/// the leader seeing it go (a connection to another peer, a leader change) is replaced here.
pub fn orphaned_groups(tables: &ReplicaTables, live: &dyn LiveView) -> Vec<String> {
    tables
        .groups()
        .filter(|(name, g)| {
            g.master().is_some_and(|m| live.live(g.cluster(), name, m).is_none())
                && g.replicas().keys().any(|id| live.live(g.cluster(), name, *id).is_some())
        })
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// The addresses of the members of `group` (named `name`) alive now: whom to tell of its new
/// master.
pub fn alive_members(group: &MemberGroup, name: &str, live: &dyn LiveView) -> Vec<String> {
    group
        .broker_addrs
        .iter()
        .filter(|(id, _)| live.live(&group.cluster, name, **id).is_some())
        .map(|(_, addr)| addr.clone())
        .collect()
}

/// How one group stands, as the leader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupHealth {
    /// The broker name.
    pub name: String,
    /// Replicas alive (heartbeating to this peer).
    pub alive: usize,
    /// Members of the in-sync set.
    pub in_sync: usize,
    /// A master is elected and alive.
    pub has_live_master: bool,
}

/// How every group stands.
pub fn group_health(tables: &ReplicaTables, live: &dyn LiveView) -> Vec<GroupHealth> {
    tables
        .groups()
        .map(|(name, g)| {
            let alive = |id: i64| live.live(g.cluster(), name, id).is_some();
            GroupHealth {
                name: name.to_owned(),
                alive: g.replicas().keys().filter(|id| alive(**id)).count(),
                in_sync: g.sync_set().len(),
                has_live_master: g.master().is_some_and(alive),
            }
        })
        .collect()
}

/// Whether a leader started at `started` has, at `now`, waited `warm_up` (the longest heartbeat
/// timeout it may need to hear every broker): before that, a master it has not heard from may
/// just not have reached it yet, and it elects nobody on its own.
pub fn warmed_up(started: Instant, now: Instant, warm_up: Duration) -> bool {
    now >= started + warm_up
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::decide::{decide, DecideOptions, Op};
    use crate::decision::LiveFacts;

    struct Alive(Vec<i64>);

    impl LiveView for Alive {
        fn live(&self, _: &str, _: &str, id: i64) -> Option<LiveFacts> {
            self.0.contains(&id).then_some(LiveFacts { epoch: 0, max_offset: 0, priority: 0 })
        }
    }

    /// Group g of cluster c with replicas 1 and 2, master 1.
    fn tables() -> ReplicaTables {
        let mut t = ReplicaTables::default();
        let everyone = Alive(vec![1, 2]);
        for op in [
            Op::ApplyBrokerId { cluster: "c".into(), name: "g".into(), id: 1, check_code: "a:1;1".into() },
            Op::ApplyBrokerId { cluster: "c".into(), name: "g".into(), id: 2, check_code: "a:2;1".into() },
            Op::ElectMaster { name: "g".into(), requester: 1, designate: false },
        ] {
            let event = decide(&t, &op, &everyone, DecideOptions::default()).event.expect("a change");
            t.apply(&event);
        }
        t
    }

    #[test]
    fn a_group_is_orphaned_while_its_master_is_dead_and_a_replica_lives() {
        let t = tables();
        let key = |id| LiveKey { cluster: "c".into(), name: "g".into(), id };
        assert!(is_master(&t, &key(1)) && !is_master(&t, &key(2)));
        assert!(!is_master(&t, &LiveKey { cluster: "other".into(), ..key(1) }), "another cluster's broker 1");
        assert!(orphaned_groups(&t, &Alive(vec![1, 2])).is_empty());
        assert_eq!(orphaned_groups(&t, &Alive(vec![2])), ["g"]);
        assert!(orphaned_groups(&t, &Alive(vec![])).is_empty(), "nobody to elect");
        let health = group_health(&t, &Alive(vec![2]));
        assert_eq!(health, [GroupHealth { name: "g".into(), alive: 1, in_sync: 1, has_live_master: false }]);
    }

    #[test]
    fn only_alive_members_are_told_and_a_leader_warms_up_for_its_longest_timeout() {
        let group = MemberGroup {
            cluster: "c".into(),
            broker_name: "g".into(),
            broker_addrs: BTreeMap::from([(1, "a:1".to_owned()), (2, "a:2".to_owned())]),
        };
        assert_eq!(alive_members(&group, "g", &Alive(vec![2])), ["a:2"]);
        let start = Instant::now();
        assert!(!warmed_up(start, start + Duration::from_millis(9_999), Duration::from_secs(10)));
        assert!(warmed_up(start, start + Duration::from_secs(10), Duration::from_secs(10)));
    }
}
