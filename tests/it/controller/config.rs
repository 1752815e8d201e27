//! GET_CONTROLLER_CONFIG (1010) and UPDATE_CONTROLLER_CONFIG (1009) over TCP, as Java's
//! `ControllerRequestProcessor` serves them: every peer answers, leader or not; a change is the
//! peer's own, never replicated; blacklisted keys are NO_PERMISSION; bad values change nothing.

use namesrv::protocol::RemotingCommand;
use namesrv::settings::properties;
use namesrv_testkit::controller::ControllerCluster;

use super::{master_and_slave, wait_role, WAIT};

const NO_PERMISSION: i32 = 16;
const SYSTEM_ERROR: i32 = 1;

/// Peer `i`'s settings as 1010 answers them.
fn config(cluster: &ControllerCluster, i: usize) -> Vec<(String, String)> {
    let answer = cluster.client(i).call(RemotingCommand::request(1010, None));
    assert_eq!(answer.code, 0, "{:?}", answer.remark);
    let body = answer.body.expect("a properties body");
    properties::parse(std::str::from_utf8(&body).unwrap()).unwrap()
}

fn value(config: &[(String, String)], key: &str) -> String {
    config.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).unwrap_or_else(|| panic!("no {key}"))
}

/// 1009 on peer `i` with `body`: (code, remark).
fn update(cluster: &ControllerCluster, i: usize, body: &str) -> (i32, String) {
    let answer = cluster.client(i).call(RemotingCommand::request(1009, None).with_body(body.to_owned()));
    (answer.code, answer.remark.unwrap_or_default())
}

#[test]
fn every_peer_serves_its_own_config_and_refuses_blacklisted_keys_and_bad_values() {
    let cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let follower = (0..3).find(|i| *i != leader).unwrap();
    for i in 0..3 {
        let c = config(&cluster, i);
        assert_eq!(value(&c, "controllerDLegerSelfId"), format!("n{i}"));
        assert_eq!(value(&c, "controllerDLegerGroup"), "g1");
        assert_eq!(value(&c, "controllerDLegerPeers").split(';').count(), 3);
        assert_eq!(value(&c, "notifyBrokerRoleChanged"), "true");
        assert_eq!(value(&c, "enableElectUncleanMaster"), "false");
        assert!(value(&c, "configBlackList").contains("configStorePath"));
    }

    let before = config(&cluster, follower);
    for key in ["configStorePath", "configBlackList", "rocketmqHome"] {
        let (code, remark) = update(&cluster, follower, &format!("notifyBrokerRoleChanged=false\n{key}=/tmp/x\n"));
        assert_eq!((code, remark.as_str()), (NO_PERMISSION, "Can not update config in black list."), "{key}");
    }
    let (code, remark) = update(&cluster, follower, "notifyBrokerRoleChanged=false\nelectMasterMaxRetryCount=lots\n");
    assert_eq!(code, SYSTEM_ERROR);
    assert!(remark.contains("electMasterMaxRetryCount"), "{remark}");
    let (code, remark) = update(&cluster, follower, "controllerDLegerPeers=n0-127.0.0.1:1\n");
    assert_eq!(code, SYSTEM_ERROR);
    assert!(remark.contains("applies only at start"), "{remark}");
    assert_eq!(config(&cluster, follower), before, "a refused request changes nothing");

    // As Java's Configuration.update, a key no setting has is skipped.
    let body =
        "notifyBrokerRoleChanged=false\nenableElectUncleanMaster=true\nscanInactiveMasterInterval=1000\nnoSuchKey=1\n";
    assert_eq!(update(&cluster, follower, body).0, 0);
    let after = config(&cluster, follower);
    assert_eq!(value(&after, "notifyBrokerRoleChanged"), "false");
    assert_eq!(value(&after, "enableElectUncleanMaster"), "true");
    assert_eq!(value(&after, "scanInactiveMasterInterval"), "1000");
    assert!(!after.iter().any(|(k, _)| k == "noSuchKey"));
    assert_eq!(value(&config(&cluster, leader), "notifyBrokerRoleChanged"), "true", "per peer, not replicated");
    assert_eq!(update(&cluster, leader, "").0, 0, "an empty body changes nothing");
    let bare = cluster.client(leader).call(RemotingCommand::request(1009, None));
    assert_eq!(bare.code, 0, "no body: SUCCESS, as Java");
}

#[test]
fn notify_broker_role_changed_turned_off_at_runtime_stops_the_push_but_not_the_failover() {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    assert_eq!(update(&cluster, 0, "notifyBrokerRoleChanged=false\n").0, 0);
    let (mut first, second) = master_and_slave(&cluster);
    first.kill();
    wait_role(&second, true);
    assert!(second.state().notified.is_empty(), "no 1008: {:?}", second.state().notified);
}

#[test]
fn a_reload_applies_the_controllers_runtime_keys_and_leaves_the_others_for_a_restart() {
    use namesrv::settings::{ConfigFormat, Sources};
    use namesrv_testkit::{eventually, temp_dir, TestServer};

    let dir = temp_dir();
    let controller = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let file = dir.join("namesrv.toml");
    let base = format!(
        "controller_mode = \"standalone\"\ncontroller_peers = \"n0-{}\"\ncontroller_self_id = \"n0\"\n\
         kv_config_path = \"{}\"\nconfig_store_path = \"{}\"\n",
        controller.local_addr().unwrap(),
        dir.join("kvConfig.json").display(),
        dir.join("namesrv.properties").display(),
    );
    std::fs::write(&file, &base).unwrap();
    let sources = Sources {
        defaults_file: None,
        config_file: Some(file.clone()),
        config_format: ConfigFormat::Auto,
        env_prefix: "NAMESRV_TEST_CONTROLLER_RELOAD".into(),
        overrides: Vec::new(),
    };
    let (server, reloads) = TestServer::start_with_reloads(sources, Some(controller), Some(http));
    let config = || {
        let answer = namesrv_testkit::Client::connect(server.addr).call(RemotingCommand::request(1010, None));
        properties::parse(std::str::from_utf8(&answer.body.unwrap_or_default()).unwrap()).unwrap()
    };
    assert_eq!(value(&config(), "enableElectUncleanMaster"), "false");
    let runtime_and_restart = "controller_enable_elect_unclean_master = true\n\
        controller_scan_inactive_master_interval_ms = 1000\ncontroller_raft_heartbeat_ms = 50\n";
    std::fs::write(&file, format!("{base}{runtime_and_restart}")).unwrap();
    reloads.blocking_send(()).unwrap();
    let applied = || value(&config(), "enableElectUncleanMaster") == "true";
    assert!(eventually(WAIT, applied), "the runtime keys apply on a reload");
    let after = config();
    assert_eq!(value(&after, "scanInactiveMasterInterval"), "1000");
    assert_eq!(value(&after, "controller_raft_heartbeat_ms"), "100", "a restart-only key waits for the restart");
    // A value outside its range fails the reload whole, as it fails a start: nothing changes.
    std::fs::write(&file, format!("{base}controller_scan_inactive_master_interval_ms = 1\n")).unwrap();
    reloads.blocking_send(()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(value(&config(), "scanInactiveMasterInterval"), "1000", "a reload that does not load changes nothing");
    assert_eq!(value(&config(), "enableElectUncleanMaster"), "true");
}
