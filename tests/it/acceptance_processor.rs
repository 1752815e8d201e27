//! The Java namesrv suites RequestProcessorTest, RouteInfoManagerTest and RouteInfoManagerBrokerRegisterTest
//! restated as black-box checks over real TCP.

use crate::common::checks::assert_success;
use crate::common::routeinfo::{dv, grid_broker, perm, query_data_version};
use crate::common::*;
use namesrv::protocol::{ExtFields, RemotingCommand};
use serde_json::{json, Value};

/// The DataVersion JSON a QUERY_DATA_VERSION response carries as its body.
fn stored_version(resp: &RemotingCommand) -> Option<Value> {
    resp.body.as_deref().map(|b| serde_json::from_slice(b).expect("data version json"))
}

// ---------------------------------------------------------------------------------------------
// Java's processor/RequestProcessorTest
// ---------------------------------------------------------------------------------------------

/// The broker `RequestProcessorTest` pre-registers: id 1234, the only member, so a prime slave.
fn default_broker() -> Broker {
    let mut b =
        Broker::new("default-cluster", "default-broker", 1234, "127.0.0.1:10911").topics(&["unit-test0", "unit-test1"]);
    b.ha_addr = "127.0.0.1:1001".into();
    b
}

/// The identity of the test's helper request (`broker` / `10.10.1.1` / `cluster` / 2333).
fn helper_broker() -> Broker {
    let mut b = Broker::new("cluster", "broker", 2333, "10.10.1.1");
    b.ha_addr = "10.10.2.1".into();
    b
}

/// A started server with [`default_broker`] registered over `conn`.
fn request_processor_fixture() -> (TestServer, Client) {
    let server = TestServer::start();
    let mut conn = server.client();
    assert_success(&conn.register(&default_broker()));
    (server, conn)
}

/// The helper's REGISTER_BROKER ext, with `enableActingMaster=false` so that id 2333, the only
/// member of `broker`, is a prime slave whose topics are applied (RouteInfoManager.registerBroker).
fn helper_register_ext() -> ExtFields {
    ExtFields::new()
        .with("brokerName", "broker")
        .with("brokerAddr", "10.10.1.1")
        .with("clusterName", "cluster")
        .with("haServerAddr", "10.10.2.1")
        .with("brokerId", "2333")
        .with("enableActingMaster", "false")
        .with("topic", "unit-test0")
}

/// A topic-config table keyed `unit-test1` (topicName null) and `unit-test2` (topicName absent).
fn nameless_topic_table() -> Value {
    json!({
        "unit-test1": {"attributes":{},"order":false,"perm":6,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":null,"topicSysFlag":0,"writeQueueNums":8},
        "unit-test2": {"attributes":{},"order":false,"perm":6,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicSysFlag":0,"writeQueueNums":8}
    })
}

#[test]
fn unknown_request_code_is_answered_with_request_code_not_supported() {
    let (server, _conn) = request_processor_fixture();
    let resp = server.client().call(RemotingCommand::request(99999, None));
    assert_eq!(resp.code, 3);
    assert_eq!(resp.remark.as_deref(), Some(" request type 99999 not supported"));
}

#[test]
fn pre_registered_prime_slave_routes_its_topics_and_unknown_topics_are_not_found() {
    let (server, _conn) = request_processor_fixture();
    let mut client = server.client();
    let route = client.route("unit-test0").expect("prime slave topics are applied");
    assert_eq!(route_addrs(&route, "default-broker"), json!({"1234": "127.0.0.1:10911"}));
    assert_eq!(perm(&route, "default-broker"), 6);
    assert!(client.route("unit-test1").is_ok());
    assert_eq!(client.route("test"), Err(17));

    let info = client.call(RemotingCommand::request(106, None));
    assert_success(&info);
    let info = parse_lenient(info.body.as_deref().expect("cluster info body"));
    assert_eq!(info["clusterAddrTable"], json!({"default-cluster": ["default-broker"]}));
}

#[test]
fn old_body_registration_with_nameless_topic_configs_is_routed_by_map_key() {
    let (server, _conn) = request_processor_fixture();
    let mut broker = server.client();
    // Version 0 (< V3_0_11): the body is a bare TopicConfigSerializeWrapper.
    let body = json!({
        "dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": 1_700_000_000_000_i64},
        "topicConfigTable": nameless_topic_table()
    });
    let mut request =
        RemotingCommand::request(103, Some(helper_register_ext())).with_body(serde_json::to_vec(&body).unwrap());
    request.version = 0;
    let resp = broker.call(request);
    assert_success(&resp);
    assert_eq!(resp.remark, None);

    let mut client = server.client();
    let info = client.cluster_info();
    assert_eq!(info["brokerAddrTable"]["broker"]["brokerAddrs"], json!({"2333": "10.10.1.1"}));
    for topic in ["unit-test1", "unit-test2"] {
        let route = client.route(topic).unwrap_or_else(|code| panic!("{topic}: code {code}"));
        assert_eq!(route_addrs(&route, "broker"), json!({"2333": "10.10.1.1"}), "{topic}");
    }
}

#[test]
fn register_broker_body_registration_routes_its_topics_and_filter_servers() {
    let (server, _conn) = request_processor_fixture();
    let mut broker = server.client();
    // Version 100 (>= V3_0_11): the body is a RegisterBrokerBody.
    let body = json!({
        "filterServerList": ["10.10.1.1:30000"],
        "topicConfigSerializeWrapper": {
            "dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": 1_700_000_000_000_i64},
            "topicConfigTable": nameless_topic_table()
        }
    });
    let mut request =
        RemotingCommand::request(103, Some(helper_register_ext())).with_body(serde_json::to_vec(&body).unwrap());
    request.version = 100;
    let resp = broker.call(request);
    assert_success(&resp);
    assert_eq!(resp.remark, None);

    let mut client = server.client();
    let info = client.cluster_info();
    assert_eq!(info["brokerAddrTable"]["broker"]["brokerAddrs"], json!({"2333": "10.10.1.1"}));
    let route = client.route("unit-test1").expect("route for the map key");
    assert_eq!(route_addrs(&route, "broker"), json!({"2333": "10.10.1.1"}));
    // RouteInfoManager.pickupTopicRouteData lists the broker's filter servers under its address.
    assert_eq!(route["filterServerTable"], json!({"10.10.1.1": ["10.10.1.1:30000"]}));
}

#[test]
fn unregistering_a_broker_leaves_the_other_broker_in_the_broker_table() {
    let (server, _conn) = request_processor_fixture();
    let mut broker = server.client();
    let helper = helper_broker().topics(&["unit-test1", "unit-test2"]);
    assert_success(&broker.register(&helper));
    let resp = broker.unregister(&helper);
    assert_success(&resp);
    assert_eq!(resp.remark, None);

    let info = server.client().cluster_info();
    assert_eq!(info["brokerAddrTable"].get("broker"), None, "the helper broker is gone");
    assert_eq!(info["brokerAddrTable"]["default-broker"]["brokerAddrs"], json!({"1234": "127.0.0.1:10911"}));
    assert_eq!(server.client().route("unit-test2"), Err(17));
}

#[test]
fn query_data_version_without_body_succeeds_and_always_says_whether_it_changed() {
    let (server, _conn) = request_processor_fixture();
    let mut client = server.client();
    let mut request = helper_broker().identity_request(322);
    request.ext_fields.as_mut().unwrap().insert("topic", "unit-test0");
    let resp = client.call(request);
    assert_success(&resp);
    // A missing body counts as changed; an unknown broker has no stored version to send back.
    assert_eq!(resp.ext("changed"), Some("true"));
    assert_eq!(resp.body, None);

    // The known broker, also without a body: still changed, and its stored version comes back.
    let resp = query_data_version(&mut client, &default_broker(), None);
    assert_success(&resp);
    assert_eq!(resp.ext("changed"), Some("true"));
    assert_eq!(
        stored_version(&resp),
        Some(json!({"counter": 1, "stateVersion": 0, "timestamp": 1_700_000_000_000_i64}))
    );
}

#[test]
fn broker_heartbeat_succeeds() {
    let (server, _conn) = request_processor_fixture();
    let mut client = server.client();
    let mut request = helper_broker().identity_request(904);
    request.ext_fields.as_mut().unwrap().insert("topic", "unit-test0");
    assert_success(&client.call(request));
    assert_success(&client.call(default_broker().identity_request(904)));
}

#[test]
fn old_version_slave_registration_does_not_change_topic_routes() {
    let server = TestServer::start();
    let mut conn = server.client();
    // No enableActingMaster header: an old broker, so id 2333 is no prime slave (RouteInfoManager.registerBroker).
    let mut old_slave = helper_broker().topics(&["unit-test1", "unit-test2"]);
    old_slave.enable_acting_master = None;
    assert_success(&conn.register(&old_slave));
    let mut client = server.client();
    assert_eq!(client.cluster_info()["brokerAddrTable"]["broker"]["brokerAddrs"], json!({"2333": "10.10.1.1"}));
    assert_eq!(client.route("unit-test1"), Err(17));
}

// ---------------------------------------------------------------------------------------------
// Java's routeinfo/RouteInfoManagerTest
// ---------------------------------------------------------------------------------------------

// RouteInfoManagerTest registers one address in two clusters and keeps two live entries; here an
// address serves one broker, so the second registration replaces the first (a documented
// difference from Java).
#[test]
fn the_same_address_registered_in_a_second_cluster_replaces_the_first() {
    let server = TestServer::start();
    let mut conn = server.client();
    let mut first = default_broker();
    first.data_version = dv(10, 0, 100);
    assert_success(&conn.register(&first));

    let mut client = server.client();
    let resp = query_data_version(&mut client, &first, Some(dv(10, 0, 100)));
    assert_success(&resp);
    assert_eq!(resp.ext("changed"), Some("false"));
    assert_eq!(stored_version(&resp), Some(json!({"counter": 10, "stateVersion": 0, "timestamp": 100})));

    let mut second = Broker::new("default-cluster-1", "default-broker-1", 1234, "127.0.0.1:10911")
        .topics(&["unit-test0", "unit-test1"]);
    second.ha_addr = "127.0.0.1:1001".into();
    second.data_version = dv(20, 0, 200);
    assert_success(&conn.register(&second));

    let resp = query_data_version(&mut client, &first, Some(dv(10, 0, 100)));
    assert_eq!((resp.ext("changed"), resp.body.as_deref()), (Some("true"), None), "the first entry was replaced");
    let resp = query_data_version(&mut client, &second, Some(dv(20, 0, 200)));
    assert_eq!(resp.ext("changed"), Some("false"));
    assert_eq!(stored_version(&resp), Some(json!({"counter": 20, "stateVersion": 0, "timestamp": 200})));
    assert_eq!(client.cluster_info()["clusterAddrTable"], json!({"default-cluster-1": ["default-broker-1"]}));

    assert_success(&conn.unregister(&second));
    let resp = query_data_version(&mut client, &second, Some(dv(20, 0, 200)));
    assert_eq!((resp.ext("changed"), resp.body.as_deref()), (Some("true"), None), "the second entry is gone");
}

// ---------------------------------------------------------------------------------------------
// Java's routeinfo/RouteInfoManagerBrokerRegisterTest
// ---------------------------------------------------------------------------------------------

/// A server with 3 broker names × 3 ids registered over `conn`.
fn broker_grid_fixture() -> (TestServer, Client) {
    let server = TestServer::start();
    let mut conn = server.client();
    for n in 0..3 {
        for id in 0..3 {
            assert_success(&conn.register(&grid_broker(n, id)));
        }
    }
    (server, conn)
}

#[test]
fn master_registered_from_the_former_slave_address_takes_id_zero() {
    let (server, mut conn) = broker_grid_fixture();
    let mut client = server.client();
    assert_eq!(route_addrs(&client.route("topic-0").unwrap(), "broker-0")["0"], "cluster-broker-0:0");

    let mut promoted = grid_broker(0, 0);
    promoted.addr = "cluster-broker-0:1".into();
    assert_success(&conn.register(&promoted));
    let route = client.route("topic-0").unwrap();
    // registerBroker moved the address from id 1 to id 0 (same address, new id); id 2 is untouched.
    assert_eq!(route_addrs(&route, "broker-0"), json!({"0": "cluster-broker-0:1", "2": "cluster-broker-0:2"}));
}

#[test]
fn unregistering_id_two_removes_key_two_from_the_route() {
    let (server, mut conn) = broker_grid_fixture();
    assert_success(&conn.unregister(&grid_broker(0, 2)));
    let route = server.client().route("topic-0").unwrap();
    assert_eq!(route_addrs(&route, "broker-0"), json!({"0": "cluster-broker-0:0", "1": "cluster-broker-0:1"}));
    assert_eq!(
        route_addrs(&route, "broker-1"),
        json!({"0": "cluster-broker-1:0", "1": "cluster-broker-1:1", "2": "cluster-broker-1:2"})
    );
}
