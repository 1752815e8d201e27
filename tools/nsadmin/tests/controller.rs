//! The controller subcommands against a real controller (namesrv's embedded one, one peer, with
//! test brokers of group `cb` in cluster `c`): metadata, sync states, a designated election,
//! cleaning a dead broker's metadata, reading and changing the controller's settings, and a fleet
//! diff of the controllers' state.

mod common;

use std::time::Duration;

use common::*;
use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::controller_broker::{BrokerConfig, ControllerBroker};
use namesrv_testkit::eventually;

const WAIT: Duration = Duration::from_secs(10);

/// A one-peer controller with a master and an in-sync slave of group `cb`.
fn group() -> (ControllerCluster, ControllerBroker, ControllerBroker) {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let start = || ControllerBroker::start(BrokerConfig::new("cb", &cluster.controller_addr()));
    let first = start();
    assert!(eventually(WAIT, || first.is_master()), "the first broker became master");
    let second = start();
    assert!(eventually(WAIT, || second.id().is_some() && second.state().master.is_some()), "the second joined");
    first.set_in_sync(&[second.id().unwrap()]);
    assert!(eventually(WAIT, || first.state().sync_set.len() == 2), "the slave is in sync");
    (cluster, first, second)
}

#[test]
fn metadata_names_the_group_the_leader_and_the_peers() {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let addr = cluster.addr(0).to_string();
    let list = format!("{};{addr}", dead_addr());
    let text = expect_exit(&nsadmin(&["getControllerMetaData", "-a", &list]), 0);
    assert_eq!(
        text,
        format!("#ControllerGroup\tg1\n#ControllerLeaderId\tn0\n#ControllerLeaderAddress\t{addr}\n#Peer:\tn0:{addr}\n")
    );
    let json = json_ok(&nsadmin(&["getControllerMetaData", "-a", &addr, "--json"]));
    assert_eq!(
        (json["isLeader"].as_bool(), json["peers"][0].as_str()),
        (Some(true), Some(format!("n0:{addr}").as_str()))
    );
    let none = nsadmin(&["getControllerMetaData", "-a", &dead_addr()]);
    assert_eq!(code(&none), 1, "{}", stderr(&none));
}

#[test]
fn sync_state_set_shows_master_epochs_and_replicas() {
    let (cluster, first, second) = group();
    let (m, s) = (first.id().unwrap(), second.id().unwrap());
    let addr = cluster.addr(0).to_string();
    let json = json_ok(&nsadmin(&["getSyncStateSet", "-a", &addr, "-b", "cb", "--json"]));
    let cb = &json["cb"];
    assert_eq!((cb["masterBrokerId"].as_i64(), cb["masterEpoch"].as_i64()), (Some(m), Some(1)));
    let in_sync: Vec<i64> =
        cb["inSyncReplicas"].as_array().unwrap().iter().map(|r| r["brokerId"].as_i64().unwrap()).collect();
    assert_eq!(in_sync, [m, s]);
    let text = expect_exit(&nsadmin(&["getSyncStateSet", "-a", &addr, "-b", "cb"]), 0);
    assert!(
        text.starts_with(&format!(
            "#brokerName\tcb\n#MasterBrokerId\t{m}\n#MasterAddr\t{}\n#MasterEpoch\t1\n",
            first.addr
        )),
        "{text}"
    );
    assert!(text.contains("#SyncStateSetNums\t2\n"), "{text}");
    assert!(
        text.contains(&format!(
            "InSyncReplica:\tbrokerName=cb brokerId={s} brokerAddress={} alive=true\n",
            second.addr
        )),
        "{text}"
    );
    let usage = nsadmin(&["getSyncStateSet", "-a", &addr]);
    assert_eq!(code(&usage), 1);
}

#[test]
fn elect_master_designates_a_replica_and_refuses_to_re_elect_the_master() {
    let (cluster, first, second) = group();
    let addr = cluster.addr(0).to_string();
    let s = second.id().unwrap().to_string();
    let text = expect_exit(&nsadmin(&["electMaster", "-a", &addr, "-c", "c", "--brokerName", "cb", "-b", &s]), 0);
    assert!(
        text.starts_with(&format!(
            "#ClusterName\tc\n#BrokerName\tcb\n#BrokerMasterAddr\t{}\n#MasterEpoch\t2\n",
            second.addr
        )),
        "{text}"
    );
    assert!(text.contains(&format!("#Broker\t{s}\t{}\n", second.addr)), "{text}");
    assert!(eventually(WAIT, || second.is_master() && !first.is_master()), "the designated broker took over");
    let again = nsadmin(&["electMaster", "-a", &addr, "-c", "c", "--bn", "cb", "-b", &s]);
    assert_eq!(code(&again), 1);
    assert!(stderr(&again).contains("CONTROLLER_MASTER_STILL_EXIST (2011)"), "{}", stderr(&again));
}

#[test]
fn clean_broker_metadata_removes_a_dead_replica_but_not_a_living_one() {
    let (cluster, first, mut second) = group();
    let addr = cluster.addr(0).to_string();
    let s = second.id().unwrap().to_string();
    let living = nsadmin(&["cleanBrokerMetadata", "-a", &addr, "--brokerName", "cb", "-b", &s, "-c", "c"]);
    assert_eq!(code(&living), 1);
    assert!(stderr(&living).contains("is still alive"), "stdout {} stderr {}", stdout(&living), stderr(&living));
    second.kill();
    let clean = || nsadmin(&["cleanBrokerMetadata", "-a", &addr, "--brokerName", "cb", "-b", &s, "-c", "c"]);
    assert!(eventually(WAIT, || code(&clean()) == 0), "cleaned once the replica is dead");
    let json = json_ok(&nsadmin(&["getSyncStateSet", "-a", &addr, "-b", "cb", "--json"]));
    let ids: Vec<i64> = ["inSyncReplicas", "notInSyncReplicas"]
        .iter()
        .flat_map(|k| json["cb"][k].as_array().cloned().unwrap_or_default())
        .map(|r| r["brokerId"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [first.id().unwrap()], "only the master is left");
    let usage = nsadmin(&["cleanBrokerMetadata", "-a", &addr, "--brokerName", "cb"]);
    assert_eq!(code(&usage), 1, "-c is needed unless -l");
}

#[test]
fn config_commands_read_and_change_each_controllers_settings() {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let addr = cluster.addr(0).to_string();
    let line = |text: &str, key: &str| text.lines().find(|l| l.starts_with(&format!("{key} "))).map(str::to_owned);
    let text = expect_exit(&nsadmin(&["getControllerConfig", "-a", &addr]), 0);
    let shown =
        line(&text, "notifyBrokerRoleChanged").unwrap_or_else(|| panic!("no notifyBrokerRoleChanged in {text}"));
    assert!(shown.ends_with("=  true"), "{shown}");
    assert!(line(&text, "controllerDLegerSelfId").is_some_and(|l| l.ends_with("=  n0")), "{text}");
    expect_exit(&nsadmin(&["updateControllerConfig", "-a", &addr, "-k", "notifyBrokerRoleChanged", "-v", "false"]), 0);
    let text = expect_exit(&nsadmin(&["getControllerConfig", "-a", &addr]), 0);
    assert!(line(&text, "notifyBrokerRoleChanged").is_some_and(|l| l.ends_with("=  false")), "{text}");
    let refused = nsadmin(&["updateControllerConfig", "-a", &addr, "-k", "configStorePath", "-v", "/tmp/x"]);
    assert_eq!(code(&refused), 1);
    let said = format!("{}{}", stdout(&refused), stderr(&refused));
    assert!(said.contains("NO_PERMISSION (16)"), "{said}");
    let bad = nsadmin(&["updateControllerConfig", "-a", &addr, "-k", "electMasterMaxRetryCount", "-v", "x"]);
    assert_eq!(code(&bad), 1);
    let said = format!("{}{}", stdout(&bad), stderr(&bad));
    assert!(said.contains("electMasterMaxRetryCount"), "{said}");
}

#[test]
fn diff_controllers_agrees_on_three_peers_and_exits_2_when_they_disagree_or_one_is_down() {
    let cluster = ControllerCluster::start(3, |_| {});
    cluster.wait_leader(WAIT);
    let start = || ControllerBroker::start(BrokerConfig::new("cb", &cluster.controller_addr()));
    let first = start();
    assert!(eventually(WAIT, || first.is_master()), "the first broker became master");
    let second = start();
    assert!(eventually(WAIT, || second.id().is_some() && second.state().master.is_some()), "the second joined");
    let all: Vec<String> = (0..3).map(|i| cluster.addr(i).to_string()).collect();
    let list = all.join(";");
    let diff = |list: &str| nsadmin(&["diffControllers", "-a", list, "-b", "cb"]);
    assert!(eventually(WAIT, || code(&diff(&list)) == 0), "the peers agree: {}", stdout(&diff(&list)));
    assert_eq!(stdout(&diff(&list)), "no drift: 3 controllers answered, 1 served group state\n");

    // Another controller group of one peer, which leads itself and knows no group cb.
    let other = ControllerCluster::start(1, |_| {});
    other.wait_leader(WAIT);
    let mixed = format!("{list};{}", other.addr(0));
    let out = diff(&mixed);
    let text = expect_exit(&out, 2);
    for drift in ["DRIFT serving peers", "DRIFT leader", "DRIFT peers", "DRIFT cb master"] {
        assert!(text.contains(drift), "{drift} in {text}");
    }
    assert!(text.contains("(absent)"), "{text}");

    let down = format!("{list};{}", dead_addr());
    let text = expect_exit(&diff(&down), 2);
    assert!(text.starts_with("UNREACHABLE "), "{text}");
    assert!(text.ends_with("no drift: 3 controllers answered, 1 served group state\n"), "{text}");
    let json = nsadmin(&["diffControllers", "-a", &list, "--json"]);
    assert_eq!(code(&json), 0);
    let value: serde_json::Value = serde_json::from_str(stdout(&json).trim()).unwrap();
    assert_eq!((&value["agree"], &value["serving"]), (&serde_json::json!(true), &serde_json::json!(0)));
}
