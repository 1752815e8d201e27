//! Elections: what CONTROLLER_ELECT_MASTER decides ([`elect_master`]) and who it picks
//! ([`pick`], Java's `DefaultElectPolicy`): the alive in-sync replicas first, all
//! alive replicas only when unclean elections are enabled; the old master when it is alive and
//! no admin names another; else the highest epoch, then the highest max offset, then the lowest
//! election priority. Compared with `Ord`, never by subtraction (apache/rocketmq#10578: Java's
//! comparator overflows on offsets more than 2^31 apart), ties going to the lowest id.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use namesrv_protocol::controller::body::{ElectMasterResponseBody, MemberGroup};
use namesrv_protocol::controller::response::MasterFields;
use namesrv_protocol::controller::ControllerResponseCode as Code;

use crate::decision::{Answer, Decision, LiveFacts, LiveView, Refusal};
use crate::{Event, Group, ReplicaTables};

/// Picks the new master of `group` (named `name`), or `None` when no candidate qualifies.
/// `prefer` is an admin's designated broker: it or nobody, tier by tier.
pub fn pick(name: &str, group: &Group, live: &dyn LiveView, unclean: bool, prefer: Option<i64>) -> Option<i64> {
    let all: BTreeSet<i64> = group.replicas().keys().copied().collect();
    let tiers: &[&BTreeSet<i64>] = if unclean { &[group.sync_set(), &all] } else { &[group.sync_set()] };
    for tier in tiers {
        let candidates: Vec<(i64, LiveFacts)> =
            tier.iter().filter_map(|id| live.live(group.cluster(), name, *id).map(|facts| (*id, facts))).collect();
        if candidates.is_empty() {
            continue;
        }
        let old = group.master().filter(|m| candidates.iter().any(|(id, _)| id == m));
        if let Some(old) = old.filter(|old| prefer.is_none_or(|p| p == *old)) {
            return Some(old);
        }
        if let Some(p) = prefer {
            if candidates.iter().any(|(id, _)| *id == p) {
                return Some(p);
            }
            continue;
        }
        // A broker cannot hold an epoch the controller never granted: one said to be above the
        // group's counts as the group's (a forged or stale heartbeat buys no precedence).
        let epoch = |f: &LiveFacts| f.epoch.min(group.master_epoch());
        return candidates
            .into_iter()
            .min_by_key(|(id, f)| (Reverse(epoch(f)), Reverse(f.max_offset), f.priority, *id))
            .map(|(id, _)| id);
    }
    None
}

/// CONTROLLER_ELECT_MASTER on `tables` (Java's `ReplicasInfoManager.electMaster`): the first
/// election goes to the requester; later ones to [`pick`]; the kept master is 2011; nobody is
/// 2004 for the controller itself (committing "no master" once) and 2012 for anyone else.
pub fn elect_master(
    tables: &ReplicaTables,
    name: &str,
    requester: i64,
    designate: bool,
    live: &dyn LiveView,
    unclean: bool,
) -> Decision {
    let Some(g) = tables.group(name) else {
        return Decision::refuse(Code::BrokerNeedToBeRegistered, "Broker hasn't been registered");
    };
    let first = g.master_epoch() == 0 && requester != -1;
    if first && !g.replicas().contains_key(&requester) {
        // Java accepts an unregistered requester here and elects a master without address.
        let remark = format!("BrokerId: {requester} hasn't been registered in broker-set: {name}");
        return Decision::refuse(Code::BrokerNeedToBeRegistered, remark);
    }
    let new = if first { Some(requester) } else { pick(name, g, live, unclean, designate.then_some(requester)) };
    match new {
        Some(m) if Some(m) == g.master() => kept(name, g, m),
        Some(m) => elected(name, g, m),
        None if requester == -1 => {
            // Java appends "no master" on every failed try; once is enough for brokers to see it.
            let event = (g.master().is_some() && g.master_epoch() < i32::MAX).then(|| Event::ElectMaster {
                broker_name: name.to_owned(),
                new_master: None,
                expect_master_epoch: g.master_epoch(),
            });
            let remark = "Old master has down and failed to elect a new broker master";
            Decision { event, answer: Err(Refusal { code: Code::MasterNotAvailable, remark: remark.into() }) }
        }
        None => Decision::refuse(Code::ElectMasterFailed, "Failed to elect a new master"),
    }
}

/// The old master `m` stays: CONTROLLER_MASTER_STILL_EXIST, which brokers take as success.
fn kept(name: &str, g: &Group, m: i64) -> Decision {
    let master = MasterFields {
        master_broker_id: Some(m),
        master_address: g.address(m).map(str::to_owned),
        master_epoch: Some(g.master_epoch()),
        sync_state_set_epoch: Some(g.sync_epoch()),
    };
    let body = ElectMasterResponseBody { member_group: None, sync_state_set: g.sync_set().clone() };
    let remark = format!("The old master {m} is still alive, not need to elect new master for broker {name}");
    Decision::answer(Answer::MasterKept { master, body, remark })
}

/// `m` becomes master: both epochs one up, the in-sync set only `m`.
fn elected(name: &str, g: &Group, m: i64) -> Decision {
    let (Some(master_epoch), Some(sync_epoch)) = (g.master_epoch().checked_add(1), g.sync_epoch().checked_add(1))
    else {
        return Decision::refuse(Code::ElectMasterFailed, "Failed to elect a new master");
    };
    let master = MasterFields {
        master_broker_id: Some(m),
        master_address: g.address(m).map(str::to_owned),
        master_epoch: Some(master_epoch),
        sync_state_set_epoch: Some(sync_epoch),
    };
    let addrs = g.replicas().iter().map(|(id, r)| (*id, r.address.clone())).collect();
    let group = MemberGroup { cluster: g.cluster().to_owned(), broker_name: name.to_owned(), broker_addrs: addrs };
    let body = ElectMasterResponseBody { member_group: Some(group), sync_state_set: BTreeSet::from([m]) };
    let event =
        Event::ElectMaster { broker_name: name.to_owned(), new_master: Some(m), expect_master_epoch: g.master_epoch() };
    Decision::commit(event, Answer::Elected { master, body })
}
