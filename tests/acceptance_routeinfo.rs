//! The Java namesrv test suites (spec §9.1, §9.3, §9.4, §9.5) restated as black-box checks over real TCP.

mod common;

use std::time::Duration;

use common::*;
use namesrv::model::DataVersion;
use namesrv::protocol::{ExtFields, RemotingCommand};
use serde_json::{json, Value};

const PERM_WRITE: i64 = 2;
const WAIT: Duration = Duration::from_secs(5);

/// Asserts a SUCCESS response, showing the remark otherwise.
fn assert_success(resp: &RemotingCommand) {
    assert_eq!(resp.code, 0, "remark: {:?}", resp.remark);
}

/// The perm of broker `name`'s QueueData in a parsed route.
fn perm(route: &Value, name: &str) -> i64 {
    route_queue(route, name)["perm"].as_i64().unwrap_or_else(|| panic!("no queue data for {name} in {route}"))
}

/// The names of the BrokerDatas of a parsed route, sorted.
fn broker_names(route: &Value) -> Vec<String> {
    let mut names: Vec<String> =
        route["brokerDatas"].as_array().unwrap().iter().map(|b| b["brokerName"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

/// QUERY_DATA_VERSION for `broker`'s identity, with `version` as the body when given.
fn query_data_version(client: &mut Client, broker: &Broker, version: Option<DataVersion>) -> RemotingCommand {
    let mut request = broker.identity_request(322);
    if let Some(v) = version {
        request = request.with_body(v.to_json().into_bytes());
    }
    client.call(request)
}

/// The DataVersion JSON a QUERY_DATA_VERSION response carries as its body.
fn stored_version(resp: &RemotingCommand) -> Option<Value> {
    resp.body.as_deref().map(|b| serde_json::from_slice(b).expect("data version json"))
}

fn dv(counter: i64, state_version: i64, timestamp: i64) -> DataVersion {
    DataVersion { counter, state_version, timestamp }
}

// ---------------------------------------------------------------------------------------------
// §9.1 processor/RequestProcessorTest
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
/// member of `broker`, is a prime slave whose topics are applied (§5.4 step 7).
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
    // §5.9 step 3: the broker's filter servers are listed under its address.
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
    // No enableActingMaster header: an old broker, so id 2333 is no prime slave (§5.4 step 7).
    let mut old_slave = helper_broker().topics(&["unit-test1", "unit-test2"]);
    old_slave.enable_acting_master = None;
    assert_success(&conn.register(&old_slave));
    let mut client = server.client();
    assert_eq!(client.cluster_info()["brokerAddrTable"]["broker"]["brokerAddrs"], json!({"2333": "10.10.1.1"}));
    assert_eq!(client.route("unit-test1"), Err(17));
}

// ---------------------------------------------------------------------------------------------
// §9.4 routeinfo/RouteInfoManagerTest
// ---------------------------------------------------------------------------------------------

#[test]
fn the_same_address_in_two_clusters_has_two_live_entries_until_one_is_unregistered() {
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

    // (default-cluster, addr) keeps its own version ...
    let resp = query_data_version(&mut client, &first, Some(dv(10, 0, 100)));
    assert_eq!(resp.ext("changed"), Some("false"));
    assert_eq!(stored_version(&resp), Some(json!({"counter": 10, "stateVersion": 0, "timestamp": 100})));
    // ... and (default-cluster-1, addr) has the new one.
    let resp = query_data_version(&mut client, &second, Some(dv(20, 0, 200)));
    assert_eq!(resp.ext("changed"), Some("false"));
    assert_eq!(stored_version(&resp), Some(json!({"counter": 20, "stateVersion": 0, "timestamp": 200})));

    assert_success(&conn.unregister(&second));
    let resp = query_data_version(&mut client, &second, Some(dv(20, 0, 200)));
    assert_success(&resp);
    assert_eq!(resp.ext("changed"), Some("true"));
    assert_eq!(resp.body, None, "the default-cluster-1 entry is gone");
    let resp = query_data_version(&mut client, &first, Some(dv(10, 0, 100)));
    assert_eq!(resp.ext("changed"), Some("false"));
    assert_eq!(stored_version(&resp), Some(json!({"counter": 10, "stateVersion": 0, "timestamp": 100})));
}

// ---------------------------------------------------------------------------------------------
// §9.5 routeinfo/RouteInfoManagerBrokerRegisterTest
// ---------------------------------------------------------------------------------------------

/// Broker `broker-N` id `id` at `cluster-broker-N:id`, with topics `topic-0..9`.
fn grid_broker(n: usize, id: i64) -> Broker {
    let topics: Vec<String> = (0..10).map(|t| format!("topic-{t}")).collect();
    let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
    Broker::new("cluster", &format!("broker-{n}"), id, &format!("cluster-broker-{n}:{id}")).topics(&topics)
}

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
    // The address moved from id 1 to id 0 (§5.4 step 4); id 2 is untouched.
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

// ---------------------------------------------------------------------------------------------
// §9.3 routeinfo/RouteInfoManagerNewTest (supportActingMaster=true)
// ---------------------------------------------------------------------------------------------

const MASTER_ADDR: &str = "127.0.0.1:10911";
const MASTER_HA: &str = "127.0.0.1:20911";
const SLAVE_ADDR: &str = "127.0.0.1:30911";
const SLAVE_HA: &str = "127.0.0.1:40911";

/// A server with `supportActingMaster=true`, as `RouteInfoManagerNewTest` runs.
fn acting_master_server() -> TestServer {
    TestServer::with(|s| s.support_acting_master = true)
}

/// A `Default_Broker` member with `topics` plus `baseTopic` (16/16), enableActingMaster=true.
fn member(id: i64, addr: &str, ha: &str, topics: &[&str]) -> Broker {
    let mut b = Broker::new("Default_Cluster", "Default_Broker", id, addr).topics(topics);
    b.topics.push(("baseTopic".into(), 6, 16));
    b.ha_addr = ha.into();
    b.enable_acting_master = Some(true);
    b
}

fn master(topics: &[&str]) -> Broker {
    member(0, MASTER_ADDR, MASTER_HA, topics)
}

fn slave(topics: &[&str]) -> Broker {
    member(1, SLAVE_ADDR, SLAVE_HA, topics)
}

/// `broker` with enableActingMaster=false.
fn without_acting_master(mut broker: Broker) -> Broker {
    broker.enable_acting_master = Some(false);
    broker
}

/// The route addresses of a group with both members registered.
fn master_and_slave() -> Value {
    json!({"0": MASTER_ADDR, "1": SLAVE_ADDR})
}

#[test]
fn slave_learns_master_and_ha_addresses_from_the_register_response() {
    let server = acting_master_server();
    let mut conn = server.client();
    let resp = conn.register(&master(&["TestTopic"]));
    assert_success(&resp);
    assert_eq!(resp.ext("masterAddr"), None);
    assert_eq!(resp.ext("haServerAddr"), None);

    let resp = conn.register(&slave(&["TestTopic"]));
    assert_success(&resp);
    assert_eq!(resp.ext("masterAddr"), Some(MASTER_ADDR));
    assert_eq!(resp.ext("haServerAddr"), Some(MASTER_HA));
}

#[test]
fn registered_slave_is_routed_next_to_its_master() {
    let server = acting_master_server();
    let mut conn = server.client();
    assert_success(&conn.register(&master(&["TestTopic"])));
    assert_success(&conn.register(&slave(&["TestTopic"])));
    let route = server.client().route("TestTopic").unwrap();
    assert_eq!(route_addrs(&route, "Default_Broker"), master_and_slave());
    assert_eq!(perm(&route, "Default_Broker"), 6);
}

#[test]
fn new_topic_from_a_known_master_is_routed_to_master_and_slave() {
    let server = acting_master_server();
    let mut conn = server.client();
    assert_success(&conn.register(&master(&["TestTopic"])));
    assert_success(&conn.register(&slave(&["TestTopic"])));
    let mut client = server.client();
    assert_eq!(client.route("TestTopic1"), Err(17));
    // Same data version (Java's test builds a fresh DataVersion with the same counter and, usually,
    // the same millisecond): the topic is applied because it has no queue data yet (§5.4 step 9).
    // §5.4 step 9 applies a topic that has no QueueData for this broker even when the
    // dataVersion is unchanged.
    assert_success(&conn.register(&master(&["TestTopic", "TestTopic1"])));
    let route = client.route("TestTopic1").unwrap();
    assert_eq!(route_addrs(&route, "Default_Broker"), master_and_slave());
}

#[test]
fn switching_broker_roles_moves_addresses_between_ids() {
    let server = acting_master_server();
    let mut conn = server.client();
    let old_master = without_acting_master(master(&["TestTopic"]));
    let old_slave = without_acting_master(slave(&["TestTopic"]));
    assert_success(&conn.register(&old_master));
    assert_success(&conn.register(&old_slave));
    let mut client = server.client();

    assert_success(&conn.unregister(&old_master));
    assert_eq!(route_addrs(&client.route("TestTopic").unwrap(), "Default_Broker"), json!({"1": SLAVE_ADDR}));

    let mut new_master = old_slave.clone().bump();
    new_master.id = 0;
    assert_success(&conn.register(&new_master));
    assert_eq!(route_addrs(&client.route("TestTopic").unwrap(), "Default_Broker"), json!({"0": SLAVE_ADDR}));

    let mut new_slave = old_master.clone().bump();
    new_slave.id = 1;
    assert_success(&conn.register(&new_slave));
    let route = client.route("TestTopic").unwrap();
    assert_eq!(route_addrs(&route, "Default_Broker"), json!({"0": SLAVE_ADDR, "1": MASTER_ADDR}));
    assert_eq!(perm(&route, "Default_Broker"), 6);
}

#[test]
fn unregistering_the_slave_leaves_the_master_routed_and_writable() {
    let server = acting_master_server();
    let mut conn = server.client();
    let mut client = server.client();
    // Twice, as Java does (its second round goes through the batch path; ours has one path).
    for round in 0..2 {
        assert_success(&conn.register(&master(&["TestTopic"])));
        assert_success(&conn.register(&slave(&["TestTopic"])));
        assert_eq!(route_addrs(&client.route("TestTopic").unwrap(), "Default_Broker"), master_and_slave());
        assert_success(&conn.unregister(&slave(&["TestTopic"])));
        let route = client.route("TestTopic").unwrap();
        assert_eq!(broker_names(&route), ["Default_Broker"], "round {round}");
        assert_eq!(route_addrs(&route, "Default_Broker"), json!({"0": MASTER_ADDR}), "round {round}");
        assert_eq!(perm(&route, "Default_Broker"), 6, "round {round}");
    }
}

#[test]
fn unregistering_an_acting_master_group_master_routes_the_slave_as_read_only_master() {
    let server = acting_master_server();
    let mut conn = server.client();
    assert_success(&conn.register(&master(&["TestTopic"])));
    assert_success(&conn.register(&slave(&["TestTopic"])));
    assert_success(&conn.unregister(&master(&["TestTopic"])));
    let route = server.client().route("TestTopic").unwrap();
    assert_eq!(route_addrs(&route, "Default_Broker"), json!({"0": SLAVE_ADDR}));
    assert_eq!(route["queueDatas"].as_array().unwrap().len(), 1);
    assert_eq!(perm(&route, "Default_Broker"), 4);
}

#[test]
fn unregistering_an_old_style_master_leaves_the_slave_at_its_own_id_and_writable() {
    let server = acting_master_server();
    let mut conn = server.client();
    let old_master = without_acting_master(master(&["TestTopic"]));
    assert_success(&conn.register(&old_master));
    assert_success(&conn.register(&without_acting_master(slave(&["TestTopic"]))));
    assert_success(&conn.unregister(&old_master));
    let route = server.client().route("TestTopic").unwrap();
    let addrs = route_addrs(&route, "Default_Broker");
    assert_eq!(addrs.get("0"), None);
    assert_eq!(addrs, json!({"1": SLAVE_ADDR}));
    assert_eq!(perm(&route, "Default_Broker"), 6);
}

#[test]
fn master_leaving_and_returning_toggles_route_writability() {
    let server = acting_master_server();
    let mut conn = server.client();
    let mut client = server.client();
    assert_success(&conn.register(&master(&["TestTopic"])));
    assert_success(&conn.register(&slave(&["TestTopic"])));
    let route = client.route("TestTopic").unwrap();
    assert_eq!(route_addrs(&route, "Default_Broker").as_object().unwrap().len(), 2);
    assert_ne!(perm(&route, "Default_Broker") & PERM_WRITE, 0);

    assert_success(&conn.unregister(&master(&["TestTopic"])));
    let route = client.route("TestTopic").unwrap();
    assert_eq!(route_addrs(&route, "Default_Broker").as_object().unwrap().len(), 1);
    assert_eq!(perm(&route, "Default_Broker") & PERM_WRITE, 0);

    assert_success(&conn.register(&master(&["TestTopic"])));
    let route = client.route("TestTopic").unwrap();
    assert_eq!(route_addrs(&route, "Default_Broker"), master_and_slave());
    assert_ne!(perm(&route, "Default_Broker") & PERM_WRITE, 0);
}

#[test]
fn lone_slave_is_routed_read_only_until_its_master_registers() {
    let server = acting_master_server();
    let mut conn = server.client();
    let mut client = server.client();
    assert_success(&conn.register(&slave(&["TestTopic"])));
    let route = client.route("TestTopic").expect("a prime slave's topics are routed");
    assert_eq!(perm(&route, "Default_Broker") & PERM_WRITE, 0);

    assert_success(&conn.register(&master(&["TestTopic"])));
    assert_success(&conn.register(&slave(&["TestTopic"])));
    assert_ne!(perm(&client.route("TestTopic").unwrap(), "Default_Broker") & PERM_WRITE, 0);

    assert_success(&conn.unregister(&master(&["TestTopic"])));
    assert_eq!(perm(&client.route("TestTopic").unwrap(), "Default_Broker") & PERM_WRITE, 0);

    assert_success(&conn.register(&master(&["TestTopic"])));
    assert_ne!(perm(&client.route("TestTopic").unwrap(), "Default_Broker") & PERM_WRITE, 0);
}

// The Java order-topic cases set `order=true` on the TopicConfigs; the namesrv never reads that
// field (§3.11), so the harness's `order=false` bodies exercise the same paths.

#[test]
fn partition_order_topic_of_a_lone_slave_is_routed_at_id_zero_read_only() {
    let server = acting_master_server();
    let mut conn = server.client();
    assert_success(&conn.register(&slave(&["TestTopic"])));
    let route = server.client().route("TestTopic").unwrap();
    assert_eq!(route_addrs(&route, "Default_Broker"), json!({"0": SLAVE_ADDR}));
    assert_eq!(perm(&route, "Default_Broker") & PERM_WRITE, 0);
}

#[test]
fn partition_order_topic_is_routed_at_the_slave_as_id_zero_read_only_after_the_master_leaves() {
    let server = acting_master_server();
    let mut conn = server.client();
    assert_success(&conn.register(&slave(&["TestTopic"])));
    assert_success(&conn.register(&master(&["TestTopic"])));
    assert_success(&conn.unregister(&master(&["TestTopic"])));
    let route = server.client().route("TestTopic").unwrap();
    assert_eq!(route_addrs(&route, "Default_Broker"), json!({"0": SLAVE_ADDR}));
    assert_eq!(perm(&route, "Default_Broker") & PERM_WRITE, 0);
}

#[test]
fn topics_missing_from_a_later_registration_are_kept_by_default() {
    let server = acting_master_server();
    let mut conn = server.client();
    assert_success(&conn.register(&master(&["TestTopic", "TestTopic1"])));
    assert_success(&conn.register(&master(&["TestTopic1"]).bump()));
    let mut client = server.client();
    assert!(client.route("TestTopic").is_ok());
    assert!(client.route("TestTopic1").is_ok());
}

#[test]
fn topics_missing_from_a_later_registration_are_deleted_when_configured() {
    let server = TestServer::with(|s| {
        s.support_acting_master = true;
        s.delete_topic_with_broker_registration = true;
    });
    let mut conn = server.client();
    assert_success(&conn.register(&master(&["TestTopic", "TestTopic1"])));
    assert_success(&conn.register(&master(&["TestTopic1"]).bump()));
    let mut client = server.client();
    assert_eq!(client.route("TestTopic"), Err(17));
    assert!(client.route("TestTopic1").is_ok());
}

#[test]
fn a_topic_dropped_by_registration_disappears_only_when_the_last_broker_drops_it() {
    let server = TestServer::with(|s| {
        s.support_acting_master = true;
        s.delete_topic_with_broker_registration = true;
    });
    let mut conn = server.client();
    let first = master(&["TestTopic", "TestTopic1"]);
    let mut second = master(&["TestTopic", "TestTopic1"]);
    second.name = "Default_Broker1".into();
    second.addr = "127.0.0.1:109119".into();
    assert_success(&conn.register(&first));
    assert_success(&conn.register(&second));
    let mut client = server.client();

    let mut first_again = first.bump();
    first_again.topics.retain(|(t, _, _)| t != "TestTopic");
    assert_success(&conn.register(&first_again));
    assert_eq!(broker_names(&client.route("TestTopic").unwrap()), ["Default_Broker1"]);
    assert_eq!(broker_names(&client.route("TestTopic1").unwrap()), ["Default_Broker", "Default_Broker1"]);

    let mut second_again = second.bump();
    second_again.topics.retain(|(t, _, _)| t != "TestTopic");
    assert_success(&conn.register(&second_again));
    assert_eq!(client.route("TestTopic"), Err(17));
    assert_eq!(broker_names(&client.route("TestTopic1").unwrap()), ["Default_Broker", "Default_Broker1"]);
}

#[test]
fn closing_a_broker_connection_removes_its_routes() {
    let server = acting_master_server();
    let mut client = server.client();

    let mut lone = server.client();
    assert_success(&lone.register(&master(&["TestTopic", "TestTopic1"])));
    assert!(client.route("TestTopic").is_ok());
    drop(lone);
    assert!(
        eventually(WAIT, || client.route("TestTopic") == Err(17) && client.route("TestTopic1") == Err(17)),
        "routes of a closed broker connection must go"
    );

    let mut master_conn = server.client();
    let mut slave_conn = server.client();
    assert_success(&master_conn.register(&without_acting_master(master(&["TestTopic"]))));
    assert_success(&slave_conn.register(&without_acting_master(slave(&["TestTopic"]))));
    assert_eq!(route_addrs(&client.route("TestTopic").unwrap(), "Default_Broker"), master_and_slave());

    drop(master_conn);
    assert!(
        eventually(WAIT, || client
            .route("TestTopic")
            .is_ok_and(|r| route_addrs(&r, "Default_Broker") == json!({"1": SLAVE_ADDR}))),
        "closing the master's connection leaves only the slave"
    );
    drop(slave_conn);
    assert!(
        eventually(WAIT, || client.route("TestTopic") == Err(17)),
        "closing the slave's connection drops the route"
    );
}

#[test]
fn first_registration_with_a_single_topic_is_rejected() {
    let server = acting_master_server();
    let mut conn = server.client();
    let mut single = master(&[]);
    single.topics = vec![("TestTopic".into(), 6, 8)];
    let resp = conn.register(&single);
    assert_eq!(resp.code, 1);
    assert_eq!(resp.remark.as_deref(), Some("register broker failed"));

    let mut client = server.client();
    assert_eq!(client.route("TestTopic"), Err(17));
    // Steps 1-4 stay applied: an empty BrokerData is visible in the cluster info (§5.4 step 6).
    let info = client.cluster_info();
    assert_eq!(info["clusterAddrTable"], json!({"Default_Cluster": ["Default_Broker"]}));
    assert_eq!(info["brokerAddrTable"]["Default_Broker"]["brokerAddrs"], json!({}));

    // Once the broker is known, a single-topic (incremental) registration merges.
    assert_success(&conn.register(&master(&["TestTopic"])));
    let mut incremental = master(&[]).bump();
    incremental.topics = vec![("TestTopic1".into(), 6, 8)];
    assert_success(&conn.register(&incremental));
    assert!(client.route("TestTopic").is_ok());
    assert!(client.route("TestTopic1").is_ok());
}

#[test]
fn registration_with_an_older_state_version_than_the_current_master_is_ignored() {
    let server = TestServer::start();
    let mut conn = server.client();
    let mut current = without_acting_master(master(&["TestTopic"]));
    current.data_version = dv(1, 5, 1_700_000_000_000);
    assert_success(&conn.register(&current));
    let mut stale = without_acting_master(slave(&["TestTopic"]));
    stale.data_version = dv(1, 3, 1_700_000_000_000);
    let resp = conn.register(&stale);
    assert_success(&resp);
    assert_eq!(resp.ext("masterAddr"), Some(MASTER_ADDR));

    // The slave claims id 0 with stateVersion 3 while the master's live entry has 5 (§5.4 step 5).
    let mut stale_master = without_acting_master(member(0, SLAVE_ADDR, SLAVE_HA, &["ConflictTopic"]));
    stale_master.data_version = dv(2, 3, 1_700_000_000_000);
    let resp = conn.register(&stale_master);
    assert_success(&resp);
    assert_eq!(resp.ext("masterAddr"), None);
    assert_eq!(resp.ext("haServerAddr"), None);

    let mut client = server.client();
    // Step 4 still removed the slave's id 1 entry; id 0 keeps the current master.
    assert_eq!(route_addrs(&client.route("TestTopic").unwrap(), "Default_Broker"), json!({"0": MASTER_ADDR}));
    assert_eq!(client.route("ConflictTopic"), Err(17));
    // The stale broker's live entry was removed; the master's is untouched.
    let resp = query_data_version(&mut client, &stale_master, Some(stale_master.data_version));
    assert_eq!(resp.ext("changed"), Some("true"));
    assert_eq!(resp.body, None);
    let resp = query_data_version(&mut client, &current, Some(current.data_version));
    assert_eq!(resp.ext("changed"), Some("false"));
}
