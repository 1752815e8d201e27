//! `/api/v1/controller` over HTTP: who leads, and each broker group's master, epoch and
//! in-sync set, on the leader and a follower, before and after a failover; `enabled: false`
//! on a NameServer without controller.

use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::eventually;
use namesrv_testkit::http::get;
use namesrv_testkit::TestServer;
use serde_json::{json, Value};

use super::{master_and_slave, wait_role, WAIT};

/// `/api/v1/controller` of peer `i`.
fn overview(cluster: &ControllerCluster, i: usize) -> Value {
    let response = get(cluster.http(i), "/api/v1/controller");
    assert_eq!(response.status, 200, "{}", response.body);
    serde_json::from_str(&response.body).expect("JSON")
}

/// Group `cb` in `overview`.
fn group(overview: &Value) -> Value {
    overview["groups"].as_array().and_then(|g| g.iter().find(|g| g["broker_name"] == "cb")).cloned().unwrap_or_default()
}

#[test]
fn the_status_api_shows_each_groups_master_epoch_and_in_sync_set() {
    let cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let follower = (0..3).find(|i| *i != leader).unwrap();
    let (mut first, second) = master_and_slave(&cluster);
    let (m, s) = (first.id().unwrap(), second.id().unwrap());
    let on_leader = overview(&cluster, leader);
    assert_eq!((&on_leader["enabled"], &on_leader["serving"]), (&json!(true), &json!(true)));
    assert_eq!(on_leader["peer"], format!("n{leader}"));
    assert_eq!(on_leader["group"], "g1");
    assert!(eventually(WAIT, || {
        let g = group(&overview(&cluster, leader));
        g["sync_state_set"] == json!([m, s]) && g["replicas"].as_array().is_some_and(|r| r.len() == 2)
    }));
    let g = group(&overview(&cluster, leader));
    assert_eq!((&g["master_broker_id"], &g["master_epoch"], &g["cluster"]), (&json!(m), &json!(1), &json!("c")));
    assert_eq!(g["master_address"], json!(first.addr));
    for replica in g["replicas"].as_array().unwrap() {
        assert_eq!((&replica["alive"], &replica["in_sync"]), (&json!(true), &json!(true)), "{replica}");
    }
    let on_follower = overview(&cluster, follower);
    assert_eq!((&on_follower["serving"], &on_follower["leader"]), (&json!(false), &json!(format!("n{leader}"))));
    assert!(eventually(WAIT, || group(&overview(&cluster, follower))["master_broker_id"] == json!(m)), "replicated");

    first.kill();
    wait_role(&second, true);
    assert!(eventually(WAIT, || {
        let g = group(&overview(&cluster, leader));
        g["master_broker_id"] == json!(s) && g["sync_state_set"] == json!([s])
    }));
    let g = group(&overview(&cluster, leader));
    assert_eq!((&g["master_epoch"], &g["master_address"]), (&json!(2), &json!(second.addr)));
    let dead = g["replicas"].as_array().unwrap().iter().find(|r| r["broker_id"] == json!(m)).cloned().unwrap();
    assert_eq!((&dead["alive"], &dead["in_sync"]), (&json!(false), &json!(false)));
}

#[test]
fn without_a_controller_the_status_api_says_so() {
    let server = TestServer::with_http(|_| {});
    let response = get(server.http_addr.unwrap(), "/api/v1/controller");
    assert_eq!((response.status, response.body.as_str()), (200, r#"{"enabled":false}"#));
}
