//! Every row of the request decisions: ids, registration, replica info, elections, in-sync set
//! changes (each check alone and two at once, to pin their order), sync-state data and cleaning.

use namesrv_protocol::controller::body::SyncStateSet;
use namesrv_protocol::controller::ControllerResponseCode as Code;

use super::{applied, elect, group_of, run, Alive};

/// NextBrokerId's answer for group cb of cluster c.
fn next_id(next: i64) -> Answer {
    Answer::NextBrokerId { cluster: "c".into(), name: "cb".into(), next }
}
use crate::decide::{decide, Answer, DecideOptions, Op, Refusal};
use crate::{Event, ReplicaTables};

fn code(answer: &Result<Answer, Refusal>) -> Option<Code> {
    answer.as_ref().err().map(|r| r.code)
}

fn alter(master_id: i64, master_epoch: i32, ids: &[i64], epoch: i32) -> Op {
    let set = SyncStateSet { ids: ids.iter().copied().collect(), epoch };
    Op::AlterSyncStateSet { name: "cb".into(), master_id, master_epoch, set }
}

#[test]
fn ids_are_offered_in_turn_and_a_retry_by_the_same_broker_is_idempotent() {
    let mut t = ReplicaTables::default();
    let next = Op::GetNextBrokerId { cluster: "c".into(), name: "cb".into() };
    assert_eq!(run(&mut t, next.clone(), &Alive::default()).answer, Ok(next_id(1)));
    let apply =
        |id: i64, code: &str| Op::ApplyBrokerId { cluster: "c".into(), name: "cb".into(), id, check_code: code.into() };
    let refused = run(&mut t, apply(2, "a:2;1"), &Alive::default()).answer.unwrap_err();
    assert_eq!(refused.code, Code::BrokerIdInvalid);
    assert_eq!(
        refused.remark,
        "Broker-set: cb hasn't been registered in controller, but broker try to apply brokerId: 2"
    );
    assert!(run(&mut t, apply(1, "a:1;1"), &Alive::default()).event.is_some());
    let retry = run(&mut t, apply(1, "a:1;1"), &Alive::default());
    assert_eq!((retry.event, retry.answer), (None, Ok(applied())));
    let taken = run(&mut t, apply(1, "a:9;2"), &Alive::default()).answer.unwrap_err();
    assert_eq!(
        (taken.code, taken.remark.as_str()),
        (Code::BrokerIdInvalid, "Fail to apply brokerId: 1 in broker-set: cb")
    );
    assert_eq!(run(&mut t, next.clone(), &Alive::default()).answer, Ok(next_id(2)));
    // Only the id offered next: one above it (Java takes any free id) is refused, so no id can
    // leave the group without one a new broker could apply (2^63-2 would make the next 2^63-1).
    for id in [5, i64::MAX - 1, i64::MAX, 0, -1] {
        let refused = run(&mut t, apply(id, &format!("a:{id};1")), &Alive::default());
        assert_eq!((refused.event, code(&refused.answer)), (None, Some(Code::BrokerIdInvalid)), "{id}");
    }
    assert_eq!(run(&mut t, next.clone(), &Alive::default()).answer, Ok(next_id(2)));
    assert!(run(&mut t, apply(2, "a:2;1"), &Alive::default()).event.is_some());
    assert_eq!(run(&mut t, next, &Alive::default()).answer, Ok(next_id(3)));
    assert_eq!(t.group("cb").unwrap().address(1), Some("a:1"));
}

#[test]
fn registration_names_the_master_only_while_it_lives_and_follows_a_moved_broker() {
    let mut t = group_of(2);
    let reg = |id: i64, addr: &str| Op::Register { cluster: "c".into(), name: "cb".into(), id, address: addr.into() };
    let unknown = Op::Register { cluster: "c".into(), name: "zz".into(), id: 1, address: "a:1".into() };
    let refused = run(&mut t, unknown, &Alive::default()).answer.unwrap_err();
    assert_eq!(
        (refused.code, refused.remark.as_str()),
        (Code::BrokerNeedToBeRegistered, "Broker-set: zz hasn't been registered in controller")
    );
    assert_eq!(code(&run(&mut t, reg(3, "a:3"), &Alive::default()).answer), Some(Code::BrokerNeedToBeRegistered));
    let first = run(&mut t, reg(1, "a:1"), &Alive::default());
    let Ok(Answer::Registered { master, set, .. }) = first.answer else { panic!("{first:?}") };
    assert_eq!((master.master_broker_id, master.master_epoch, first.event), (None, None, None));
    assert_eq!(set, SyncStateSet::default());
    run(&mut t, elect(1, false), &Alive::default());
    let live = Alive::default().with("c", "cb", 1, 1, 0);
    let Ok(Answer::Registered { master, set, .. }) = run(&mut t, reg(2, "a:2"), &live).answer else { panic!() };
    assert_eq!((master.master_broker_id, master.master_address.as_deref()), (Some(1), Some("a:1")));
    assert_eq!((master.master_epoch, master.sync_state_set_epoch, set.epoch), (Some(1), Some(1), 1));
    let Ok(Answer::Registered { master, .. }) = run(&mut t, reg(2, "a:2"), &Alive::default()).answer else { panic!() };
    assert_eq!(master.master_broker_id, None, "a dead master is not named");
    let moved = run(&mut t, reg(2, "b:2"), &live);
    assert!(matches!(moved.event, Some(Event::UpdateBrokerAddress { .. })));
    assert_eq!(t.group("cb").unwrap().address(2), Some("b:2"));
}

#[test]
fn replica_info_of_an_unknown_group_is_metadata_not_exist() {
    let mut t = group_of(1);
    let unknown = run(&mut t, Op::GetReplicaInfo { name: "zz".into() }, &Alive::default()).answer.unwrap_err();
    assert_eq!(
        (unknown.code, unknown.remark.as_str()),
        (Code::BrokerMetadataNotExist, "Broker metadata is not existed")
    );
    run(&mut t, elect(1, false), &Alive::default());
    let Ok(Answer::ReplicaInfo { master, set }) =
        run(&mut t, Op::GetReplicaInfo { name: "cb".into() }, &Alive::default()).answer
    else {
        panic!()
    };
    assert_eq!((master.master_broker_id, master.master_epoch, set.ids.len()), (Some(1), Some(1), 1));
}

#[test]
fn the_first_election_goes_to_the_requester_without_liveness() {
    let mut t = group_of(2);
    assert_eq!(code(&run(&mut t, elect(7, false), &Alive::default()).answer), Some(Code::BrokerNeedToBeRegistered));
    let unknown = Op::ElectMaster { name: "zz".into(), requester: 1, designate: false };
    let refused = run(&mut t, unknown, &Alive::default()).answer.unwrap_err();
    assert_eq!(refused.remark, "Broker hasn't been registered");
    let Ok(Answer::Elected { master, body }) = run(&mut t, elect(2, false), &Alive::default()).answer else { panic!() };
    assert_eq!(
        (master.master_broker_id, master.master_epoch, master.sync_state_set_epoch),
        (Some(2), Some(1), Some(1))
    );
    let group = body.member_group.unwrap();
    assert_eq!((group.cluster.as_str(), group.broker_addrs.len()), ("c", 2));
    assert_eq!(body.sync_state_set, [2].into());
}

#[test]
fn a_living_master_is_kept_and_a_dead_one_replaced_only_from_the_sync_state_set() {
    let mut t = group_of(3);
    run(&mut t, elect(1, false), &Alive::default());
    run(&mut t, alter(1, 1, &[1, 2], 1), &Alive::default().with("c", "cb", 1, 1, 0).with("c", "cb", 2, 1, 0));
    let all = Alive::default().with("c", "cb", 1, 1, 9).with("c", "cb", 2, 1, 9).with("c", "cb", 3, 1, 99);
    let kept = run(&mut t, elect(2, false), &all);
    let Ok(Answer::MasterKept { master, body, remark }) = kept.answer else { panic!("{kept:?}") };
    assert_eq!(remark, "The old master 1 is still alive, not need to elect new master for broker cb");
    assert_eq!((master.master_broker_id, body.member_group, body.sync_state_set), (Some(1), None, [1, 2].into()));
    let without_1 = Alive::default().with("c", "cb", 2, 1, 9).with("c", "cb", 3, 1, 99);
    let Ok(Answer::Elected { master, .. }) = run(&mut t, elect(-1, false), &without_1).answer else { panic!() };
    assert_eq!(
        (master.master_broker_id, master.master_epoch),
        (Some(2), Some(2)),
        "3 has more data but is not in sync"
    );
    let only_3 = Alive::default().with("c", "cb", 3, 1, 99);
    let failed = run(&mut t, elect(3, false), &only_3).answer.unwrap_err();
    assert_eq!((failed.code, failed.remark.as_str()), (Code::ElectMasterFailed, "Failed to elect a new master"));
    let by_controller = run(&mut t, elect(-1, false), &only_3);
    assert_eq!(code(&by_controller.answer), Some(Code::MasterNotAvailable));
    assert!(matches!(by_controller.event, Some(Event::ElectMaster { new_master: None, .. })));
    assert_eq!((t.group("cb").unwrap().master(), t.group("cb").unwrap().master_epoch()), (None, 3));
    let again = run(&mut t, elect(-1, false), &only_3);
    assert_eq!((again.event, code(&again.answer)), (None, Some(Code::MasterNotAvailable)), "no epoch churn");
    let unclean = decide(&t, &elect(3, false), &only_3, DecideOptions { elect_unclean: true });
    assert!(matches!(unclean.answer, Ok(Answer::Elected { .. })));
}

#[test]
fn an_admin_designates_that_broker_or_nobody() {
    let mut t = group_of(3);
    run(&mut t, elect(1, false), &Alive::default());
    let live = Alive::default().with("c", "cb", 1, 1, 0).with("c", "cb", 2, 1, 0);
    run(&mut t, alter(1, 1, &[1, 2], 1), &live);
    let Ok(Answer::Elected { master, .. }) = run(&mut t, elect(2, true), &live).answer else { panic!() };
    assert_eq!(master.master_broker_id, Some(2), "designated over the living old master");
    let dead = run(&mut t, elect(3, true), &live.clone().with("c", "cb", 3, 1, 0)).answer.unwrap_err();
    assert_eq!(dead.code, Code::ElectMasterFailed, "3 is not in sync");
    let kept = run(&mut t, elect(2, true), &live).answer;
    assert!(matches!(kept, Ok(Answer::MasterKept { .. })));
}

#[test]
fn alter_checks_run_in_javas_order() {
    let mut t = group_of(3);
    run(&mut t, elect(1, false), &Alive::default());
    let live = Alive::default().with("c", "cb", 1, 1, 0).with("c", "cb", 2, 1, 0);
    let refuse = |t: &mut ReplicaTables, op| run(t, op, &live).answer.unwrap_err();
    let unknown =
        Op::AlterSyncStateSet { name: "zz".into(), master_id: 1, master_epoch: 1, set: SyncStateSet::default() };
    assert_eq!(refuse(&mut t, unknown).remark, "Broker metadata is not existed");
    let same = refuse(&mut t, alter(2, 9, &[1], 9));
    assert_eq!(
        (same.code, same.remark.as_str()),
        (
            Code::AlterSyncStateSetFailed,
            "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet"
        )
    );
    let master = refuse(&mut t, alter(2, 9, &[1, 2], 9));
    assert_eq!(
        (master.code, master.remark.as_str()),
        (Code::InvalidMaster, "Rejecting alter syncStateSet request because the current leader is:1, not 2")
    );
    let epoch = refuse(&mut t, alter(1, 9, &[1, 2], 9));
    assert_eq!(
        (epoch.code, epoch.remark.as_str()),
        (Code::FencedMasterEpoch, "Rejecting alter syncStateSet request because the current master epoch is:1, not 9")
    );
    let set_epoch = refuse(&mut t, alter(1, 1, &[1, 2, 7], 9));
    assert_eq!(
        (set_epoch.code, set_epoch.remark.as_str()),
        (
            Code::FencedSyncStateSetEpoch,
            "Rejecting alter syncStateSet request because the current syncStateSet epoch is:1, not 9"
        )
    );
    let missing = refuse(&mut t, alter(1, 1, &[1, 3, 7], 1));
    assert_eq!(
        (missing.code, missing.remark.as_str()),
        (Code::BrokerNotAlive, "Rejecting alter syncStateSet request because the replicas 3 don't alive")
    );
    let missing = refuse(&mut t, alter(1, 1, &[1, 7], 1));
    assert_eq!(
        (missing.code, missing.remark.as_str()),
        (Code::InvalidReplicas, "Rejecting alter syncStateSet request because the replicas 7 don't exist")
    );
    let no_master = refuse(&mut t, alter(1, 1, &[2], 1));
    assert_eq!(
        (no_master.code, no_master.remark.as_str()),
        (
            Code::AlterSyncStateSetFailed,
            "Rejecting alter syncStateSet request because the newSyncStateSet don't contains origin leader 1"
        )
    );
    let done = run(&mut t, alter(1, 1, &[1, 2], 1), &live);
    assert_eq!(done.answer, Ok(Answer::Altered(SyncStateSet { ids: [1, 2].into(), epoch: 2 })));
    t.apply(&Event::ElectMaster { broker_name: "cb".into(), new_master: None, expect_master_epoch: 1 });
    assert!(refuse(&mut t, alter(1, 2, &[1], 2)).remark.ends_with("the current leader is:null, not 1"));
}

#[test]
fn sync_state_data_lists_replicas_by_membership_and_liveness() {
    let mut t = group_of(2);
    run(&mut t, elect(2, false), &Alive::default());
    let live = Alive::default().with("c", "cb", 2, 1, 0);
    let names = vec!["cb".to_owned(), "zz".to_owned()];
    let Ok(Answer::SyncStateData(info)) = run(&mut t, Op::GetSyncStateData { names }, &live).answer else { panic!() };
    let cb = &info.replicas_info_table["cb"];
    assert_eq!(info.replicas_info_table.len(), 1, "unknown names are skipped");
    assert_eq!((cb.master_broker_id, cb.master_address.as_deref()), (Some(2), Some("a:2")));
    assert_eq!((cb.in_sync_replicas[0].broker_id, cb.in_sync_replicas[0].alive), (2, true));
    assert_eq!((cb.not_in_sync_replicas[0].broker_id, cb.not_in_sync_replicas[0].alive), (1, false));
}

#[test]
fn cleaning_refuses_living_brokers_and_bad_ids_and_clears_a_removed_master() {
    let mut t = group_of(3);
    run(&mut t, elect(1, false), &Alive::default());
    let clean = |ids: Option<&str>, living: bool| Op::CleanBrokerData {
        cluster: Some("c".into()),
        name: "cb".into(),
        ids: ids.map(str::to_owned),
        clean_living: living,
    };
    let live = Alive::default().with("c", "cb", 2, 1, 0);
    let bad = run(&mut t, clean(Some("1;x"), false), &live).answer.unwrap_err();
    assert!(bad.remark.ends_with("For input string: \"x\""), "{}", bad.remark);
    let whole = run(&mut t, clean(None, false), &live).answer.unwrap_err();
    assert_eq!(whole.remark, "Broker cb is still alive, clean up failure");
    let alive = run(&mut t, clean(Some("1;2;"), false), &live).answer.unwrap_err();
    assert_eq!(alive.remark, "Broker [cb,  2] is still alive, clean up failure");
    assert_eq!(run(&mut t, clean(Some("1;3"), false), &live).answer, Ok(Answer::Cleaned));
    let g = t.group("cb").unwrap();
    assert_eq!((g.master(), g.master_epoch(), g.sync_epoch(), g.replicas().len()), (None, 2, 2, 1));
    assert_eq!(run(&mut t, clean(None, true), &live).answer, Ok(Answer::Cleaned));
    let gone = run(&mut t, clean(None, true), &live).answer.unwrap_err();
    assert_eq!(gone.remark, "Broker cb is not existed,clean broker data failure.");
}

#[test]
fn stale_events_change_nothing_and_applies_are_idempotent() {
    let mut t = group_of(2);
    let elect_event = Event::ElectMaster { broker_name: "cb".into(), new_master: Some(1), expect_master_epoch: 0 };
    assert_eq!(t.apply(&elect_event), super::Applied::Done);
    let before = t.clone();
    assert_eq!(t.apply(&elect_event), super::Applied::Stale);
    let alter = Event::AlterSyncStateSet {
        broker_name: "cb".into(),
        new_set: [1, 2].into(),
        expect_master_epoch: 1,
        expect_sync_epoch: 0,
    };
    assert_eq!(t.apply(&alter), super::Applied::Stale);
    assert_eq!(t, before);
    let to_unknown = Event::ElectMaster { broker_name: "cb".into(), new_master: Some(9), expect_master_epoch: 1 };
    assert_eq!(t.apply(&to_unknown), super::Applied::Stale);
    assert_eq!(t, before);
}
