//! mqadmin's tools over real TCP: write perms (205/327), topic deletion (216) and registration
//! (217), and broker member groups (901).

use crate::common::checks::{assert_success, body_text, broker_names, queue_names, topic_list};
use crate::common::requests::{delete_topic, request};
use crate::common::*;
use namesrv::protocol::RemotingCommand;
use serde_json::{json, Value};

/// The perm of broker `name`'s QueueData in the route of `topic`.
fn perm(client: &mut Client, topic: &str, name: &str) -> i64 {
    let route = client.route(topic).unwrap_or_else(|code| panic!("no route for {topic}: code {code}"));
    route_queue(&route, name)["perm"].as_i64().unwrap_or_else(|| panic!("no queue data for {name} in {route}"))
}

/// WIPE_WRITE_PERM_OF_BROKER (205) or ADD_WRITE_PERM_OF_BROKER (327) for `broker`.
fn write_perm(client: &mut Client, code: i32, broker: &str) -> RemotingCommand {
    client.call(request(code, &[("brokerName", broker)]))
}

/// A REGISTER_TOPIC_IN_NAMESRV (217) body as a broker sends it: one QueueData per broker name.
fn topic_route_body(brokers: &[&str]) -> Vec<u8> {
    let queues: Vec<Value> = brokers
        .iter()
        .map(|b| json!({"brokerName": b, "perm": 6, "readQueueNums": 4, "topicSysFlag": 0, "writeQueueNums": 4}))
        .collect();
    serde_json::to_vec(&json!({"brokerDatas": [], "filterServerTable": {}, "queueDatas": queues})).unwrap()
}

/// REGISTER_TOPIC_IN_NAMESRV for `topic` with queue data for `brokers`.
fn register_topic(client: &mut Client, topic: &str, brokers: &[&str]) -> RemotingCommand {
    client.call(request(217, &[("topic", topic)]).with_body(topic_route_body(brokers)))
}

// ---------------------------------------------------------------------------------------------
// WIPE_WRITE_PERM_OF_BROKER (205) and ADD_WRITE_PERM_OF_BROKER (327); Java's RouteInfoManagerBrokerPermTest
// ---------------------------------------------------------------------------------------------

#[test]
fn write_perm_counts_are_present_and_zero_for_an_unknown_broker() {
    let server = TestServer::start();
    let mut client = server.client();
    let wipe = write_perm(&mut client, 205, "broker");
    assert_success(&wipe);
    assert_eq!(wipe.ext("wipeTopicCount"), Some("0"));
    let add = write_perm(&mut client, 327, "broker");
    assert_success(&add);
    assert_eq!(add.ext("addTopicCount"), Some("0"));
}

#[test]
fn wipe_and_add_write_perm_flip_only_that_brokers_route_perms() {
    let server = TestServer::start();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"])));
    assert_success(&conn.register(&Broker::new("c", "broker-b", 0, "127.0.0.1:10912").topics(&["T1", "T3"])));
    let mut client = server.client();
    assert_eq!(perm(&mut client, "T1", "broker-a"), 6);

    let wipe = write_perm(&mut client, 205, "broker-a");
    assert_success(&wipe);
    assert_eq!(wipe.ext("wipeTopicCount"), Some("2"));
    assert_eq!(wipe.ext("addTopicCount"), None);
    assert_eq!(perm(&mut client, "T1", "broker-a"), 4);
    assert_eq!(perm(&mut client, "T2", "broker-a"), 4);
    assert_eq!(perm(&mut client, "T1", "broker-b"), 6, "the other broker's queue data is untouched");
    assert_eq!(perm(&mut client, "T3", "broker-b"), 6);

    let add = write_perm(&mut client, 327, "broker-a");
    assert_success(&add);
    assert_eq!(add.ext("addTopicCount"), Some("2"));
    assert_eq!(add.ext("wipeTopicCount"), None);
    assert_eq!(perm(&mut client, "T1", "broker-a"), 6);
    assert_eq!(perm(&mut client, "T2", "broker-a"), 6);
}

#[test]
fn wiping_an_already_read_only_topic_still_counts_it() {
    let server = TestServer::start();
    let mut broker = Broker::new("cluster", "broker-0", 0, "cluster-broker-0:0");
    broker.topics = vec![("topic-0".into(), 4, 8), ("topic-1".into(), 6, 8)];
    let mut conn = server.client();
    assert_success(&conn.register(&broker));
    let mut client = server.client();
    let wipe = write_perm(&mut client, 205, "broker-0");
    assert_eq!(wipe.ext("wipeTopicCount"), Some("2"), "read-only topic counts too (RouteInfoManagerBrokerPermTest)");
    assert_eq!(perm(&mut client, "topic-0", "broker-0"), 4);
    assert_eq!(perm(&mut client, "topic-1", "broker-0"), 4);
    let again = write_perm(&mut client, 205, "broker-0");
    assert_eq!(again.ext("wipeTopicCount"), Some("2"), "a second wipe counts both again");
}

#[test]
fn adding_write_perm_overwrites_the_whole_perm_with_read_write() {
    let server = TestServer::start();
    let mut broker = Broker::new("c", "broker-a", 0, "127.0.0.1:10911");
    // 7 = READ|WRITE|INHERIT, 4 = read-only.
    broker.topics = vec![("Inherit".into(), 7, 8), ("ReadOnly".into(), 4, 8)];
    let mut conn = server.client();
    assert_success(&conn.register(&broker));
    let mut client = server.client();
    assert_eq!(perm(&mut client, "Inherit", "broker-a"), 7);

    let add = write_perm(&mut client, 327, "broker-a");
    assert_eq!(add.ext("addTopicCount"), Some("2"));
    assert_eq!(perm(&mut client, "Inherit", "broker-a"), 6, "the INHERIT bit is lost (Java sets perm 6)");
    assert_eq!(perm(&mut client, "ReadOnly", "broker-a"), 6);
}

#[test]
fn wiped_write_perm_lasts_until_the_broker_reapplies_its_topics() {
    let server = TestServer::start();
    let broker = Broker::new("c", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
    let mut conn = server.client();
    assert_success(&conn.register(&broker));
    let mut client = server.client();
    write_perm(&mut client, 205, "broker-a");

    assert_success(&conn.register(&broker));
    assert_eq!(perm(&mut client, "T1", "broker-a"), 4, "an unchanged dataVersion keeps the wiped perm");
    assert_success(&conn.register(&broker.clone().bump()));
    assert_eq!(perm(&mut client, "T1", "broker-a"), 6, "a changed dataVersion re-applies the topic configs");
}

// ---------------------------------------------------------------------------------------------
// DELETE_TOPIC_IN_NAMESRV (216); RouteInfoManagerNewTest.deleteTopic
// ---------------------------------------------------------------------------------------------

/// `Default_Broker` in `Default_Cluster` and `AnotherBroker` in `AnotherCluster`, both hosting
/// `TestTopic` and `baseTopic`, registered over the returned connection.
fn two_cluster_fixture() -> (TestServer, Client, Broker, Broker) {
    let server = TestServer::start();
    let mut conn = server.client();
    let default =
        Broker::new("Default_Cluster", "Default_Broker", 0, "127.0.0.1:10911").topics(&["TestTopic", "baseTopic"]);
    let another =
        Broker::new("AnotherCluster", "AnotherBroker", 0, "127.0.0.1:30911").topics(&["TestTopic", "baseTopic"]);
    assert_success(&conn.register(&default));
    assert_success(&conn.register(&another));
    (server, conn, default, another)
}

#[test]
fn deleting_a_topic_with_a_cluster_removes_only_that_clusters_queue_data() {
    let (server, _conn, _, _) = two_cluster_fixture();
    let mut client = server.client();
    assert_eq!(broker_names(&client.route("TestTopic").unwrap()), ["AnotherBroker", "Default_Broker"]);

    assert_success(&delete_topic(&mut client, "TestTopic", Some("Default_Cluster")));
    let route = client.route("TestTopic").unwrap();
    assert_eq!(broker_names(&route), ["AnotherBroker"]);
    assert_eq!(queue_names(&route), ["AnotherBroker"]);
    assert_eq!(broker_names(&client.route("baseTopic").unwrap()), ["AnotherBroker", "Default_Broker"]);

    assert_success(&delete_topic(&mut client, "TestTopic", Some("AnotherCluster")));
    assert_eq!(client.route("TestTopic"), Err(17), "the topic goes once its last queue data does");
    let all = topic_list(&client.call(RemotingCommand::request(206, None)));
    assert_eq!(all, ["baseTopic"]);
}

#[test]
fn deleting_a_topic_from_an_unknown_cluster_changes_nothing() {
    let (server, _conn, _, _) = two_cluster_fixture();
    let mut client = server.client();
    assert_success(&delete_topic(&mut client, "TestTopic", Some("NoSuchCluster")));
    let route = client.route("TestTopic").unwrap();
    assert_eq!(broker_names(&route), ["AnotherBroker", "Default_Broker"]);
    assert_eq!(queue_names(&route), ["AnotherBroker", "Default_Broker"]);
}

#[test]
fn deleting_a_topic_without_a_cluster_or_with_an_empty_one_drops_it_everywhere() {
    let (server, _conn, _, _) = two_cluster_fixture();
    let mut client = server.client();
    assert_success(&delete_topic(&mut client, "TestTopic", None));
    assert_eq!(client.route("TestTopic"), Err(17));
    assert_success(&delete_topic(&mut client, "baseTopic", Some("")));
    assert_eq!(client.route("baseTopic"), Err(17), "an empty clusterName counts as absent");
    assert_eq!(topic_list(&client.call(RemotingCommand::request(206, None))), Vec::<String>::new());
    // Deleting what does not exist is still a success.
    assert_success(&delete_topic(&mut client, "never-existed", None));
}

#[test]
fn deleted_topic_returns_on_the_brokers_next_registration_with_an_unchanged_data_version() {
    let (server, mut conn, default, _) = two_cluster_fixture();
    let mut client = server.client();
    assert_success(&delete_topic(&mut client, "TestTopic", Some("Default_Cluster")));
    assert_eq!(broker_names(&client.route("TestTopic").unwrap()), ["AnotherBroker"]);

    assert_success(&conn.register(&default));
    let route = client.route("TestTopic").unwrap();
    assert_eq!(
        broker_names(&route),
        ["AnotherBroker", "Default_Broker"],
        "registerBroker re-applies a topic that lacked its queue data"
    );
    assert_eq!(route_queue(&route, "Default_Broker")["perm"], 6);

    assert_success(&delete_topic(&mut client, "TestTopic", None));
    assert_eq!(client.route("TestTopic"), Err(17));
    assert_success(&conn.register(&default));
    assert_eq!(broker_names(&client.route("TestTopic").unwrap()), ["Default_Broker"]);
}

// ---------------------------------------------------------------------------------------------
// REGISTER_TOPIC_IN_NAMESRV (217); RouteInfoManagerNewTest
// ---------------------------------------------------------------------------------------------

#[test]
fn registering_a_topic_for_an_unknown_broker_succeeds_but_stores_nothing() {
    let server = TestServer::start();
    let mut client = server.client();
    assert_success(&register_topic(&mut client, "NewTopic", &["b"]));
    assert_eq!(client.route("NewTopic"), Err(17));
    assert_eq!(topic_list(&client.call(RemotingCommand::request(206, None))), Vec::<String>::new());
}

#[test]
fn registering_a_topic_for_a_known_broker_routes_it_and_replaces_its_queue_data() {
    let server = TestServer::start();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"])));
    let mut client = server.client();
    assert_success(&register_topic(&mut client, "NewTopic", &["b"]));
    let route = client.route("NewTopic").unwrap();
    assert_eq!(route_addrs(&route, "b"), json!({"0": "127.0.0.1:10911"}));
    assert_eq!(
        route_queue(&route, "b"),
        json!({"brokerName":"b","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4})
    );

    // An existing topic's entry for the broker is replaced.
    assert_success(&register_topic(&mut client, "T1", &["b"]));
    assert_eq!(route_queue(&client.route("T1").unwrap(), "b")["readQueueNums"], 4);
}

#[test]
fn registering_a_topic_without_a_body_or_queue_data_succeeds_and_stores_nothing() {
    let server = TestServer::start();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"])));
    let mut client = server.client();
    assert_success(&client.call(request(217, &[("topic", "NewTopic")])));
    assert_eq!(client.route("NewTopic"), Err(17));
    assert_success(&register_topic(&mut client, "NewTopic", &[]));
    assert_eq!(client.route("NewTopic"), Err(17));
}

#[test]
fn registering_a_topic_stops_at_the_first_unknown_broker_and_a_new_topic_needs_all_known() {
    let server = TestServer::start();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "a", 0, "127.0.0.1:10911").topics(&["T1", "T2"])));
    assert_success(&conn.register(&Broker::new("c", "b", 0, "127.0.0.1:10912").topics(&["T1", "T2"])));
    let mut client = server.client();
    assert_success(&register_topic(&mut client, "NewTopic", &["a", "unknown", "b"]));
    assert_eq!(client.route("NewTopic"), Err(17), "a new topic is created only when every broker is known");
    assert_success(&register_topic(&mut client, "NewTopic", &["a"]));
    assert_success(&register_topic(&mut client, "NewTopic", &["b", "unknown", "a"]));
    let route = client.route("NewTopic").unwrap();
    assert_eq!(queue_names(&route), ["a", "b"], "an existing topic takes the entries before the unknown broker");
}

#[test]
fn single_topic_registrations_are_pruned_by_broker_registrations_when_configured() {
    // RouteInfoManagerNewTest.registerSingleTopicWithBrokerRegistration; every registration carries baseTopic too.
    let server = TestServer::with(|s| s.routing.delete_topic_with_broker_registration = true);
    let master =
        |topics: &[&str]| Broker::new("Default_Cluster", "Default_Broker", 0, "127.0.0.1:10911").topics(topics);
    let mut conn = server.client();
    let mut client = server.client();

    assert_success(&register_topic(&mut client, "TestTopic", &["Default_Broker"]));
    assert_eq!(client.route("TestTopic"), Err(17), "the broker is not known yet");

    let mut broker = master(&["baseTopic", "TestTopic"]);
    assert_success(&conn.register(&broker));
    assert!(client.route("TestTopic").is_ok());

    assert_success(&register_topic(&mut client, "TestTopic1", &["Default_Broker"]));
    assert!(client.route("TestTopic1").is_ok());

    broker = master(&["baseTopic", "TestTopic", "TestTopic1"]);
    broker.data_version.counter = 2;
    assert_success(&conn.register(&broker));
    assert!(client.route("TestTopic").is_ok());
    assert!(client.route("TestTopic1").is_ok());

    broker = master(&["baseTopic", "TestTopic"]);
    broker.data_version.counter = 3;
    assert_success(&conn.register(&broker));
    assert!(client.route("TestTopic").is_ok());
    assert_eq!(client.route("TestTopic1"), Err(17), "the registration no longer lists it");

    assert_success(&register_topic(&mut client, "TestTopic1", &["Default_Broker"]));
    assert!(client.route("TestTopic1").is_ok());

    assert_success(&conn.unregister(&broker));
    assert_eq!(client.route("TestTopic"), Err(17));
    assert_eq!(client.route("TestTopic1"), Err(17));
}

// ---------------------------------------------------------------------------------------------
// GET_BROKER_MEMBER_GROUP (901)
// ---------------------------------------------------------------------------------------------

#[test]
fn broker_member_group_lists_the_groups_ids_and_addresses_with_bare_keys() {
    let server = TestServer::start();
    let mut conn = server.client();
    conn.register(&Broker::new("c", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
    conn.register(&Broker::new("c", "broker-a", 1, "127.0.0.1:10912").topics(&["T1", "T2"]));
    conn.register(&Broker::new("c", "broker-b", 0, "127.0.0.1:10913").topics(&["T1", "T2"]));
    let mut client = server.client();
    let resp = client.call(request(901, &[("clusterName", "c"), ("brokerName", "broker-a")]));
    assert_success(&resp);
    assert_eq!(
        body_text(&resp),
        r#"{"brokerMemberGroup":{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10912"},"brokerName":"broker-a","cluster":"c"}}"#
    );
    // The cluster is echoed back, not checked.
    let other = client.call(request(901, &[("clusterName", "other"), ("brokerName", "broker-a")]));
    let group = &parse_lenient(other.body.as_deref().unwrap())["brokerMemberGroup"];
    assert_eq!(group["cluster"], "other");
    assert_eq!(group["brokerAddrs"], json!({"0": "127.0.0.1:10911", "1": "127.0.0.1:10912"}));
}

#[test]
fn broker_member_group_of_an_unknown_broker_echoes_the_names_with_no_addresses() {
    let server = TestServer::start();
    let resp = server.client().call(request(901, &[("clusterName", "DefaultCluster"), ("brokerName", "nope")]));
    assert_success(&resp);
    assert_eq!(
        parse_lenient(resp.body.as_deref().unwrap()),
        json!({"brokerMemberGroup": {"brokerAddrs": {}, "brokerName": "nope", "cluster": "DefaultCluster"}})
    );
}

#[test]
fn broker_member_group_without_a_broker_name_is_a_system_error() {
    let server = TestServer::start();
    let resp = server.client().call(request(901, &[("clusterName", "c")]));
    assert_eq!(resp.code, 1);
}
