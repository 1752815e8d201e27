//! The bounds of the tables: what a decision refuses (CONTROLLER_INVALID_REQUEST) and what
//! applying refuses alike, and what the tables count, the same after a snapshot round trip.

use namesrv_protocol::controller::ControllerResponseCode as Code;

use super::{run, Alive};
use crate::bounds::{MAX_GROUPS, MAX_NAME_BYTES, MAX_REPLICAS};
use crate::decide::Op;
use crate::{Applied, Event, ReplicaTables};

fn apply(name: &str, id: i64, address: &str) -> Op {
    Op::ApplyBrokerId { cluster: "c".into(), name: name.into(), id, check_code: format!("{address};1") }
}

#[test]
fn names_addresses_and_check_codes_past_their_bounds_are_refused_before_anything_commits() {
    let mut t = ReplicaTables::default();
    let long = "n".repeat(MAX_NAME_BYTES + 1);
    for op in [apply(&long, 1, "a:1"), apply("g", 1, &long), apply("g\n", 1, "a:1"), apply("g", 1, "")] {
        let refused = run(&mut t, op.clone(), &Alive::default());
        let refusal = refused.answer.unwrap_err();
        assert_eq!((refused.event, refusal.code), (None, Code::InvalidRequest), "{op:?}: {}", refusal.remark);
    }
    assert!(t.is_empty());
    assert!(run(&mut t, apply("g", 1, "a:1"), &Alive::default()).event.is_some());
    let moved = Op::Register { cluster: "c".into(), name: "g".into(), id: 1, address: long };
    assert_eq!(run(&mut t, moved, &Alive::default()).answer.unwrap_err().code, Code::InvalidRequest);
}

#[test]
fn groups_and_replicas_are_bounded_and_applying_past_a_bound_changes_nothing() {
    let mut t = ReplicaTables::default();
    for id in 1..=MAX_REPLICAS as i64 {
        assert!(run(&mut t, apply("g", id, &format!("a:{id}")), &Alive::default()).event.is_some());
    }
    let full = run(&mut t, apply("g", MAX_REPLICAS as i64 + 1, "a:x"), &Alive::default());
    assert_eq!(full.answer.unwrap_err().remark, format!("broker group full: {MAX_REPLICAS} replicas"));
    for n in 1..MAX_GROUPS {
        let event = Event::ApplyBrokerId {
            cluster: "c".into(),
            broker_name: format!("g{n}"),
            broker_id: 1,
            address: "a:1".into(),
            register_check_code: "a:1;1".into(),
        };
        assert_eq!(t.apply(&event), Applied::Done);
    }
    assert_eq!(t.len(), MAX_GROUPS);
    let one_more = run(&mut t, apply("last", 1, "a:1"), &Alive::default());
    assert_eq!(one_more.answer.unwrap_err().remark, format!("controller full: {MAX_GROUPS} broker groups"));
    let forged = Event::ApplyBrokerId {
        cluster: "c".into(),
        broker_name: "last".into(),
        broker_id: 1,
        address: "a:1".into(),
        register_check_code: "a:1;1".into(),
    };
    assert_eq!(t.apply(&forged), Applied::Refused, "a log entry past a bound applies as nothing");
    assert_eq!(t.len(), MAX_GROUPS);
    assert!(t.check().is_ok());
}

#[test]
fn what_the_tables_count_is_counted_again_the_same_from_a_snapshot() {
    let mut t = ReplicaTables::default();
    for (name, id) in [("g1", 1), ("g1", 2), ("g2", 1)] {
        assert!(run(&mut t, apply(name, id, &format!("addr-of-{name}-{id}:10911")), &Alive::default()).event.is_some());
    }
    let moved =
        Op::Register { cluster: "c".into(), name: "g1".into(), id: 2, address: "a-much-longer-address:10911".into() };
    assert!(run(&mut t, moved, &Alive::default()).event.is_some());
    let clean = Op::CleanBrokerData { cluster: None, name: "g1".into(), ids: Some("1".into()), clean_living: true };
    assert!(run(&mut t, clean, &Alive::default()).event.is_some());
    let read: ReplicaTables = serde_json::from_slice(&serde_json::to_vec(&t).unwrap()).unwrap();
    assert_eq!(read.bytes(), t.bytes());
    assert_eq!(read, t);
    assert!(t.bytes() > 0);
}
