//! The controller attacked as a hostile peer would, with no credentials at the defaults, beside
//! honest brokers (the testkit's controller-mode brokers, which heartbeat and send their requests
//! over one connection per controller, as Java's remoting client does): a replica's identity is
//! its owner connection's, ids are only the next one offered, the tables are bounded, peers do
//! not set the controller's clock, and one source's pipelined writes wait on their own share.

use std::time::{Duration, Instant};

use namesrv::protocol::command::FLAG_ONEWAY;
use namesrv::protocol::controller::body::SyncStateSet;
use namesrv::protocol::controller::header::*;
use namesrv::protocol::controller::response::MasterFields;
use namesrv::protocol::RemotingCommand;
use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::{eventually, Client};

use super::{broker, master_and_slave, wait_role, WAIT};

const INVALID_REQUEST: i32 = 2005;
const BROKER_ID_INVALID: i32 = 2014;

/// Group cb's master id and address, as CONTROLLER_GET_REPLICA_INFO answers them.
fn replica_info(client: &mut Client) -> (Option<i64>, Option<String>, i32) {
    let ask = GetReplicaInfoHeader { broker_name: "cb".into() };
    let answer = client.call(RemotingCommand::request(1004, Some(ask.to_ext())));
    let m = MasterFields::read(&answer);
    (m.master_broker_id, m.master_address, m.master_epoch.unwrap_or(0))
}

/// A oneway BROKER_HEARTBEAT for replica `id` of group cb, as a hostile peer forges it.
fn forged_beat(id: i64, epoch: i32, max_offset: i64, timeout_ms: i64) -> RemotingCommand {
    let h = ControllerHeartbeatHeader {
        cluster_name: "c".into(),
        broker_addr: "127.0.0.1:6666".into(),
        broker_name: "cb".into(),
        broker_id: Some(id),
        epoch: Some(epoch),
        max_offset: Some(max_offset),
        confirm_offset: Some(0),
        heartbeat_timeout_mills: Some(timeout_ms),
        election_priority: Some(0),
    };
    let mut beat = RemotingCommand::request(904, Some(h.to_ext()));
    beat.flag = FLAG_ONEWAY;
    beat
}

#[test]
fn a_registration_naming_the_live_masters_id_from_another_connection_redirects_nobody() {
    let cluster = ControllerCluster::start(1, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let (first, _second) = master_and_slave(&cluster);
    let master = first.id().unwrap();
    let mut attacker = Client::connect(cluster.addr(leader));
    let register = RegisterToControllerHeader {
        cluster_name: "c".into(),
        broker_name: "cb".into(),
        broker_id: master,
        broker_address: "127.0.0.1:6666".into(),
        invoke_time: None,
    };
    let answer = attacker.call(RemotingCommand::request(1003, Some(register.to_ext())));
    assert_eq!(answer.code, INVALID_REQUEST, "{:?}", answer.remark);
    assert!(answer.remark.unwrap_or_default().contains("another connection"));
    let (id, addr, _) = replica_info(&mut attacker);
    assert_eq!((id, addr.as_deref()), (Some(master), Some(first.addr.as_str())), "slaves still follow the master");
}

#[test]
fn beats_forged_in_the_masters_name_neither_keep_a_dead_master_nor_fail_a_live_one_over() {
    let cluster = ControllerCluster::start(1, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let (mut first, second) = master_and_slave(&cluster);
    let master = first.id().unwrap();
    let mut attacker = Client::connect(cluster.addr(leader));
    let epoch = replica_info(&mut attacker).2;
    // A 1 ms timeout in the live master's name, beaten again and again: it stays master.
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        attacker.send(&forged_beat(master, epoch, 0, 1));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(replica_info(&mut attacker).2, epoch, "no failover while the real master beats");
    // The master dies; the attacker keeps beating in its name: the slave still takes over.
    first.kill();
    let keeps = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(8);
        while Instant::now() < until {
            attacker.send(&forged_beat(master, epoch, i64::MAX, 60_000));
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    wait_role(&second, true);
    keeps.join().unwrap();
}

#[test]
fn a_stranger_with_an_id_of_its_own_cannot_make_itself_master() {
    let cluster = ControllerCluster::start(1, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let (mut first, second) = master_and_slave(&cluster);
    let mut stranger = Client::connect(cluster.addr(leader));
    let next = GetNextBrokerIdHeader { cluster_name: "c".into(), broker_name: "cb".into() };
    let next = namesrv::protocol::controller::response::NextBrokerIdResponse::read(
        &stranger.call(RemotingCommand::request(1012, Some(next.to_ext()))),
    )
    .next_broker_id
    .unwrap();
    let apply = ApplyBrokerIdHeader {
        cluster_name: "c".into(),
        broker_name: "cb".into(),
        applied_broker_id: next,
        register_check_code: "127.0.0.1:6666;1".into(),
    };
    assert_eq!(stranger.call(RemotingCommand::request(1013, Some(apply.to_ext()))).code, 0, "anyone may join");
    let register = RegisterToControllerHeader {
        cluster_name: "c".into(),
        broker_name: "cb".into(),
        broker_id: next,
        broker_address: "127.0.0.1:6666".into(),
        invoke_time: None,
    };
    assert_eq!(stranger.call(RemotingCommand::request(1003, Some(register.to_ext()))).code, 0);
    let (master, _, epoch) = replica_info(&mut stranger);
    // Its heartbeats claim an epoch never granted and the longest log there is.
    stranger.send(&forged_beat(next, i32::MAX, 1 << 62, 10_000));
    // It adds itself to the in-sync set, with every fence right: only the master's own
    // connection changes that set.
    let set = SyncStateSet { ids: [master.unwrap(), second.id().unwrap(), next].into(), epoch: 2 };
    let alter = AlterSyncStateSetHeader {
        broker_name: "cb".into(),
        master_broker_id: master.unwrap(),
        master_epoch: epoch,
        invoke_time: None,
    };
    let refused = stranger.call(RemotingCommand::request(1001, Some(alter.to_ext())).with_body(set.encode()));
    assert_eq!(refused.code, INVALID_REQUEST, "{:?}", refused.remark);
    let beating = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(6);
        while Instant::now() < until {
            stranger.send(&forged_beat(next, i32::MAX, 1 << 62, 10_000));
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    first.kill();
    wait_role(&second, true);
    beating.join().unwrap();
}

#[test]
fn ids_are_only_the_next_one_and_names_past_their_bounds_are_refused() {
    let cluster = ControllerCluster::start(1, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let _first = broker(&cluster, |_| {});
    let mut attacker = Client::connect(cluster.addr(leader));
    let apply = |name: &str, id: i64| ApplyBrokerIdHeader {
        cluster_name: "c".into(),
        broker_name: name.into(),
        applied_broker_id: id,
        register_check_code: format!("127.0.0.1:6666;{id}"),
    };
    let poisoned = attacker.call(RemotingCommand::request(1013, Some(apply("cb", i64::MAX - 1).to_ext())));
    assert_eq!(poisoned.code, BROKER_ID_INVALID, "{:?}", poisoned.remark);
    let huge = "n".repeat(1 << 20);
    let refused = attacker.call(RemotingCommand::request(1013, Some(apply(&huge, 1).to_ext())));
    assert_eq!(refused.code, INVALID_REQUEST);
    assert!(refused.remark.unwrap_or_default().starts_with("brokerName too long"));
    // The group still takes a new broker: the poisoned id was never applied.
    let second = broker(&cluster, |_| {});
    assert!(eventually(WAIT, || second.id() == Some(2)), "a new broker got id {:?}", second.id());
}

#[test]
fn a_heartbeat_asking_a_day_long_timeout_does_not_freeze_elections() {
    let cluster = ControllerCluster::start(1, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let (mut first, second) = master_and_slave(&cluster);
    let mut attacker = Client::connect(cluster.addr(leader));
    // One beat for a made-up broker with a day's timeout, and one for the slave from another
    // connection: neither is heard.
    let made_up = ControllerHeartbeatHeader {
        cluster_name: "c".into(),
        broker_addr: "127.0.0.1:6666".into(),
        broker_name: "made-up".into(),
        broker_id: Some(1),
        epoch: Some(0),
        max_offset: Some(0),
        confirm_offset: Some(0),
        heartbeat_timeout_mills: Some(86_400_000),
        election_priority: Some(0),
    };
    let mut beat = RemotingCommand::request(904, Some(made_up.to_ext()));
    beat.flag = FLAG_ONEWAY;
    attacker.send(&beat);
    attacker.send(&forged_beat(second.id().unwrap(), 0, 0, 86_400_000));
    std::thread::sleep(Duration::from_millis(200));
    let failed_over = Instant::now();
    first.kill();
    wait_role(&second, true);
    assert!(failed_over.elapsed() < Duration::from_secs(20), "took {:?}", failed_over.elapsed());
}
