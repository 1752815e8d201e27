//! Expiry on an injected clock, heartbeats, removal of what empties, and fencing.

use super::*;
use crate::clock::Reading;
use crate::registry::liveness::{DataVersionAnswer, Removed};
use crate::registry::stall::{Stall, TickWatch};

#[test]
fn a_broker_expires_one_millisecond_after_its_timeout() {
    let routing = RoutingSettings { broker_timeout_ms: 2_000, max_heartbeat_timeout_ms: 5_000, ..Default::default() };
    let mut t = RouteTables::new(RegistryOptions::routing(routing));
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 100);
    register(&mut t, &Reg { timeout_ms: Some(1_200), ..broker("b2", "a:2", &["U1", "U2"]) }, 100);
    let expired: Vec<String> = t.expire(1_301).into_iter().map(|e| e.broker.broker_name).collect();
    assert_eq!(expired, ["b2"], "its own heartbeatTimeoutMillis applies");
    assert!(t.expire(2_100).is_empty(), "exactly at the timeout it is still live");
    let gone = t.expire(2_101);
    assert_eq!((gone.len(), gone[0].last_update_ms, gone[0].conn), (1, 100, ConnId(1)));
    assert!(route(&mut t, "T1").is_none());
    assert_eq!(cluster_info(&mut t)["clusterAddrTable"], serde_json::json!({}), "the empty cluster went too");
}

#[test]
fn a_heartbeat_timeout_a_broker_asks_for_is_clamped_into_one_second_and_the_maximum() {
    let routing = RoutingSettings { broker_timeout_ms: 2_000, max_heartbeat_timeout_ms: 5_000, ..Default::default() };
    let mut t = RouteTables::new(RegistryOptions::routing(routing));
    register(&mut t, &Reg { timeout_ms: Some(0), ..broker("short", "a:1", &["S1", "S2"]) }, 0);
    register(&mut t, &Reg { timeout_ms: Some(u64::MAX), conn: 2, ..broker("ghost", "a:2", &["G1", "G2"]) }, 0);
    assert_eq!(t.live("c", "a:1").map(|l| l.timeout_ms), Some(1_000));
    assert_eq!(t.live("c", "a:2").map(|l| l.timeout_ms), Some(5_000));
    let gone: Vec<String> = t.expire(5_001).into_iter().map(|e| e.broker.broker_name).collect();
    assert_eq!(gone, ["short", "ghost"], "even a broker asking for i64::MAX expires");
}

#[test]
fn heartbeats_and_data_version_queries_keep_a_broker() {
    let mut t =
        RouteTables::new(RegistryOptions::routing(RoutingSettings { broker_timeout_ms: 100, ..Default::default() }));
    let b = broker("b1", "a:1", &["T1", "T2"]);
    register(&mut t, &b, 0);
    assert!(t.heartbeat("c", "a:1", 90));
    let version = DataVersion { counter: 1, state_version: 0, timestamp: 1 };
    assert_eq!(t.query_data_version("c", "a:1", Some(&version), 180), DataVersionAnswer::Same(version));
    assert!(t.expire(250).is_empty());
    let other = DataVersion { counter: 2, ..version };
    assert_eq!(
        t.query_data_version("c", "a:1", Some(&other), 260),
        DataVersionAnswer::Changed(version),
        "a different version is a change"
    );
    assert!(!t.heartbeat("c", "nobody:1", 0));
    assert_eq!(t.query_data_version("c", "nobody:1", None, 0), DataVersionAnswer::NotLive);
}

#[test]
fn removing_the_last_member_removes_the_group_its_topics_and_its_cluster() {
    let mut t = tables();
    let master = broker("b1", "m:1", &["T1", "T2"]);
    let slave = Reg { id: 1, ..broker("b1", "s:1", &["T1", "T2"]) };
    let other = Reg { cluster: "d", ..broker("b2", "o:1", &["T2", "T3"]) };
    for reg in [&master, &slave, &other] {
        register(&mut t, reg, 0);
    }
    assert!(t.unregister_broker(&master.broker_ref()));
    assert_eq!(route_brokers(&mut t, "T1"), ["b1"], "the slave keeps the group");
    assert!(t.unregister_broker(&slave.broker_ref()));
    assert!(route(&mut t, "T1").is_none(), "the group's topics went with it");
    assert_eq!(route_brokers(&mut t, "T2"), ["b2"], "a shared topic keeps its other group");
    assert!(t.group("b1").is_none());
    assert!(t.cluster("c").is_none() && t.cluster("d").is_some());
    assert!(!t.unregister_broker(&master.broker_ref()), "unknown the second time");
}

#[test]
fn an_unregister_applies_whatever_connection_it_comes_over() {
    let mut t = tables();
    let b = Reg { conn: 7, ..broker("b1", "a:1", &["T1", "T2"]) };
    register(&mut t, &b, 0);
    assert!(t.unregister_broker(&b.broker_ref()));
    assert!(route(&mut t, "T1").is_none());
}

#[test]
fn an_unregister_with_a_wrong_id_removes_the_address_at_any_id() {
    let mut t = tables();
    let b = broker("b1", "a:1", &["T1", "T2"]);
    register(&mut t, &b, 0);
    assert!(t.unregister_broker(&BrokerRef { broker_id: 5, ..b.broker_ref() }));
    assert!(t.group("b1").is_none() && t.live_at("a:1").is_none());
}

#[test]
fn an_unregister_with_a_wrong_name_still_leaves_no_address_without_a_live_entry() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    register(&mut t, &broker("b2", "a:2", &["T1", "T2"]), 0);
    let wrong = BrokerRef { broker_name: "b2".into(), ..broker("b1", "a:1", &[]).broker_ref() };
    assert!(t.unregister_broker(&wrong), "the live entry at a:1 went, as in Java");
    assert_eq!(route_brokers(&mut t, "T1"), ["b2"], "and so did b1's address (Java would keep it routed)");
    assert!(t.group("b2").is_some_and(|g| g.broker_addrs.len() == 1));
}

#[test]
fn an_unregister_with_a_wrong_cluster_drops_the_live_entry_no_group_lists() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    let wrong = BrokerRef { cluster: "elsewhere".into(), ..broker("b1", "a:1", &[]).broker_ref() };
    assert!(t.unregister_broker(&wrong), "the group is found by name, as in Java");
    assert!(route(&mut t, "T1").is_none());
    assert!(t.live_at("a:1").is_none(), "Java would keep this live entry forever");
    assert_eq!(t.system_topics().0, ["b1", "c"], "the name stays in its real cluster's set, as in Java");
}

#[test]
fn an_address_reused_by_another_broker_replaces_it() {
    for (cluster, id) in [("c", 0), ("d", 0), ("c", 1)] {
        let mut t = tables();
        register(&mut t, &Reg { conn: 1, ..broker("broker-a", "10.0.0.5:10911", &["TA", "TA2"]) }, 0);
        let b = Reg { cluster, id, conn: 2, ..broker("broker-b", "10.0.0.5:10911", &["TB", "TB2"]) };
        let outcome = accepted(t.register_broker(b.registration(), 1));
        assert_eq!(outcome.replaced.map(|r| r.broker.broker_name).as_deref(), Some("broker-a"), "{cluster} {id}");
        assert!(route(&mut t, "TA").is_none(), "{cluster} {id}: the replaced broker's topics went");
        assert!(t.group("broker-a").is_none());
        let removed = t.connection_closed(ConnId(1));
        assert!(removed.is_empty(), "{cluster} {id}: connection 1 no longer carries a live broker");
        let removed: Vec<String> = t.connection_closed(ConnId(2)).into_iter().map(|r| r.broker.broker_name).collect();
        assert_eq!(removed, ["broker-b"]);
        assert!(t.groups().next().is_none() && route(&mut t, "TB").is_none(), "{cluster} {id}: nothing left");
    }
}

#[test]
fn the_consistency_pass_finds_nothing_after_ordinary_churn() {
    let mut t =
        RouteTables::new(RegistryOptions::routing(RoutingSettings { broker_timeout_ms: 100, ..Default::default() }));
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    register(&mut t, &broker("b2", "a:1", &["T3", "T4"]), 10);
    register(&mut t, &Reg { id: 1, ..broker("b2", "a:2", &["T3", "T4"]) }, 20);
    t.connection_closed(ConnId(9));
    t.expire(500);
    assert_eq!(t.heal(), Default::default());
    assert!(t.live_entries().next().is_none() && t.groups().next().is_none());
}

#[test]
fn a_closed_connection_removes_exactly_the_brokers_it_registered_last() {
    let mut t = tables();
    let moved = Reg { conn: 1, ..broker("b1", "a:1", &["T1", "T2"]) };
    let stays = Reg { conn: 1, ..broker("b2", "a:2", &["U1", "U2"]) };
    let other = Reg { conn: 2, ..broker("b3", "a:3", &["V1", "V2"]) };
    for reg in [&moved, &stays, &other] {
        register(&mut t, reg, 0);
    }
    register(&mut t, &Reg { conn: 9, ..moved }, 1);
    let mut removed: Vec<String> = t.connection_closed(ConnId(1)).into_iter().map(|r| r.broker.broker_name).collect();
    removed.sort();
    assert_eq!(removed, ["b2"], "b1 re-registered over connection 9 since");
    assert!(route(&mut t, "T1").is_some() && route(&mut t, "V1").is_some());
    assert!(route(&mut t, "U1").is_none());
}

#[test]
fn expiry_spares_a_broker_that_re_registered_since() {
    let mut t =
        RouteTables::new(RegistryOptions::routing(RoutingSettings { broker_timeout_ms: 100, ..Default::default() }));
    let b = broker("b1", "a:1", &["T1", "T2"]);
    register(&mut t, &b, 0);
    register(&mut t, &b, 150);
    assert!(t.expire(200).is_empty());
    assert_eq!(t.expire(251).len(), 1);
}

#[test]
fn the_consistency_pass_runs_in_slices_that_cover_every_address() {
    let mut t = tables();
    for i in 0..10 {
        let name: &'static str = Box::leak(format!("b{i}").into_boxed_str());
        let addr: &'static str = Box::leak(format!("a:{i}").into_boxed_str());
        register(&mut t, &broker(name, addr, &["T1", "T2"]), 0);
    }
    let (healed, next) = t.heal_slice(0, 4);
    assert_eq!((healed, next), (Default::default(), 4), "nothing to repair; the next slice starts at 4");
    assert_eq!(t.heal_slice(4, 4).1, 8);
    assert_eq!(t.heal_slice(8, 4).1, 0, "the last slice starts the pass over");
    assert_eq!(t.heal_slice(0, 10).1, 0, "a slice reaching the end exactly starts over too");
}

/// Two brokers with a 3 s timeout registered at 0: `live` (a:1) and `silent` (a:2).
fn live_and_silent() -> RouteTables {
    let mut t =
        RouteTables::new(RegistryOptions::routing(RoutingSettings { broker_timeout_ms: 3_000, ..Default::default() }));
    register(&mut t, &broker("live", "a:1", &["T1", "T2"]), 0);
    register(&mut t, &broker("silent", "a:2", &["U1", "U2"]), 0);
    t
}

const WALL: u64 = 1_700_000_000_000;

/// The clocks at table time `ms` (boot clock), the wall clock `WALL` + `step` ahead.
fn clocks(ms: u64, step: i64) -> Reading {
    Reading { boot_ms: 50_000 + ms, wall_ms: (WALL as i64 + ms as i64 + step) as u64 }
}

#[test]
fn a_stall_of_our_own_expires_no_broker_that_kept_sending_but_a_silent_one_still_expires() {
    let names =
        |e: Vec<crate::registry::liveness::Removed>| e.into_iter().map(|r| r.broker.broker_name).collect::<Vec<_>>();
    let mut plain = live_and_silent();
    plain.heartbeat("c", "a:1", 1_800);
    assert_eq!(names(plain.expire(7_500)), ["live", "silent"], "without the watch both would go");

    let mut t = live_and_silent();
    let mut watch = TickWatch::new(500);
    watch.start(0, clocks(0, 0));
    for ms in (500..=2_000).step_by(500) {
        t.heartbeat("c", "a:1", ms - 200);
        assert!(t.expiry_tick(&mut watch, ms, clocks(ms, 0)).expired.is_empty());
    }
    // Nothing ran from 2.0 s to 7.5 s; the tick is the first thing after, before the socket reads.
    let tick = t.expiry_tick(&mut watch, 7_500, clocks(7_500, 0));
    assert_eq!(tick.stall, Some(Stall { late_ms: 5_000, boot_late_ms: 5_000 }));
    assert_eq!((tick.excused, tick.expired.len()), (2, 0));
    t.heartbeat("c", "a:1", 7_510);
    assert!(t.expiry_tick(&mut watch, 8_000, clocks(8_000, 0)).expired.is_empty());
    t.heartbeat("c", "a:1", 8_300);
    let tick = t.expiry_tick(&mut watch, 8_500, clocks(8_500, 0));
    assert_eq!((tick.stall, names(tick.expired)), (None, vec!["silent".to_owned()]), "silent 3 s beyond the stall");
    assert!(route(&mut t, "T1").is_some());
}

#[test]
fn a_wall_clock_step_is_named_as_one_excuses_no_silence_and_holds_no_expiry() {
    let mut t = live_and_silent();
    let mut watch = TickWatch::new(500);
    watch.start(0, clocks(0, 0));
    for ms in (500..=2_000).step_by(500) {
        t.heartbeat("c", "a:1", ms - 200);
        let tick = t.expiry_tick(&mut watch, ms, clocks(ms, 0));
        assert_eq!((tick.stall, tick.wall_step_ms, tick.expired.len()), (None, None, 0));
    }
    // The wall clock set an hour ahead between two punctual ticks, then back by two hours.
    let mut expired = Vec::new();
    t.heartbeat("c", "a:1", 2_300);
    let tick = t.expiry_tick(&mut watch, 2_500, clocks(2_500, 3_600_000));
    assert_eq!((tick.stall, tick.wall_step_ms, tick.excused), (None, Some(3_600_000), 0), "a step, not a stall");
    assert!(tick.expired.is_empty());
    t.heartbeat("c", "a:1", 2_800);
    let tick = t.expiry_tick(&mut watch, 3_000, clocks(3_000, -3_600_000));
    assert_eq!((tick.stall, tick.wall_step_ms), (None, Some(-7_200_000)));
    expired.extend(tick.expired.into_iter().map(|r| (3_000, r.broker.broker_name)));
    // Expiry goes on as scheduled on the table clock: the silent broker goes at its timeout.
    for ms in (3_500..=7_500).step_by(500) {
        t.heartbeat("c", "a:1", ms - 200);
        let tick = t.expiry_tick(&mut watch, ms, clocks(ms, -3_600_000));
        assert_eq!((tick.stall, tick.wall_step_ms), (None, None));
        expired.extend(tick.expired.into_iter().map(|r| (ms, r.broker.broker_name)));
    }
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert!(expired[0].0 <= 3_500 && expired[0].1 == "silent", "at its 3 s timeout, held by nothing: {expired:?}");
}

#[test]
fn the_mass_expiry_guard_lets_the_longest_silent_go_first_and_the_rest_over_the_next_ticks() {
    let options = RegistryOptions::routing(RoutingSettings {
        broker_timeout_ms: 1_000,
        expiry_guard_percent: 50,
        ..Default::default()
    });
    let mut t = RouteTables::new(options);
    let names = ["b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9"];
    let addrs = ["a:0", "a:1", "a:2", "a:3", "a:4", "a:5", "a:6", "a:7", "a:8", "a:9"];
    for (i, (name, addr)) in names.iter().zip(addrs).enumerate() {
        register(&mut t, &broker(name, addr, &["T1", "T2"]), 100 * i as u64);
    }
    let mut watch = TickWatch::new(500);
    watch.start(9_000, clocks(9_000, 0));
    let mut tick = |t: &mut RouteTables, now: u64| {
        let tick = t.expiry_tick(&mut watch, now, clocks(now, 0));
        (tick.expired.into_iter().map(|r| r.broker.broker_name).collect::<Vec<_>>(), tick.deferred)
    };
    // At 9.5 s all ten are past their timeout: five go, the longest silent first.
    assert_eq!(tick(&mut t, 9_500), (vec!["b0", "b1", "b2", "b3", "b4"].into_iter().map(String::from).collect(), 5));
    assert_eq!(tick(&mut t, 10_000).1, 3, "half of the five left");
    assert_eq!(tick(&mut t, 10_500), (vec!["b7".to_owned()], 2));
    assert_eq!(tick(&mut t, 11_000).0, ["b8"]);
    assert_eq!(tick(&mut t, 11_500), (vec!["b9".to_owned()], 0));
    assert!(t.live_at("a:9").is_none());
}

#[test]
fn a_closed_connection_carrying_large_groups_is_removed_a_budget_at_a_time() {
    let mut t = tables();
    let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
    for g in 0..3 {
        let names: Vec<&'static str> = (0..30).map(|i| leak(format!("G{g}T{i}"))).collect();
        register(&mut t, &Reg { conn: 1, ..broker(leak(format!("g{g}")), leak(format!("a:{g}")), &names) }, 0);
    }
    let names = |removed: Vec<Removed>| -> Vec<String> { removed.into_iter().map(|r| r.broker.broker_name).collect() };
    let (first, more) = t.connection_closed_within(ConnId(1), 40);
    assert_eq!((names(first), more), (vec!["g0".to_owned(), "g1".to_owned()], true), "30 + 30 topics reach 40");
    assert!(route(&mut t, "G2T0").is_some(), "the rest is still routed until the next turn");
    let (rest, more) = t.connection_closed_within(ConnId(1), 40);
    assert_eq!((names(rest), more), (vec!["g2".to_owned()], false));
    let (none, more) = t.connection_closed_within(ConnId(1), 1);
    assert!(none.is_empty() && !more);
    assert!(t.groups().next().is_none());
}
