//! The test broker's requests against a Java 5.3.3 broker's captured ones: the same sequence
//! (1005 → 1012 → 1013 → 1003 → 1002, then heartbeats, 1004 polls and the master's 1001), each
//! with the same code, flag, language, version and extFields keys in the same order, and the
//! same values where they do not depend on the run (names, ids, epochs, priority).

use namesrv::protocol::header::json;
use namesrv::protocol::RemotingCommand;
use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::eventually;

use super::wire::fixture;
use super::{broker, wait_role, WAIT};

/// Values that differ between runs: addresses, clocks, offsets, the heartbeat timeout.
const RUN_SPECIFIC: &[&str] = &[
    "brokerAddr",
    "brokerAddress",
    "registerCheckCode",
    "invokeTime",
    "heartbeatTimeoutMills",
    "confirmOffset",
    "maxOffset",
];

fn captured(name: &str) -> RemotingCommand {
    json::decode(&fixture(&format!("to-controller/{name}.header.raw"))).unwrap()
}

fn same_shape(ours: &RemotingCommand, java: &RemotingCommand) {
    assert_eq!(
        (ours.code, ours.flag, ours.language, ours.version),
        (java.code, java.flag, java.language, java.version)
    );
    let keys =
        |c: &RemotingCommand| c.ext_fields.as_ref().map(|e| e.iter().map(|(k, _)| k.to_owned()).collect::<Vec<_>>());
    assert_eq!(keys(ours), keys(java), "extFields of {}", java.code);
    for (key, value) in java.ext_fields.iter().flat_map(|e| e.iter()) {
        if !RUN_SPECIFIC.contains(&key) {
            assert_eq!(ours.ext(key), Some(value), "{key} of {}", java.code);
        }
    }
}

#[test]
fn the_test_broker_sends_what_a_java_broker_sends() {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let first = broker(&cluster, |c| c.cluster = "CtlCluster".into());
    wait_role(&first, true);
    let second = broker(&cluster, |c| c.cluster = "CtlCluster".into());
    wait_role(&second, false);
    first.set_in_sync(&[2]);
    assert!(eventually(WAIT, || first.state().sent.iter().any(|c| c.code == 1001)));
    assert!(eventually(WAIT, || first
        .state()
        .sent
        .iter()
        .filter(|c| c.code == 904 && c.ext("epoch") == Some("1"))
        .count()
        > 1));
    let sent = first.state().sent.clone();
    let first_of = |code: i32| sent.iter().find(|c| c.code == code).unwrap_or_else(|| panic!("no {code} sent")).clone();
    let order: Vec<i32> = sent.iter().map(|c| c.code).filter(|c| *c != 904).take(5).collect();
    assert_eq!(order, [1005, 1012, 1013, 1003, 1002], "the start-up sequence");
    for (code, name) in [
        (1005, "0000_req_1005"),
        (1012, "0002_req_1012"),
        (1013, "0004_req_1013"),
        (1003, "0006_req_1003"),
        (1002, "0008_req_1002"),
        (1004, "0015_req_1004"),
        (1001, "0044_req_1001"),
    ] {
        same_shape(&first_of(code), &captured(name));
    }
    let beat = sent.iter().find(|c| c.code == 904 && c.ext("epoch") == Some("1")).unwrap();
    same_shape(beat, &captured("0011_req_904_BROKER_HEARTBEAT"));
    assert_eq!(first_of(1001).body.as_deref(), Some(&fixture("to-controller/0044_req_1001.body.bin")[..]));
    let second_sent = second.state().sent.clone();
    let apply = second_sent.iter().find(|c| c.code == 1013).unwrap();
    same_shape(apply, &captured("0022_req_1013"));
}
