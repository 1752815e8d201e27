//! Three controller peers: followers answer not-leader but name the leader, a killed master is
//! replaced, a leader peer killed during an election is replaced and the election completes, a
//! minority stopped keeps electing, a majority stopped never answers a write with success and
//! stops advertising a leader, a restarted peer catches up (from a snapshot), and every
//! answered write survives a restart of every peer.

use std::time::{Duration, Instant};

use namesrv::protocol::controller::body::{decode_names, encode_names, BrokerReplicasInfo};
use namesrv::protocol::controller::header::ApplyBrokerIdHeader;
use namesrv::protocol::{ExtFields, RemotingCommand};
use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::eventually;

use super::history::check;
use super::{master_and_slave, wait_role, WAIT};

/// 1013 for id 1 of group `name`, sent to peer `i`.
fn apply_id(cluster: &ControllerCluster, i: usize, name: &str) -> RemotingCommand {
    let h = ApplyBrokerIdHeader {
        cluster_name: "c".into(),
        broker_name: name.into(),
        applied_broker_id: 1,
        register_check_code: format!("127.0.0.1:1;{name}"),
    };
    cluster.client(i).call(RemotingCommand::request(1013, Some(h.to_ext())))
}

/// 1006 for `names`, sent to peer `i`.
fn sync_state_data(cluster: &ControllerCluster, i: usize, names: &[String]) -> RemotingCommand {
    let request = RemotingCommand::request(1006, None).with_body(encode_names(names.iter().map(String::as_str)));
    cluster.client(i).call(request)
}

fn other(cluster: &ControllerCluster, not: &[usize]) -> usize {
    (0..cluster.len()).find(|i| !not.contains(i) && cluster.running(*i)).expect("another peer")
}

#[test]
fn follower_answers_not_leader_but_metadata_names_the_leader() {
    let cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let follower = other(&cluster, &[leader]);
    let refused = apply_id(&cluster, follower, "cb");
    assert_eq!((refused.code, refused.remark.as_deref()), (2007, Some("The controller is not in leader state")));
    assert_eq!(refused.ext_fields, None, "no response header on 2007");
    let meta = cluster.metadata(follower).unwrap();
    let leader_addr = cluster.addr(leader).to_string();
    assert_eq!((meta.is_leader, meta.controller_leader_address.as_deref()), (false, Some(leader_addr.as_str())));
    assert_eq!(meta.controller_leader_id.as_deref(), Some(format!("n{leader}").as_str()));
    assert_eq!(meta.peers.matches(';').count(), 3);
    assert_eq!(apply_id(&cluster, leader, "cb").code, 0);
    let not_json = cluster.client(follower).call(RemotingCommand::request(1003, Some(ExtFields::new())));
    assert_eq!(not_json.code, 1, "a malformed request is a header error even on a follower");
}

#[test]
fn killed_master_is_replaced_with_three_peers() {
    let cluster = ControllerCluster::start(3, |_| {});
    cluster.wait_leader(WAIT);
    let (mut first, second) = master_and_slave(&cluster);
    let killed_at = Instant::now();
    let killed = first.kill();
    wait_role(&second, true);
    assert!(killed_at.elapsed() < Duration::from_secs(3), "failover took {:?}", killed_at.elapsed());
    assert!(!second.state().notified.is_empty());
    check(&[&second], &[killed]);
}

#[test]
fn leader_peer_killed_during_an_election_completes_it_on_the_new_leader() {
    let mut cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let (mut first, second) = master_and_slave(&cluster);
    let killed = first.kill();
    cluster.stop(leader);
    let new_leader = cluster.wait_leader(WAIT);
    assert_ne!(new_leader, leader);
    wait_role(&second, true);
    check(&[&second], &[killed]);
}

#[test]
fn minority_of_peers_stopped_keeps_electing() {
    let mut cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let (mut first, second) = master_and_slave(&cluster);
    cluster.stop(other(&cluster, &[leader]));
    let killed = first.kill();
    wait_role(&second, true);
    check(&[&second], &[killed]);
}

#[test]
fn majority_stopped_refuses_writes_and_stops_advertising_a_leader() {
    let mut cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    assert_eq!(apply_id(&cluster, leader, "before").code, 0);
    let (a, b) =
        (other(&cluster, &[leader]), (0..3).find(|i| *i != leader && *i != other(&cluster, &[leader])).unwrap());
    cluster.stop(a);
    cluster.stop(b);
    let answer = apply_id(&cluster, leader, "after");
    assert_ne!(answer.code, 0, "no write without a quorum");
    assert!(
        answer.code == 2007 || answer.remark.as_deref().is_some_and(|r| r.contains("not committed")),
        "a clear error: {answer:?}"
    );
    assert!(
        eventually(WAIT, || cluster
            .metadata(leader)
            .is_some_and(|m| !m.is_leader && m.controller_leader_address.is_none())),
        "an isolated leader stops naming itself"
    );
    cluster.restart(a);
    cluster.restart(b);
    let leader = cluster.wait_leader(WAIT);
    assert!(eventually(WAIT, || apply_id(&cluster, leader, "again").code == 0));
}

#[test]
fn restarted_peer_catches_up_and_every_answered_write_survives_restarts() {
    let mut cluster = ControllerCluster::start(3, |s| s.controller.controller_snapshot_every_entries = 4);
    let leader = cluster.wait_leader(WAIT);
    let lagging = other(&cluster, &[leader]);
    cluster.stop(lagging);
    let names: Vec<String> = (0..20).map(|i| format!("g{i}")).collect();
    for name in &names {
        assert_eq!(apply_id(&cluster, leader, name).code, 0, "{name}");
    }
    cluster.restart(lagging);
    let dir = cluster.state_dir(lagging).join("controller");
    let has_all = || {
        let snapshot = std::fs::read_to_string(dir.join("snapshot.json")).unwrap_or_default();
        let log = String::from_utf8_lossy(&std::fs::read(dir.join("raft-log")).unwrap_or_default()).into_owned();
        names.iter().all(|n| snapshot.contains(&format!("\"{n}\"")) || log.contains(&format!("\"{n}\"")))
    };
    assert!(eventually(WAIT, has_all), "the restarted peer caught up");
    for i in 0..3 {
        cluster.stop(i);
    }
    for i in 0..3 {
        cluster.restart(i);
    }
    let leader = cluster.wait_leader(WAIT);
    let mut info = BrokerReplicasInfo::default();
    assert!(
        eventually(WAIT, || {
            let answer = sync_state_data(&cluster, leader, &names);
            info = BrokerReplicasInfo::decode(answer.body.as_deref().unwrap_or(b"{}")).unwrap_or_default();
            info.replicas_info_table.len() == names.len()
        }),
        "every group survives: {} of {}",
        info.replicas_info_table.len(),
        names.len()
    );
    assert_eq!(decode_names(&encode_names(["x"])).unwrap(), ["x"]);
}
