//! mqadmin's tools (write perms, topic deletion and registration, topic lists, member groups), zone
//! filtering, the readiness gate, min-broker-id notifications and unregister fencing, over real TCP.

mod common;

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use common::*;
use namesrv::dispatch::body_crc32;
use namesrv::protocol::{ExtFields, RemotingCodec, RemotingCommand};
use serde_json::{json, Value};
use tokio_util::codec::Decoder;

const WAIT: Duration = Duration::from_secs(3);

/// Asserts a SUCCESS response, showing the remark otherwise.
fn assert_success(resp: &RemotingCommand) {
    assert_eq!(resp.code, 0, "remark: {:?}", resp.remark);
}

/// A request with `code` and the given ext fields.
fn request(code: i32, fields: &[(&str, &str)]) -> RemotingCommand {
    RemotingCommand::request(code, Some(fields.iter().map(|(k, v)| (*k, *v)).collect::<ExtFields>()))
}

/// The body of a response as text.
fn body_text(resp: &RemotingCommand) -> String {
    String::from_utf8(resp.body.as_deref().expect("response body").to_vec()).expect("utf-8 body")
}

/// The `topicList` of a SUCCESS TopicList response.
fn topic_list(resp: &RemotingCommand) -> Vec<String> {
    assert_success(resp);
    let body: Value = serde_json::from_slice(resp.body.as_deref().expect("topic list body")).expect("topic list json");
    body["topicList"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect()
}

/// The perm of broker `name`'s QueueData in the route of `topic`.
fn perm(client: &mut Client, topic: &str, name: &str) -> i64 {
    let route = client.route(topic).unwrap_or_else(|code| panic!("no route for {topic}: code {code}"));
    route_queue(&route, name)["perm"].as_i64().unwrap_or_else(|| panic!("no queue data for {name} in {route}"))
}

/// The sorted names of a route's BrokerDatas.
fn broker_names(route: &Value) -> Vec<String> {
    let mut names: Vec<String> =
        route["brokerDatas"].as_array().unwrap().iter().map(|b| b["brokerName"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

/// The sorted broker names of a route's QueueDatas.
fn queue_names(route: &Value) -> Vec<String> {
    let mut names: Vec<String> =
        route["queueDatas"].as_array().unwrap().iter().map(|q| q["brokerName"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

/// Registers `broker` with its RegisterBrokerBody JSON edited by `edit` (CRC recomputed).
fn register_edited(client: &mut Client, broker: &Broker, edit: impl FnOnce(&mut Value)) -> RemotingCommand {
    let mut body: Value = serde_json::from_slice(&broker.body_json()).unwrap();
    edit(&mut body);
    let bytes = serde_json::to_vec(&body).unwrap();
    let mut req = broker.register_request();
    req.ext_fields.as_mut().unwrap().insert("bodyCrc32", body_crc32(&bytes).to_string());
    client.call(req.with_body(bytes))
}

/// WIPE_WRITE_PERM_OF_BROKER (205) or ADD_WRITE_PERM_OF_BROKER (327) for `broker`.
fn write_perm(client: &mut Client, code: i32, broker: &str) -> RemotingCommand {
    client.call(request(code, &[("brokerName", broker)]))
}

/// DELETE_TOPIC_IN_NAMESRV (216), with `clusterName` when given.
fn delete_topic(client: &mut Client, topic: &str, cluster: Option<&str>) -> RemotingCommand {
    let mut fields = vec![("topic", topic)];
    if let Some(cluster) = cluster {
        fields.push(("clusterName", cluster));
    }
    client.call(request(216, &fields))
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
// §2.3.11 / §9.6 WIPE_WRITE_PERM_OF_BROKER (205) and ADD_WRITE_PERM_OF_BROKER (327)
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
    assert_eq!(wipe.ext("wipeTopicCount"), Some("2"), "the read-only topic counts too (§9.6)");
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
    assert_eq!(perm(&mut client, "Inherit", "broker-a"), 6, "the INHERIT bit is lost (§2.3.11)");
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
// §2.3.12 GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206)
// ---------------------------------------------------------------------------------------------

#[test]
fn all_topic_list_is_empty_without_brokers() {
    let server = TestServer::start();
    let resp = server.client().call(RemotingCommand::request(206, None));
    assert_success(&resp);
    assert_eq!(body_text(&resp), r#"{"topicList":[]}"#);
}

#[test]
fn all_topic_list_holds_every_topic_of_every_cluster_sorted() {
    let server = TestServer::start();
    let mut conn = server.client();
    conn.register(&Broker::new("c1", "broker-a", 0, "127.0.0.1:10911").topics(&[
        "TestTopic2",
        "TestTopic",
        "baseTopic",
    ]));
    conn.register(&Broker::new("c2", "broker-b", 0, "127.0.0.1:10912").topics(&["TestTopic1", "baseTopic"]));
    let resp = server.client().call(RemotingCommand::request(206, None));
    assert_success(&resp);
    assert_eq!(body_text(&resp), r#"{"topicList":["TestTopic","TestTopic1","TestTopic2","baseTopic"]}"#);
}

#[test]
fn all_topic_list_is_refused_when_disabled() {
    let server = TestServer::with(|s| s.enable_all_topic_list = false);
    let mut conn = server.client();
    conn.register(&Broker::new("c", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
    let resp = server.client().call(RemotingCommand::request(206, None));
    assert_eq!((resp.code, resp.remark.as_deref()), (1, Some("disable")));
    assert!(resp.body.is_none());
}

// ---------------------------------------------------------------------------------------------
// §2.3.13 / §9.3 deleteTopic: DELETE_TOPIC_IN_NAMESRV (216)
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
        "§5.4 step 9: the topic lacked its queue data"
    );
    assert_eq!(route_queue(&route, "Default_Broker")["perm"], 6);

    assert_success(&delete_topic(&mut client, "TestTopic", None));
    assert_eq!(client.route("TestTopic"), Err(17));
    assert_success(&conn.register(&default));
    assert_eq!(broker_names(&client.route("TestTopic").unwrap()), ["Default_Broker"]);
}

// ---------------------------------------------------------------------------------------------
// §2.3.14 / §9.3 REGISTER_TOPIC_IN_NAMESRV (217)
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
fn registering_a_topic_stops_at_the_first_unknown_broker() {
    let server = TestServer::start();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "a", 0, "127.0.0.1:10911").topics(&["T1", "T2"])));
    assert_success(&conn.register(&Broker::new("c", "b", 0, "127.0.0.1:10912").topics(&["T1", "T2"])));
    let mut client = server.client();
    assert_success(&register_topic(&mut client, "NewTopic", &["a", "unknown", "b"]));
    let route = client.route("NewTopic").unwrap();
    assert_eq!(queue_names(&route), ["a"], "entries after the unknown broker are not put");
}

#[test]
fn single_topic_registrations_are_pruned_by_broker_registrations_when_configured() {
    // §9.3 registerSingleTopicWithBrokerRegistration; every registration carries baseTopic too.
    let server = TestServer::with(|s| s.delete_topic_with_broker_registration = true);
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
// §2.3.16 GET_TOPICS_BY_CLUSTER (224), §2.3.17 GET_SYSTEM_TOPIC_LIST_FROM_NS (304),
// §2.3.18 unit topic lists (311, 312, 313)
// ---------------------------------------------------------------------------------------------

#[test]
fn topics_by_cluster_lists_the_topics_of_that_clusters_brokers_sorted() {
    let server = TestServer::start();
    let mut conn = server.client();
    conn.register(&Broker::new("c1", "broker-a", 0, "127.0.0.1:10911").topics(&["T2", "T1"]));
    conn.register(&Broker::new("c1", "broker-c", 0, "127.0.0.1:10913").topics(&["T4", "T1"]));
    conn.register(&Broker::new("c2", "broker-b", 0, "127.0.0.1:10912").topics(&["T3", "T2"]));
    let mut client = server.client();
    let c1 = client.call(request(224, &[("cluster", "c1")]));
    assert_success(&c1);
    assert_eq!(body_text(&c1), r#"{"topicList":["T1","T2","T4"]}"#);
    assert_eq!(topic_list(&client.call(request(224, &[("cluster", "c2")]))), ["T2", "T3"]);
}

#[test]
fn topics_by_cluster_for_an_unknown_cluster_is_an_empty_list() {
    let server = TestServer::start();
    let mut conn = server.client();
    conn.register(&Broker::new("c1", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
    let resp = server.client().call(request(224, &[("cluster", "nope")]));
    assert_success(&resp);
    assert_eq!(body_text(&resp), r#"{"topicList":[]}"#);
}

#[test]
fn topics_by_cluster_without_the_cluster_header_is_a_system_error() {
    let server = TestServer::start();
    let resp = server.client().call(RemotingCommand::request(224, None));
    assert_eq!(resp.code, 1);
    assert!(resp.remark.as_deref().unwrap_or_default().contains("cluster"), "remark: {:?}", resp.remark);
}

#[test]
fn topic_lists_are_refused_when_disabled_even_without_a_header() {
    let server = TestServer::with(|s| s.enable_topic_list = false);
    let mut conn = server.client();
    conn.register(&Broker::new("c1", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
    let mut client = server.client();
    for req in [
        RemotingCommand::request(224, None),
        request(224, &[("cluster", "c1")]),
        RemotingCommand::request(311, None),
        RemotingCommand::request(312, None),
        RemotingCommand::request(313, None),
    ] {
        let code = req.code;
        let resp = client.call(req);
        assert_eq!((resp.code, resp.remark.as_deref()), (1, Some("disable")), "request code {code}");
    }
    // Neither the system list nor the all-topics list is gated by enableTopicList.
    assert_success(&client.call(RemotingCommand::request(304, None)));
    assert_eq!(topic_list(&client.call(RemotingCommand::request(206, None))), ["T1", "T2"]);
}

#[test]
fn system_topic_list_names_clusters_and_brokers_and_the_first_groups_lowest_id_address() {
    let server = TestServer::with(|s| s.enable_topic_list = false);
    let mut conn = server.client();
    // broker-a has only slaves (ids 2 and 1); broker-b has a master.
    conn.register(&Broker::new("c1", "broker-a", 2, "127.0.0.1:20912").topics(&["T1", "T2"]));
    conn.register(&Broker::new("c1", "broker-a", 1, "127.0.0.1:20911").topics(&["T1", "T2"]));
    conn.register(&Broker::new("c1", "broker-b", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
    conn.register(&Broker::new("c2", "broker-c", 0, "127.0.0.1:10912").topics(&["T3", "T4"]));
    let resp = server.client().call(RemotingCommand::request(304, None));
    assert_success(&resp);
    assert_eq!(
        body_text(&resp),
        r#"{"brokerAddr":"127.0.0.1:20911","topicList":["broker-a","broker-b","broker-c","c1","c2"]}"#
    );
}

#[test]
fn system_topic_list_without_brokers_has_no_broker_addr() {
    let server = TestServer::start();
    let resp = server.client().call(RemotingCommand::request(304, None));
    assert_success(&resp);
    assert_eq!(body_text(&resp), r#"{"topicList":[]}"#);
}

#[test]
fn unit_topic_lists_select_topics_by_their_sys_flag() {
    let server = TestServer::start();
    let broker = Broker::new("c", "broker-a", 0, "127.0.0.1:10911").topics(&["plain", "unit", "unitSub", "unitAndSub"]);
    let mut conn = server.client();
    let resp = register_edited(&mut conn, &broker, |body| {
        let table = &mut body["topicConfigSerializeWrapper"]["topicConfigTable"];
        for (topic, flag) in [("plain", 0), ("unit", 1), ("unitSub", 2), ("unitAndSub", 3)] {
            table[topic]["topicSysFlag"] = json!(flag);
        }
    });
    assert_success(&resp);
    let mut client = server.client();
    assert_eq!(route_queue(&client.route("unitAndSub").unwrap(), "broker-a")["topicSysFlag"], 3);
    assert_eq!(topic_list(&client.call(RemotingCommand::request(311, None))), ["unit", "unitAndSub"]);
    assert_eq!(topic_list(&client.call(RemotingCommand::request(312, None))), ["unitAndSub", "unitSub"]);
    assert_eq!(topic_list(&client.call(RemotingCommand::request(313, None))), ["unitSub"]);
}

// ---------------------------------------------------------------------------------------------
// §2.3.10 GET_BROKER_MEMBER_GROUP (901)
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

// ---------------------------------------------------------------------------------------------
// §2.3.4 / §9.8 zone filtering (ZoneRouteRPCHook)
// ---------------------------------------------------------------------------------------------

/// Groups hosting `ZoneTopic`: broker-a (zone1 master, filter server), broker-b (zone2 master,
/// filter server), broker-c (zone2, slave only) and broker-d (master, no zone).
fn zone_fixture() -> (TestServer, Client) {
    let server = TestServer::start();
    let mut conn = server.client();
    let topics = ["ZoneTopic", "Other"];
    let in_zone = |name: &str, id: i64, addr: &str, zone: Option<&str>| {
        let mut b = Broker::new("c", name, id, addr).topics(&topics);
        b.zone = zone.map(str::to_owned);
        b
    };
    let with_filter_server = |server: &'static str| move |body: &mut Value| body["filterServerList"] = json!([server]);
    let a = in_zone("broker-a", 0, "127.0.0.1:10911", Some("zone1"));
    assert_success(&register_edited(&mut conn, &a, with_filter_server("127.0.0.1:20001")));
    let b = in_zone("broker-b", 0, "127.0.0.1:10912", Some("zone2"));
    assert_success(&register_edited(&mut conn, &b, with_filter_server("127.0.0.1:20002")));
    assert_success(&conn.register(&in_zone("broker-c", 1, "127.0.0.1:10913", Some("zone2"))));
    assert_success(&conn.register(&in_zone("broker-d", 0, "127.0.0.1:10914", None)));
    (server, conn)
}

/// GET_ROUTEINFO_BY_TOPIC for `ZoneTopic` with extra ext fields, parsed leniently.
fn zone_route(client: &mut Client, fields: &[(&str, &str)]) -> Value {
    let mut req = route_request("ZoneTopic", 479);
    for (k, v) in fields {
        req.ext_fields.as_mut().unwrap().insert(*k, *v);
    }
    let resp = client.call(req);
    assert_success(&resp);
    parse_lenient(resp.body.as_deref().unwrap())
}

#[test]
fn zone_mode_route_drops_groups_whose_master_is_in_another_zone() {
    let (server, _conn) = zone_fixture();
    let mut client = server.client();
    let route = zone_route(&mut client, &[("__ZONE_MODE", "true"), ("__ZONE_NAME", "zone1")]);
    assert_eq!(broker_names(&route), ["broker-a", "broker-c"], "a master-less group is kept whatever its zone");
    assert_eq!(queue_names(&route), ["broker-a", "broker-c"]);
    assert_eq!(route["filterServerTable"], json!({"127.0.0.1:10911": ["127.0.0.1:20001"]}));
    assert_eq!(route_addrs(&route, "broker-c"), json!({"1": "127.0.0.1:10913"}));

    let zone2 = zone_route(&mut client, &[("__ZONE_MODE", "true"), ("__ZONE_NAME", "zone2")]);
    assert_eq!(broker_names(&zone2), ["broker-b", "broker-c"]);
    assert_eq!(queue_names(&zone2), ["broker-b", "broker-c"]);
    assert_eq!(zone2["filterServerTable"], json!({"127.0.0.1:10912": ["127.0.0.1:20002"]}));
}

#[test]
fn zone_match_ignores_case() {
    let (server, _conn) = zone_fixture();
    let mut client = server.client();
    let route = zone_route(&mut client, &[("__ZONE_MODE", "TRUE"), ("__ZONE_NAME", "ZONE1")]);
    assert_eq!(broker_names(&route), ["broker-a", "broker-c"]);
    assert_eq!(queue_names(&route), ["broker-a", "broker-c"]);
}

#[test]
fn route_is_not_filtered_without_zone_mode_or_with_a_blank_zone_name() {
    let (server, _conn) = zone_fixture();
    let mut client = server.client();
    let all = ["broker-a", "broker-b", "broker-c", "broker-d"];
    for fields in [
        &[][..],
        &[("__ZONE_NAME", "zone1")][..],
        &[("__ZONE_MODE", "false"), ("__ZONE_NAME", "zone1")][..],
        &[("__ZONE_MODE", "true")][..],
        &[("__ZONE_MODE", "true"), ("__ZONE_NAME", "  ")][..],
        &[("__ZONE_MODE", "true"), ("__ZONE_NAME", "")][..],
    ] {
        let route = zone_route(&mut client, fields);
        assert_eq!(broker_names(&route), all, "ext {fields:?}");
        assert_eq!(queue_names(&route), all, "ext {fields:?}");
        assert_eq!(route["filterServerTable"].as_object().unwrap().len(), 2, "ext {fields:?}");
    }
    let plain = zone_route(&mut client, &[]);
    let zone_of = |name: &str| {
        plain["brokerDatas"].as_array().unwrap().iter().find(|b| b["brokerName"] == name).unwrap()["zoneName"].clone()
    };
    assert_eq!(
        (zone_of("broker-a"), zone_of("broker-c"), zone_of("broker-d")),
        (json!("zone1"), json!("zone2"), Value::Null)
    );
}

// ---------------------------------------------------------------------------------------------
// §2.3.4 step 1 / §9.2 the readiness gate
// ---------------------------------------------------------------------------------------------

/// A server with the readiness gate configured and a broker hosting `T1` registered.
fn gated_server(need_wait: bool, wait_secs: u64) -> (TestServer, Client) {
    let server = TestServer::with(|s| {
        s.need_wait_for_service = need_wait;
        s.wait_seconds_for_service = wait_secs;
    });
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"])));
    (server, conn)
}

#[test]
fn route_queries_are_served_at_once_when_the_wait_is_zero() {
    let (server, _conn) = gated_server(true, 0);
    assert!(server.client().route("T1").is_ok());
}

#[test]
fn route_queries_are_served_at_once_when_waiting_is_off() {
    let (server, _conn) = gated_server(false, 45);
    assert!(server.client().route("T1").is_ok());
}

#[test]
fn route_queries_are_refused_while_the_server_is_not_ready_and_nothing_else_is() {
    let (server, _conn) = gated_server(true, 45);
    let mut client = server.client();
    let resp = client.call(route_request("T1", 479));
    assert_eq!((resp.code, resp.remark.as_deref()), (1, Some("name server not ready")));
    assert!(resp.body.is_none());
    let unknown = client.call(route_request("unknown", 479));
    assert_eq!(unknown.code, 1, "the gate comes before the lookup");

    // Only the route query is gated (the broker registration above succeeded too).
    assert_eq!(client.cluster_info()["clusterAddrTable"], json!({"c": ["b"]}));
    assert_eq!(topic_list(&client.call(RemotingCommand::request(206, None))), ["T1", "T2"]);
    assert_eq!(topic_list(&client.call(request(224, &[("cluster", "c")]))), ["T1", "T2"]);
    assert_success(&client.call(request(901, &[("clusterName", "c"), ("brokerName", "b")])));
}

#[test]
fn route_queries_become_ready_once_the_configured_wait_has_passed() {
    let before_start = Instant::now();
    let (server, _conn) = gated_server(true, 1);
    let mut client = server.client();
    let early = client.call(route_request("T1", 479));
    assert_eq!((early.code, early.remark.as_deref()), (1, Some("name server not ready")));
    assert!(eventually(WAIT, || client.route("T1").is_ok()), "ready after the 1 s wait");
    assert!(before_start.elapsed() >= Duration::from_secs(1), "not ready before the wait passed");
}

// ---------------------------------------------------------------------------------------------
// §5.4 step 14 / §5.7 / §5.12 NOTIFY_MIN_BROKER_ID_CHANGE (905)
// ---------------------------------------------------------------------------------------------

/// A fake broker: a listener on 127.0.0.1:0.
fn fake_broker() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake broker");
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    (listener, addr)
}

/// The next connection to `listener` within `within`, if any.
fn accept_within(listener: &TcpListener, within: Duration) -> Option<TcpStream> {
    let deadline = Instant::now() + within;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).unwrap();
                return Some(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() > deadline {
                    return None;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("accept failed: {e}"),
        }
    }
}

/// Every frame the namesrv writes on `stream` before closing it.
fn frames_until_close(mut stream: TcpStream) -> Vec<RemotingCommand> {
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).expect("the namesrv closes the notification connection");
    let mut buf = BytesMut::from(&bytes[..]);
    let mut codec = RemotingCodec::new(1 << 20);
    let mut frames = Vec::new();
    while let Some(frame) = codec.decode(&mut buf).expect("a valid frame") {
        frames.push(frame);
    }
    assert!(buf.is_empty(), "{} trailing bytes", buf.len());
    frames
}

/// The one notification frame delivered to `listener`.
fn one_notification(listener: &TcpListener) -> RemotingCommand {
    let stream = accept_within(listener, WAIT).expect("a notification connection");
    let mut frames = frames_until_close(stream);
    assert_eq!(frames.len(), 1, "{frames:?}");
    frames.remove(0)
}

/// A member of acting-master group `broker-a` at a fake broker address.
fn acting_member(id: i64, addr: &str, ha: &str) -> Broker {
    let mut b = Broker::new("c", "broker-a", id, addr).topics(&["T1", "T2"]);
    b.ha_addr = ha.into();
    b.enable_acting_master = Some(true);
    b
}

#[test]
fn master_registering_below_the_lowest_id_notifies_the_other_members() {
    let server = TestServer::with(|s| s.notify_min_broker_id_changed = true);
    let (listener_a, addr_a) = fake_broker();
    let (listener_b, addr_b) = fake_broker();
    let mut slave_conn = server.client();
    assert_success(&slave_conn.register(&acting_member(1, &addr_a, "127.0.0.1:40911")));
    assert!(accept_within(&listener_a, Duration::from_millis(300)).is_none(), "a first member changes no minimum");

    let mut master_conn = server.client();
    assert_success(&master_conn.register(&acting_member(0, &addr_b, "127.0.0.1:20911")));
    let notice = one_notification(&listener_a);
    assert_eq!(notice.code, 905);
    assert_eq!(notice.flag & 1, 0, "a request, not a response");
    assert_eq!(notice.flag & 2, 2, "oneway");
    assert_eq!(notice.ext("minBrokerId"), Some("0"));
    assert_eq!(notice.ext("minBrokerAddr"), Some(addr_b.as_str()));
    assert_eq!(notice.ext("haBrokerAddr"), Some("127.0.0.1:20911"));
    assert_eq!(notice.ext("offlineBrokerAddr"), None);
    assert!(notice.body.is_none());
    assert!(accept_within(&listener_b, Duration::from_millis(300)).is_none(), "the new minimum is not told");
}

#[test]
fn unregistering_the_lowest_id_of_an_acting_master_group_notifies_the_remaining_members() {
    let server = TestServer::with(|s| s.notify_min_broker_id_changed = true);
    let (listener_a, addr_a) = fake_broker();
    let (listener_b, addr_b) = fake_broker();
    let mut slave_conn = server.client();
    assert_success(&slave_conn.register(&acting_member(1, &addr_a, "127.0.0.1:40911")));
    let master = acting_member(0, &addr_b, "127.0.0.1:20911");
    let mut master_conn = server.client();
    assert_success(&master_conn.register(&master));
    one_notification(&listener_a);

    assert_success(&master_conn.unregister(&master));
    let notice = one_notification(&listener_a);
    assert_eq!((notice.code, notice.flag & 2), (905, 2));
    assert_eq!(notice.ext("minBrokerId"), Some("1"));
    assert_eq!(notice.ext("minBrokerAddr"), Some(addr_a.as_str()));
    assert_eq!(notice.ext("offlineBrokerAddr"), Some(addr_b.as_str()));
    assert_eq!(notice.ext("haBrokerAddr"), None);
    assert!(accept_within(&listener_b, Duration::from_millis(300)).is_none(), "the removed broker is not told");
}

#[test]
fn no_min_broker_id_notification_is_sent_when_the_flag_is_off() {
    let server = TestServer::start();
    let (listener_a, addr_a) = fake_broker();
    let (listener_b, addr_b) = fake_broker();
    let mut slave_conn = server.client();
    assert_success(&slave_conn.register(&acting_member(1, &addr_a, "127.0.0.1:40911")));
    let master = acting_member(0, &addr_b, "127.0.0.1:20911");
    let mut master_conn = server.client();
    assert_success(&master_conn.register(&master));
    assert!(accept_within(&listener_a, Duration::from_millis(300)).is_none());
    assert_success(&master_conn.unregister(&master));
    assert!(accept_within(&listener_a, Duration::from_millis(300)).is_none());
    assert!(accept_within(&listener_b, Duration::from_millis(50)).is_none());
}

// ---------------------------------------------------------------------------------------------
// §5.7 / §5.8 / §5.13 unregister fencing (apache/rocketmq#11043) and expiry
// ---------------------------------------------------------------------------------------------

#[test]
fn unregister_over_a_stale_connection_leaves_a_broker_that_re_registered_elsewhere() {
    let server = TestServer::start();
    let broker = Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
    let mut conn_a = server.client();
    assert_success(&conn_a.register(&broker));
    let mut conn_b = server.client();
    assert_success(&conn_b.register(&broker));

    let mut client = server.client();
    let stale = conn_a.unregister(&broker);
    assert_eq!((stale.code, stale.remark), (0, None), "a fenced unregister still answers SUCCESS");
    assert_eq!(route_addrs(&client.route("T1").unwrap(), "b"), json!({"0": "127.0.0.1:10911"}));
    assert_eq!(client.cluster_info()["clusterAddrTable"], json!({"c": ["b"]}));

    assert_success(&conn_b.unregister(&broker));
    assert_eq!(client.route("T1"), Err(17));
    assert_eq!(client.cluster_info()["clusterAddrTable"], json!({}));
}

#[test]
fn broker_that_keeps_re_registering_is_never_expired_and_expires_once_it_stops() {
    let server = TestServer::with(|s| s.scan_interval_ms = 50);
    let mut broker = Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
    broker.heartbeat_timeout_ms = Some(300);
    let mut conn_a = server.client();
    assert_success(&conn_a.register(&broker));
    let mut conn_b = server.client();
    assert_success(&conn_b.register(&broker));
    drop(conn_a);

    let mut client = server.client();
    let deadline = Instant::now() + Duration::from_millis(1100);
    while Instant::now() < deadline {
        assert_success(&conn_b.register(&broker));
        std::thread::sleep(Duration::from_millis(100));
        // Checked just before the next re-registration, when it has been silent the longest.
        assert!(client.route("T1").is_ok(), "expired while re-registering every 100 ms");
    }
    assert!(eventually(WAIT, || client.route("T1") == Err(17)), "silent past 300 ms, it expires");
    assert_eq!(client.cluster_info()["clusterAddrTable"], json!({}));
}

// ---------------------------------------------------------------------------------------------
// §9.7 RouteInfoManagerStaticRegisterTest: 3 broker names × 3 ids × 10 topics
// ---------------------------------------------------------------------------------------------

/// `broker-N` id `id` at `cluster-broker-N:id` with `topic-0..9`.
fn grid_broker(n: usize, id: i64) -> Broker {
    let topics: Vec<String> = (0..10).map(|t| format!("topic-{t}")).collect();
    let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
    Broker::new("cluster", &format!("broker-{n}"), id, &format!("cluster-broker-{n}:{id}")).topics(&topics)
}

#[test]
fn three_by_three_grid_lists_every_name_topic_and_member() {
    let server = TestServer::start();
    let mut conn = server.client();
    for n in 0..3 {
        for id in 0..3 {
            assert_success(&conn.register(&grid_broker(n, id)));
        }
    }
    let mut client = server.client();
    let info = client.cluster_info();
    assert_eq!(info["clusterAddrTable"], json!({"cluster": ["broker-0", "broker-1", "broker-2"]}));

    let expected: Vec<String> = (0..10).map(|t| format!("topic-{t}")).collect();
    assert_eq!(topic_list(&client.call(RemotingCommand::request(206, None))), expected);
    assert_eq!(topic_list(&client.call(request(224, &[("cluster", "cluster")]))), expected);

    let route = client.route("topic-0").unwrap();
    assert_eq!(broker_names(&route), ["broker-0", "broker-1", "broker-2"]);
    for n in 0..3 {
        let name = format!("broker-{n}");
        let addrs: serde_json::Map<String, Value> =
            (0..3).map(|id| (id.to_string(), json!(format!("cluster-broker-{n}:{id}")))).collect();
        assert_eq!(route_addrs(&route, &name), Value::Object(addrs));
        assert_eq!(
            route_queue(&route, &name),
            json!({"brokerName": name, "perm": 6, "readQueueNums": 8, "topicSysFlag": 0, "writeQueueNums": 8})
        );
    }

    let system = client.call(RemotingCommand::request(304, None));
    assert_eq!(
        body_text(&system),
        r#"{"brokerAddr":"cluster-broker-0:0","topicList":["broker-0","broker-1","broker-2","cluster"]}"#
    );
    for code in [311, 312, 313] {
        assert_eq!(topic_list(&client.call(RemotingCommand::request(code, None))), Vec::<String>::new());
    }

    assert_success(&delete_topic(&mut client, "topic-0", None));
    assert_eq!(client.route("topic-0"), Err(17));
}
