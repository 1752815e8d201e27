//! Seeded random histories of requests (drawn from small pools of groups, ids, addresses and
//! liveness), some decided on a state several steps old as a deposed or slow leader would:
//! after every step the invariants hold — epochs only grow, one master per (group, epoch),
//! every group passes its own check, an event applied twice changes nothing the second time,
//! and the tables survive a snapshot round trip unchanged.

use std::collections::BTreeMap;

use namesrv_protocol::controller::body::SyncStateSet;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed};

use super::Alive;
use crate::decide::{decide, DecideOptions, Op};
use crate::{Applied, ReplicaTables};

const NAMES: [&str; 2] = ["g1", "g2"];

fn op() -> impl Strategy<Value = Op> {
    let name = (0..NAMES.len()).prop_map(|i| NAMES[i].to_owned());
    prop_oneof![
        (name.clone(), 1..5i64, 0..3u8).prop_map(|(name, id, who)| Op::ApplyBrokerId {
            cluster: "c".into(),
            name,
            id,
            check_code: format!("a:{id};{who}"),
        }),
        (name.clone(), 1..5i64, 0..3u8).prop_map(|(name, id, at)| Op::Register {
            cluster: "c".into(),
            name,
            id,
            address: format!("a:{id}:{at}"),
        }),
        (name.clone(), -1..5i64, any::<bool>()).prop_map(|(name, requester, designate)| Op::ElectMaster {
            name,
            requester,
            designate
        }),
        (name.clone(), 1..5i64, 0..4i32, vec(1..5i64, 0..4), 0..4i32).prop_map(|(name, master_id, me, ids, se)| {
            let set = SyncStateSet { ids: ids.into_iter().collect(), epoch: se };
            Op::AlterSyncStateSet { name, master_id, master_epoch: me, set }
        }),
        (name, prop::option::of("[1-4];[1-4]"), any::<bool>()).prop_map(|(name, ids, clean_living)| {
            Op::CleanBrokerData { cluster: Some("c".into()), name, ids, clean_living }
        }),
    ]
}

/// One step: a request decided on a state `lag` steps old, with brokers `alive` (a bit per
/// id) alive at epoch `epoch` and offsets by id.
#[derive(Debug, Clone)]
struct Step {
    op: Op,
    lag: usize,
    alive: u8,
    unclean: bool,
}

fn step() -> impl Strategy<Value = Step> {
    (op(), prop_oneof![4 => Just(0usize), 1 => 1..4usize], any::<u8>(), any::<bool>())
        .prop_map(|(op, lag, alive, unclean)| Step { op, lag, alive, unclean })
}

fn liveness(bits: u8) -> Alive {
    let mut live = Alive::default();
    for name in NAMES {
        for id in 1..5i64 {
            if bits & (1 << (id - 1 + if name == "g2" { 4 } else { 0 })) != 0 {
                live = live.with("c", name, id, (bits % 3) as i32, id * 1_000_000_000_000);
            }
        }
    }
    live
}

/// What the history has seen: per group generation (bumped when a group is removed) its last
/// epochs and the master of every master epoch.
#[derive(Default)]
struct History {
    generation: BTreeMap<String, u32>,
    epochs: BTreeMap<(String, u32), (i32, i32)>,
    masters: BTreeMap<(String, u32, i32), Option<i64>>,
}

impl History {
    fn observe(&mut self, before: &ReplicaTables, after: &ReplicaTables) -> Result<(), TestCaseError> {
        for name in NAMES {
            if before.group(name).is_some() && after.group(name).is_none() {
                *self.generation.entry(name.to_owned()).or_default() += 1;
            }
            let Some(g) = after.group(name) else { continue };
            let generation = self.generation.get(name).copied().unwrap_or_default();
            let key = (name.to_owned(), generation);
            let (me, se) = self.epochs.get(&key).copied().unwrap_or((0, 0));
            prop_assert!(g.master_epoch() >= me && g.sync_epoch() >= se, "epochs went back in {name}");
            self.epochs.insert(key, (g.master_epoch(), g.sync_epoch()));
            let seen = self.masters.entry((name.to_owned(), generation, g.master_epoch())).or_insert(g.master());
            prop_assert_eq!(*seen, g.master(), "two masters with epoch {} in {}", g.master_epoch(), name);
        }
        Ok(())
    }
}

fn run_histories(seed: u64, cases: u32) {
    let config = Config {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    };
    proptest!(config, |(steps in vec(step(), 1..40))| {
        let mut states = vec![ReplicaTables::default()];
        let mut history = History::default();
        for step in &steps {
            let current = states.last().cloned().unwrap_or_default();
            let decided_on = &states[states.len().saturating_sub(1 + step.lag)];
            let options = DecideOptions { elect_unclean: step.unclean };
            let decision = decide(decided_on, &step.op, &liveness(step.alive), options);
            let mut next = current.clone();
            if let Some(event) = &decision.event {
                let first = next.apply(event);
                let once = next.clone();
                let again = next.apply(event);
                prop_assert!(again == Applied::Stale || next == once, "applying {event:?} twice changed more");
                if step.lag == 0 {
                    prop_assert_eq!(first, Applied::Done, "a fresh decision applies: {:?}", event);
                }
            }
            prop_assert!(next.check().is_ok(), "{:?}", next.check());
            history.observe(&current, &next)?;
            let json = serde_json::to_vec(&next).unwrap();
            prop_assert_eq!(&serde_json::from_slice::<ReplicaTables>(&json).unwrap(), &next);
            states.push(next);
        }
    });
}

#[test]
fn random_histories_keep_every_invariant() {
    run_histories(0x636f_6e74_726f_6c31, 1500);
}

#[test]
fn random_histories_keep_every_invariant_second_seed() {
    run_histories(0x7261_6674_2d73_6d32, 1500);
}
