//! Admin changes and topic lists.

use super::*;
use crate::registry::admin::UnitFilter;

#[test]
fn write_perm_is_wiped_and_added_back_with_counts() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    assert_eq!(t.wipe_write_perm("b1"), 2);
    assert_eq!(queue(&t, "T1", "b1").unwrap().perm, 4);
    assert_eq!(route(&mut t, "T2").unwrap()["queueDatas"][0]["perm"], 4, "the cached route follows");
    assert_eq!(t.add_write_perm("b1"), 2);
    assert_eq!(queue(&t, "T1", "b1").unwrap().perm, 6);
    assert_eq!(t.wipe_write_perm("nobody"), 0);
}

#[test]
fn a_topic_is_deleted_everywhere_or_from_one_cluster() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    register(&mut t, &Reg { cluster: "d", ..broker("b2", "a:2", &["T1", "T2"]) }, 0);
    t.delete_topic("T1", Some("d"));
    assert_eq!(route_brokers(&mut t, "T1"), ["b1"]);
    t.delete_topic("T1", None);
    assert!(route(&mut t, "T1").is_none());
    assert_eq!(route_brokers(&mut t, "T2"), ["b1", "b2"]);
}

#[test]
fn register_topic_stops_at_the_first_unknown_broker() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    let q = QueueData { read_queue_nums: 2, write_queue_nums: 2, perm: 6, topic_sys_flag: 0 };
    assert_eq!(t.register_topic("T1", &[("b1".into(), q), ("nobody".into(), q)]), 1);
    assert_eq!(queue(&t, "T1", "b1").unwrap().read_queue_nums, 2, "an existing topic is updated up to there");
}

#[test]
fn topic_lists_come_sorted_and_filtered() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T2", "T1"]), 0);
    register(&mut t, &Reg { cluster: "d", ..broker("b2", "a:2", &["T3", "T1"]) }, 0);
    assert_eq!(t.all_topics(), ["T1", "T2", "T3"]);
    assert_eq!(t.topics_by_cluster("d"), ["T1", "T3"]);
    assert!(t.topics_by_cluster("nope").is_empty());
    let (system, addr) = t.system_topics();
    assert_eq!(system, ["b1", "b2", "c", "d"]);
    assert_eq!(addr.as_deref(), Some("a:1"));
    assert!(t.unit_topics(UnitFilter::Unit).is_empty());
    assert_eq!(t.member_addrs("b2").get(&0).map(String::as_str), Some("a:2"));
}
