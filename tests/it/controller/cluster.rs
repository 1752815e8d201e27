//! One controller peer and its brokers: election, joining, failover on a closed connection and
//! on a hung master, the NameServer fencing an old master, the standalone controller.

use std::time::{Duration, Instant};

use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::controller_broker::BrokerConfig;
use namesrv_testkit::{eventually, route_addrs};

use super::history::check;
use super::{broker, master_and_slave, wait_role, WAIT};

#[test]
fn first_broker_becomes_master_and_second_joins_the_sync_state_set() {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let (first, second) = master_and_slave(&cluster);
    assert_eq!((first.id(), second.id()), (Some(1), Some(2)));
    assert_eq!(second.state().master, Some(1));
    assert_eq!(first.epoch(), 1);
    check(&[&first, &second], &[]);
}

#[test]
fn killed_master_is_replaced_and_survivor_gets_role_change_notify() {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let (mut first, second) = master_and_slave(&cluster);
    let killed_at = Instant::now();
    let killed = first.kill();
    wait_role(&second, true);
    let took = killed_at.elapsed();
    assert!(!second.state().notified.is_empty(), "the survivor learnt it from 1008");
    assert!(took < Duration::from_secs(2), "failover took {took:?}");
    assert_eq!(second.epoch(), 2);
    check(&[&second], &[killed]);
}

#[test]
fn hung_master_is_replaced_within_its_heartbeat_timeout() {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let (first, second) = master_and_slave(&cluster);
    let hung_at = Instant::now();
    first.hang();
    wait_role(&second, true);
    let took = hung_at.elapsed();
    // 1 s heartbeat timeout: within it plus a second (Java: 10 s timeout plus a 5 s scan).
    assert!(took < Duration::from_secs(2), "hung master replaced after {took:?}");
    first.wake();
    wait_role(&first, false);
    check(&[&first, &second], &[]);
}

#[test]
fn old_master_returns_as_slave_and_cannot_take_broker_id_0_back() {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let ns = cluster.server(0).addr;
    let with_ns = |c: &mut BrokerConfig| c.namesrv = Some(ns);
    let first = broker(&cluster, with_ns);
    wait_role(&first, true);
    let second = broker(&cluster, with_ns);
    wait_role(&second, false);
    first.set_in_sync(&[2]);
    assert!(eventually(WAIT, || first.state().sync_set.len() == 2));
    let mut client = cluster.server(0).client();
    let master_addr = |client: &mut namesrv_testkit::Client| {
        client.route("T1").ok().map(|r| route_addrs(&r, "cb")["0"].as_str().unwrap_or_default().to_owned())
    };
    assert!(eventually(WAIT, || master_addr(&mut client).as_deref() == Some(first.addr.as_str())));
    // The master hangs with its connections open: a new master is elected and registers as 0.
    first.hang();
    wait_role(&second, true);
    assert!(eventually(WAIT, || master_addr(&mut client).as_deref() == Some(second.addr.as_str())));
    // It wakes believing it is still master (epoch 1) and re-registers as brokerId 0 first:
    // the NameServer keeps the new master (stateVersion 2 beats 1), the old one becomes slave.
    first.wake();
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        assert_eq!(master_addr(&mut client).as_deref(), Some(second.addr.as_str()), "brokerId 0 won back");
        std::thread::sleep(Duration::from_millis(20));
    }
    wait_role(&first, false);
    check(&[&first, &second], &[]);
}

#[test]
fn standalone_controller_serves_without_a_nameserver_port() {
    let cluster =
        ControllerCluster::start(1, |s| s.controller.controller_mode = namesrv::settings::ControllerMode::Standalone);
    cluster.wait_leader(WAIT);
    let first = broker(&cluster, |_| {});
    wait_role(&first, true);
    let refused = cluster.client(0).request(105, &[("topic", "T1")]);
    assert_eq!(refused.code, 3, "the controller port serves no route: {:?}", refused.remark);
}

#[test]
fn a_standalone_controller_keeps_no_nameserver_state_and_its_probes_ask_the_controller() {
    use namesrv_testkit::http::get;
    let mut cluster =
        ControllerCluster::start(1, |s| s.controller.controller_mode = namesrv::settings::ControllerMode::Standalone);
    cluster.wait_leader(WAIT);
    let http = cluster.http(0);
    assert_eq!(get(http, "/livez").status, 200, "live: the controller answers");
    assert_eq!(get(http, "/readyz").status, 200);
    let brokers = get(http, "/api/v1/brokers");
    assert_eq!(brokers.status, 404, "no route tables to show: {}", brokers.body);
    assert!(brokers.body.contains("standalone controller"), "{}", brokers.body);
    assert_eq!(get(http, "/api/v1/controller").json()["enabled"], true);
    let dir = cluster.state_dir(0);
    cluster.stop(0);
    let mut kept: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with("controller"))
        .collect();
    kept.sort();
    assert!(kept.is_empty(), "NameServer state in a standalone controller's directory: {kept:?}");
    assert!(dir.join("controller").is_dir(), "the controller keeps its own store");
}

#[test]
fn a_peer_configured_with_other_peers_than_the_group_on_disk_refuses_to_start() {
    use crate::common::process::{namesrv_command, run_to_exit};
    let mut cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let dir = cluster.state_dir(0);
    let me = format!("n0-{}", cluster.addr(0));
    cluster.stop(0);
    let start = |peers: &str| {
        let mut cmd = namesrv_command(&dir);
        cmd.env("NAMESRV_CONTROLLER_MODE", "embedded")
            .env("NAMESRV_CONTROLLER_PEERS", peers)
            .env("NAMESRV_CONTROLLER_SELF_ID", "n0")
            .args(["--listen", "127.0.0.1:0"]);
        run_to_exit(cmd)
    };
    // One peer more: the stored group {n0} is not the configured {n0, n1}. It stops before it
    // binds anything, naming both lists.
    let (status, _, stderr) = start(&format!("{me};n1-127.0.0.1:1"));
    assert!(!status.success(), "started with another membership");
    assert!(stderr.contains(&format!("has the peers [{me}]")), "{stderr}");
    assert!(stderr.contains(&format!("lists [{me};n1-127.0.0.1:1]")), "{stderr}");
    // The group as it was formed starts again.
    cluster.restart(0);
    cluster.wait_leader(WAIT);
}
