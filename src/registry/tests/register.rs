//! Registration: group membership, the dataVersion rules, roles and fencing by stateVersion.

use super::*;
use crate::model::MASTER_ID;

#[test]
fn a_first_registration_creates_the_group_the_cluster_and_the_routes() {
    let mut t = tables();
    let outcome = accepted(t.register_broker(broker("b1", "10.0.0.1:10911", &["T1", "T2"]).registration(), 0));
    assert!(outcome.newly_live);
    assert_eq!(route_brokers(&mut t, "T1"), ["b1"]);
    let info = cluster_info(&mut t);
    assert_eq!(info["clusterAddrTable"]["c"], serde_json::json!(["b1"]));
    assert_eq!(info["brokerAddrTable"]["b1"]["brokerAddrs"]["0"], "10.0.0.1:10911");
    let again = accepted(t.register_broker(broker("b1", "10.0.0.1:10911", &["T1", "T2"]).registration(), 5));
    assert!(!again.newly_live, "a re-registration is not news");
}

#[test]
fn an_unchanged_data_version_only_adds_missing_topics() {
    let mut t = tables();
    let mut b = broker("b1", "a:1", &["T1"]);
    b.topics = vec!["T1", "T2"];
    register(&mut t, &b, 0);
    t.update_perm("T1", "b1", |_| 4);
    b.topics = vec!["T1", "T2", "T3"];
    register(&mut t, &b, 1);
    assert_eq!(queue(&t, "T1", "b1").unwrap().perm, 4, "existing queue data is kept when the version is unchanged");
    assert!(queue(&t, "T3", "b1").is_some(), "a topic the group lacked is added");
    b.counter += 1;
    register(&mut t, &b, 2);
    assert_eq!(queue(&t, "T1", "b1").unwrap().perm, 6, "a changed version re-applies every topic");
}

#[test]
fn a_heartbeat_after_a_topic_deletion_puts_the_topic_back() {
    let mut t = tables();
    let b = broker("b1", "a:1", &["T1", "T2"]);
    register(&mut t, &b, 0);
    t.delete_topic("T1", None);
    assert!(route(&mut t, "T1").is_none());
    register(&mut t, &b, 1);
    assert!(route(&mut t, "T1").is_some(), "the unchanged re-registration restores what it still lists");
}

#[test]
fn a_first_registration_with_a_single_topic_is_refused_but_a_known_member_may_send_one() {
    let mut t = tables();
    assert_eq!(t.register_broker(broker("b1", "a:1", &["T1"]).registration(), 0), Registered::FirstWithSingleTopic);
    assert!(t.live("c", "a:1").is_none());
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    assert!(matches!(t.register_broker(broker("b1", "a:1", &["T1"]).registration(), 1), Registered::Accepted(_)));
}

#[test]
fn a_slave_learns_its_master_and_does_not_shape_routes() {
    let mut t = tables();
    register(&mut t, &broker("b1", "m:1", &["T1", "T2"]), 0);
    let slave = Reg { id: 1, addr: "s:1", topics: vec!["T1", "S9"], ..broker("b1", "s:1", &[]) };
    let outcome = accepted(t.register_broker(slave.registration(), 1));
    assert_eq!(outcome.master_addr.as_deref(), Some("m:1"));
    assert_eq!(outcome.ha_server_addr.as_deref(), Some("m:1-ha"));
    assert!(route(&mut t, "S9").is_none(), "a slave's topics are not applied while a master exists");
    let addrs = &route(&mut t, "T1").unwrap()["brokerDatas"][0]["brokerAddrs"];
    assert_eq!((addrs["0"].as_str(), addrs["1"].as_str()), (Some("m:1"), Some("s:1")));
}

#[test]
fn the_lowest_slave_of_a_masterless_5x_group_applies_its_topics() {
    let mut t = tables();
    let prime = Reg { id: 1, ..broker("b1", "s:1", &["P1", "P2"]) };
    register(&mut t, &prime, 0);
    assert_eq!(route_brokers(&mut t, "P1"), ["b1"]);
    let old = Reg { id: 1, acting_master: None, ..broker("b2", "s:2", &["O1", "O2"]) };
    register(&mut t, &old, 0);
    assert!(route(&mut t, "O1").is_none(), "4.x slaves never apply topics");
}

#[test]
fn an_older_state_version_cannot_take_a_live_id() {
    let mut t = tables();
    register(&mut t, &Reg { state_version: 5, ..broker("b1", "new:1", &["T1", "T2"]) }, 0);
    let stale = Reg { state_version: 4, ..broker("b1", "old:1", &["T1", "T2"]) };
    let outcome = accepted(t.register_broker(stale.registration(), 1));
    assert_eq!(outcome, Default::default());
    assert!(t.live("c", "old:1").is_none(), "the stale instance is not live");
    assert_eq!(t.group("b1").unwrap().broker_addrs.get(&MASTER_ID).map(String::as_str), Some("new:1"));
}

#[test]
fn an_address_changing_id_leaves_its_old_id() {
    let mut t = tables();
    register(&mut t, &Reg { id: 1, ..broker("b1", "x:1", &["T1", "T2"]) }, 0);
    register(&mut t, &Reg { id: 0, counter: 2, ..broker("b1", "x:1", &["T1", "T2"]) }, 1);
    let addrs: Vec<i64> = t.group("b1").unwrap().broker_addrs.keys().copied().collect();
    assert_eq!(addrs, [0], "slave promoted to master: one entry");
}

#[test]
fn delete_topic_with_broker_registration_drops_unlisted_topics() {
    let mut t = RouteTables::new(RegistryOptions::routing(RoutingSettings {
        delete_topic_with_broker_registration: true,
        ..Default::default()
    }));
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    register(&mut t, &Reg { counter: 2, ..broker("b1", "a:1", &["T2", "T3"]) }, 1);
    assert!(route(&mut t, "T1").is_none());
    assert!(route(&mut t, "T3").is_some());
}

#[test]
fn filter_servers_are_replaced_and_an_empty_list_removes_them() {
    let mut t = tables();
    let with = Reg { filter_servers: Some(vec!["f:1".into()]), ..broker("b1", "a:1", &["T1", "T2"]) };
    register(&mut t, &with, 0);
    assert_eq!(route(&mut t, "T1").unwrap()["filterServerTable"]["a:1"], serde_json::json!(["f:1"]));
    register(&mut t, &Reg { filter_servers: None, ..with.clone() }, 1);
    assert!(route(&mut t, "T1").unwrap()["filterServerTable"]["a:1"].is_array(), "absent leaves them");
    register(&mut t, &Reg { filter_servers: Some(vec![]), ..with }, 2);
    assert_eq!(route(&mut t, "T1").unwrap()["filterServerTable"], serde_json::json!({}));
}

#[test]
fn a_version_bump_with_the_same_topics_changes_nothing_yet_restores_what_others_changed() {
    let mut t = tables();
    let mut b = broker("b1", "a:1", &["T1", "T2"]);
    register(&mut t, &b, 0);
    let applied = t.applied_fingerprint("b1");
    assert!(applied.is_some(), "a full registration records what it applied");
    b.counter += 1;
    register(&mut t, &b, 1);
    assert_eq!(t.applied_fingerprint("b1"), applied, "the same topic table under a new version is already applied");

    for change in 0..4 {
        match change {
            0 => assert_eq!(t.wipe_write_perm("b1"), 2),
            1 => t.delete_topic("T1", None),
            2 => assert!(t.put_queue(
                "T2",
                "b1",
                QueueData { read_queue_nums: 1, write_queue_nums: 1, perm: 6, topic_sys_flag: 0 }
            )),
            _ => assert!(t.update_perm("T2", "b1", |_| 2)),
        }
        assert_eq!(t.applied_fingerprint("b1"), None, "change {change} is not what the registration applied");
        b.counter += 1;
        register(&mut t, &b, 2 + change);
        assert_eq!(
            queue(&t, "T1", "b1"),
            Some(QueueData { read_queue_nums: 4, write_queue_nums: 4, perm: 6, topic_sys_flag: 0 })
        );
        assert_eq!(
            queue(&t, "T2", "b1"),
            queue(&t, "T1", "b1"),
            "change {change} is undone by the bumped registration"
        );
        assert_eq!(t.applied_fingerprint("b1"), applied);
    }
    b.topics.push("T3");
    assert_ne!(b.registration().body.fingerprint(), applied.unwrap(), "another topic table has another fingerprint");
}
