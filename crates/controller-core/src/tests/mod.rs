//! The state machine's decisions and applies, row by row (`decide`), the election policy
//! (`elect`), and seeded random histories checked against the invariants (`properties`).

mod bounds;
mod decide;
mod elect;
mod properties;

use std::collections::BTreeMap;

use crate::decide::{decide, Answer, DecideOptions, Decision, Op};
use crate::decision::{LiveFacts, LiveView};
use crate::{Applied, ReplicaTables};

/// A liveness view made by hand: alive brokers by (cluster, name, id).
#[derive(Debug, Default, Clone)]
pub(super) struct Alive(pub BTreeMap<(String, String, i64), LiveFacts>);

impl Alive {
    pub(super) fn with(mut self, cluster: &str, name: &str, id: i64, epoch: i32, max_offset: i64) -> Self {
        let facts = LiveFacts { epoch, max_offset, priority: i32::MAX };
        self.0.insert((cluster.into(), name.into(), id), facts);
        self
    }

    pub(super) fn priority(mut self, cluster: &str, name: &str, id: i64, priority: i32) -> Self {
        if let Some(f) = self.0.get_mut(&(cluster.into(), name.into(), id)) {
            f.priority = priority;
        }
        self
    }
}

impl LiveView for Alive {
    fn live(&self, cluster: &str, name: &str, id: i64) -> Option<LiveFacts> {
        self.0.get(&(cluster.to_owned(), name.to_owned(), id)).copied()
    }
}

/// Decides `op` and applies its event (which must apply), returning the answer.
pub(super) fn run(t: &mut ReplicaTables, op: Op, live: &Alive) -> Decision {
    let decision = decide(t, &op, live, DecideOptions::default());
    if let Some(event) = &decision.event {
        assert_eq!(t.apply(event), Applied::Done, "{op:?} decided {event:?}");
    }
    t.check().unwrap();
    decision
}

/// A group `cb` in cluster `c` with brokers 1..=n registered at `a:<id>`.
pub(crate) fn group_of(n: i64) -> ReplicaTables {
    let mut t = ReplicaTables::default();
    for id in 1..=n {
        let op = Op::ApplyBrokerId { cluster: "c".into(), name: "cb".into(), id, check_code: format!("a:{id};{id}") };
        assert_eq!(run(&mut t, op, &Alive::default()).answer, Ok(applied()));
    }
    t
}

/// Broker `id` of `cb` asks to be elected.
pub(super) fn elect(id: i64, designate: bool) -> Op {
    Op::ElectMaster { name: "cb".into(), requester: id, designate }
}

/// IdApplied's answer for group cb of cluster c.
pub(super) fn applied() -> Answer {
    Answer::IdApplied { cluster: "c".into(), name: "cb".into() }
}
