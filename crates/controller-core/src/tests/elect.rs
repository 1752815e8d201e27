//! The election policy's order: epoch, then max offset, then priority, then id; no overflow on
//! offsets far apart (apache/rocketmq#10578).

use super::{group_of, Alive};
use crate::elect::pick;
use crate::Event;

/// Group cb with replicas 1 to 4, broker 1 master at epoch 5 (elected five times), `ids` in sync.
fn in_sync(ids: &[i64]) -> super::ReplicaTables {
    let mut t = group_of(4);
    for epoch in 0..5 {
        t.apply(&Event::ElectMaster { broker_name: "cb".into(), new_master: Some(1), expect_master_epoch: epoch });
    }
    let set = ids.iter().copied().chain([1]).collect();
    let alter = Event::AlterSyncStateSet {
        broker_name: "cb".into(),
        new_set: set,
        expect_master_epoch: 5,
        expect_sync_epoch: 5,
    };
    assert_eq!(t.apply(&alter), super::Applied::Done);
    t
}

#[test]
fn candidates_are_ordered_by_epoch_offset_priority_then_id() {
    let t = in_sync(&[2, 3, 4]);
    let g = t.group("cb").unwrap();
    let live = Alive::default().with("c", "cb", 2, 3, 10).with("c", "cb", 3, 4, 5).with("c", "cb", 4, 4, 5);
    assert_eq!(pick("cb", g, &live, false, None), Some(3), "higher epoch first, then the lowest id");
    let live = live.priority("c", "cb", 4, 1);
    assert_eq!(pick("cb", g, &live, false, None), Some(4), "a lower priority wins a tie");
    let live = Alive::default().with("c", "cb", 2, 4, 6).with("c", "cb", 3, 4, 5);
    assert_eq!(pick("cb", g, &live, false, None), Some(2), "the larger offset");
}

#[test]
fn offsets_more_than_two_to_the_31_apart_do_not_overflow() {
    let t = in_sync(&[2, 3]);
    let g = t.group("cb").unwrap();
    let live = Alive::default().with("c", "cb", 2, 1, 0).with("c", "cb", 3, 1, i64::from(i32::MAX) * 4);
    assert_eq!(pick("cb", g, &live, false, None), Some(3));
    let live = Alive::default().with("c", "cb", 2, 1, i64::MIN).with("c", "cb", 3, 1, i64::MAX);
    assert_eq!(pick("cb", g, &live, false, None), Some(3));
    let live = Alive::default().with("c", "cb", 2, i32::MIN, 0).with("c", "cb", 3, i32::MAX, 0);
    assert_eq!(pick("cb", g, &live, false, None), Some(3));
}

#[test]
fn an_epoch_above_the_groups_counts_as_the_groups() {
    let t = in_sync(&[2, 3]);
    let g = t.group("cb").unwrap();
    // Broker 2 says epoch 2^31-1 with a small offset; broker 3 holds the group's epoch, further on.
    let live = Alive::default().with("c", "cb", 2, i32::MAX, 10).with("c", "cb", 3, 5, 20);
    assert_eq!(pick("cb", g, &live, false, None), Some(3), "no precedence from an epoch never granted");
    let live = Alive::default().with("c", "cb", 2, 4, 10).with("c", "cb", 3, 5, 1);
    assert_eq!(pick("cb", g, &live, false, None), Some(3), "a granted higher epoch still wins");
}

#[test]
fn nobody_alive_in_sync_elects_nobody_unless_unclean() {
    let t = in_sync(&[2]);
    let g = t.group("cb").unwrap();
    let live = Alive::default().with("c", "cb", 4, 1, 0);
    assert_eq!(pick("cb", g, &live, false, None), None);
    assert_eq!(pick("cb", g, &live, true, None), Some(4));
    assert_eq!(pick("cb", g, &live, true, Some(3)), None, "a designated broker that is dead: nobody");
    let other_cluster = Alive::default().with("x", "cb", 2, 1, 0);
    assert_eq!(pick("cb", g, &other_cluster, false, None), None, "liveness is per cluster");
}
