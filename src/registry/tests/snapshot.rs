//! The route snapshot: taken from the tables, through JSON, and loaded into fresh tables by
//! replaying registrations, it serves the same bodies; loaded brokers are provisional.

use super::*;
use crate::registry::snapshot::Snapshot;

/// Tables with two groups (one with a slave, one in another cluster with its own timeout and
/// filter servers) and a one-topic group.
fn populated() -> RouteTables {
    let mut t =
        RouteTables::new(RegistryOptions::routing(RoutingSettings { broker_timeout_ms: 1_000, ..Default::default() }));
    register(&mut t, &Reg { counter: 7, ..broker("b1", "m:1", &["T1", "T2", "TS"]) }, 10);
    register(&mut t, &Reg { id: 1, conn: 2, ..broker("b1", "s:1", &["T1", "T2", "TS"]) }, 10);
    let b2 = Reg {
        cluster: "d",
        timeout_ms: Some(5_000),
        filter_servers: Some(vec!["f:1".into()]),
        conn: 3,
        ..broker("b2", "o:1", &["T3", "TS"])
    };
    register(&mut t, &b2, 10);
    register(&mut t, &Reg { conn: 4, ..broker("b3", "p:1", &["T4", "T5"]) }, 10);
    t.remove_queue("T5", "b3");
    t
}

/// Every topic's route and the cluster info, as bytes.
fn bodies(t: &mut RouteTables) -> Vec<(String, Option<Vec<u8>>)> {
    let mut topics: Vec<String> = t.topic_names().map(str::to_owned).collect();
    topics.sort();
    let mut out: Vec<_> = topics
        .into_iter()
        .map(|topic| (topic.clone(), t.route_body(&topic, JsonStyle::Standard).map(|b| b.to_vec())))
        .collect();
    out.push(("cluster info".into(), Some(t.cluster_info_body().to_vec())));
    out
}

/// The snapshot of `t` at `now_ms`, through its JSON text.
fn through_json(t: &RouteTables, now_ms: u64) -> Snapshot {
    // As the writer thread writes it: sorted, then encoded.
    let mut snapshot = t.snapshot(42, now_ms);
    snapshot.sort();
    serde_json::from_slice(&serde_json::to_vec(&snapshot).unwrap()).unwrap()
}

#[test]
fn a_loaded_snapshot_serves_the_same_bodies_with_every_broker_provisional() {
    let mut before = populated();
    let snapshot = through_json(&before, 100);
    let mut after = tables();
    assert_eq!(after.load_snapshot(&snapshot, 0, 500).provisional, 4);
    assert_eq!(bodies(&mut after), bodies(&mut before));
    assert_eq!(after.provisional_count(), 4);
    let live = after.live("d", "o:1").unwrap();
    assert_eq!((live.conn, live.timeout_ms, live.last_update_ms), (ConnId::SERVER, 5_000, 500));
    assert_eq!(after.filter_servers("d", "o:1"), Some(&["f:1".to_owned()][..]));
    assert!(after.take_notifications().is_empty() && after.take_closing().is_empty());
    let mut again = through_json(&after, 500);
    for member in again.groups.iter_mut().flat_map(|g| g.members.iter_mut()) {
        assert_eq!(member.provisional_silent_ms.take(), Some(0), "{}", member.addr);
    }
    assert_eq!(again, snapshot, "a loaded snapshot is taken back unchanged");
}

#[test]
fn provisional_brokers_expire_on_their_own_timeout_unless_they_register() {
    let mut t = tables();
    t.load_snapshot(&through_json(&populated(), 100), 0, 500);
    register(&mut t, &Reg { counter: 7, conn: 9, ..broker("b1", "m:1", &["T1", "T2", "TS"]) }, 600);
    assert_eq!(t.provisional_count(), 3, "a registration makes an ordinary live broker");
    assert_eq!(t.live("c", "m:1").unwrap().conn, ConnId(9));
    let expired: Vec<String> = t.expire(1_501).into_iter().map(|r| r.broker.addr).collect();
    assert_eq!(expired, ["p:1", "s:1"], "1 s after the load; o:1 has 5 s");
    assert_eq!(route_brokers(&mut t, "T1"), ["b1"]);
    assert_eq!(t.expire(5_501).len(), 1);
    assert!(route(&mut t, "T3").is_none());
}

#[test]
fn a_broker_back_at_another_address_or_another_broker_at_its_address_replaces_the_provisional_entry() {
    let mut t = tables();
    t.load_snapshot(&through_json(&populated(), 100), 0, 500);
    register(&mut t, &Reg { counter: 8, state_version: -1, conn: 9, ..broker("b1", "m:2", &["T1", "T2", "TS"]) }, 600);
    assert!(t.live_at("m:1").is_none(), "no group lists the old address");
    assert_eq!(route(&mut t, "T1").unwrap()["brokerDatas"][0]["brokerAddrs"]["0"], "m:2");
    register(&mut t, &Reg { conn: 10, ..broker("b9", "p:1", &["T9", "T8"]) }, 600);
    assert!(route(&mut t, "T4").is_none(), "b3's provisional entry was replaced");
    assert_eq!(t.provisional_count(), 2);
}

#[test]
fn heartbeats_that_change_nothing_leave_the_change_count() {
    let mut t = populated();
    let changes = t.changes();
    register(&mut t, &Reg { counter: 7, ..broker("b1", "m:1", &["T1", "T2", "TS"]) }, 900);
    assert!(t.heartbeat("d", "o:1", 950));
    assert_eq!(t.changes(), changes);
    register(&mut t, &Reg { counter: 8, ..broker("b1", "m:1", &["T1", "T2", "TS"]) }, 990);
    assert!(t.changes() > changes, "a new dataVersion is in the snapshot");
}

#[test]
fn a_provisional_broker_is_silent_since_its_last_heartbeat_before_the_snapshot_until_heard() {
    // Heard at 10, snapshot at 100 (90 ms of silence), taken 2,000 ms before the load at 500.
    let mut t = tables();
    t.load_snapshot(&through_json(&populated(), 100), 2_000, 500);
    let live = t.live("d", "o:1").unwrap();
    assert_eq!(live.silent_ms(700), 90 + 2_000 + 200, "counted from the heartbeat, not the load");
    assert_eq!(live.snapshot_age_ms(700), Some(2_200));
    assert_eq!(live.expires_in_ms(700), 4_800, "the timeout counts from the load: the server heard nobody");
    assert!(t.heartbeat("d", "o:1", 900));
    let heard = t.live("d", "o:1").unwrap();
    assert_eq!((heard.silent_ms(1_000), heard.is_provisional()), (100, true), "heard, still to register");
    let again = through_json(&t, 1_000);
    let member = |addr: &str| again.groups.iter().flat_map(|g| &g.members).find(|m| m.addr == addr).unwrap().clone();
    assert_eq!(member("o:1").silent_ms, Some(100));
    assert_eq!(member("m:1").silent_ms, Some(90 + 2_000 + 500), "still unheard: the silence carries over");
    let mut next = tables();
    next.load_snapshot(&again, 1_000, 0);
    assert_eq!(next.live("c", "m:1").unwrap().silent_ms(0), 2_590 + 1_000);
}

#[test]
fn a_broker_still_provisional_at_the_next_restart_has_only_the_rest_of_its_timeout() {
    let mut first = tables();
    first.load_snapshot(&through_json(&populated(), 100), 0, 500);
    let mut second = tables();
    second.load_snapshot(&through_json(&first, 4_500), 0, 0);
    assert_eq!(second.live("d", "o:1").unwrap().timeout_ms, 1_000, "5 s, 4 s of it spent provisional");
    assert_eq!(second.live("c", "m:1").unwrap().timeout_ms, 0);
    assert_eq!(second.expire(1).len(), 3);
    assert_eq!(second.expire(1_001).len(), 1);
}

#[test]
fn a_snapshot_member_is_checked_as_a_registration_and_keeps_its_access_key_binding() {
    let mut snapshot = through_json(&populated(), 100);
    snapshot.groups[0].members[0].access_key = Some("b1-key".into());
    let mut bad_name = snapshot.groups[2].clone();
    bad_name.broker_name = "x".repeat(300);
    let mut bad_addr = snapshot.groups[2].clone();
    bad_addr.broker_name = "b4".into();
    bad_addr.members[0].addr = "q:1\n".into();
    // Java validates no topic name on registration, so neither does a snapshot's replay.
    let mut odd_topic = snapshot.groups[2].clone();
    odd_topic.broker_name = "b5".into();
    odd_topic.members[0].addr = "r:1".into();
    odd_topic.topics = vec![("odd\ntopic".into(), odd_topic.topics[0].1)];
    snapshot.groups.extend([bad_name, bad_addr, odd_topic]);

    let mut t = tables();
    let loaded = t.load_snapshot(&serde_json::from_slice(&serde_json::to_vec(&snapshot).unwrap()).unwrap(), 0, 500);
    let skipped: Vec<String> =
        loaded.skipped.iter().map(|s| format!("{} {}: {}", s.broker.len(), s.addr, s.why)).collect();
    assert_eq!(loaded.provisional, 5, "{skipped:?}");
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(skipped[0].contains("brokerName too long"), "{skipped:?}");
    assert!(skipped[1].contains("brokerAddr contains a control character"), "{skipped:?}");
    assert!(route(&mut t, "odd\ntopic").is_some(), "a topic name Java accepts is loaded");
    assert_eq!(t.live("c", "m:1").unwrap().access_key.as_deref(), Some("b1-key"), "the binding is restored");
    assert!(route(&mut t, "T5").is_none(), "nothing of a skipped member is routed");

    let capped = RoutingSettings { broker_timeout_ms: 1_000, ..Default::default() };
    let mut t = RouteTables::new(RegistryOptions { max_topics_per_broker: 2, ..RegistryOptions::routing(capped) });
    let loaded = t.load_snapshot(&through_json(&populated(), 100), 0, 500);
    let skipped: Vec<String> = loaded.skipped.iter().map(|s| s.addr.clone()).collect();
    assert_eq!(skipped, ["m:1", "s:1"], "b1 has three topics, more than the cap");
    assert_eq!(loaded.provisional, 2);
}

#[test]
fn a_snapshot_taken_a_group_at_a_time_equals_one_taken_whole_and_leaves_out_who_left_meanwhile() {
    let mut t = populated();
    let whole = t.snapshot(42, 100);
    let mut build = t.start_snapshot(42, 100);
    let mut turns = 1;
    while !t.continue_snapshot(&mut build, 1) {
        turns += 1;
    }
    assert_eq!(turns, 3, "one group a turn with a budget of one topic");
    assert_eq!(build.finish(), whole);

    let mut build = t.start_snapshot(42, 100);
    assert!(!t.continue_snapshot(&mut build, 1), "b1 copied");
    t.connection_closed(ConnId(3));
    while !t.continue_snapshot(&mut build, 1) {}
    let names: Vec<String> = build.finish().groups.into_iter().map(|g| g.broker_name).collect();
    assert_eq!(names, ["b1", "b3"], "b2 closed before its turn");
}
