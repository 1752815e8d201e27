//! The Java namesrv suite RouteInfoManagerNewTest (supportActingMaster=true) restated as
//! black-box checks over real TCP.

use std::time::Duration;

use crate::common::checks::{assert_success, broker_names};
use crate::common::routeinfo::{dv, perm, query_data_version};
use crate::common::*;
use serde_json::{json, Value};

const PERM_WRITE: i64 = 2;
const WAIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------------
// Java's routeinfo/RouteInfoManagerNewTest (supportActingMaster=true)
// ---------------------------------------------------------------------------------------------

const MASTER_ADDR: &str = "127.0.0.1:10911";
const MASTER_HA: &str = "127.0.0.1:20911";
const SLAVE_ADDR: &str = "127.0.0.1:30911";
const SLAVE_HA: &str = "127.0.0.1:40911";

/// A server with `supportActingMaster=true`, as `RouteInfoManagerNewTest` runs.
fn acting_master_server() -> TestServer {
    TestServer::with(|s| s.routing.support_acting_master = true)
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
    // the same millisecond): the topic is applied because it has no queue data yet.
    // RouteInfoManager.registerBroker applies a topic that has no QueueData for this broker even when the
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
// field (RouteInfoManager.registerBroker ignores it), so the harness's `order=false` bodies exercise the same paths.

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
        s.routing.support_acting_master = true;
        s.routing.delete_topic_with_broker_registration = true;
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
        s.routing.support_acting_master = true;
        s.routing.delete_topic_with_broker_registration = true;
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
    // registerBroker's single-topic guard runs after the cluster and BrokerData updates: an empty BrokerData
    // is visible in the cluster info.
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

    // The slave claims id 0 with stateVersion 3 while the master's live entry has 5 (registerBroker's
    // stateVersion conflict check).
    let mut stale_master = without_acting_master(member(0, SLAVE_ADDR, SLAVE_HA, &["ConflictTopic"]));
    stale_master.data_version = dv(2, 3, 1_700_000_000_000);
    let resp = conn.register(&stale_master);
    assert_success(&resp);
    assert_eq!(resp.ext("masterAddr"), None);
    assert_eq!(resp.ext("haServerAddr"), None);

    let mut client = server.client();
    // registerBroker still removed the slave's id 1 entry (same address, new id); id 0 keeps the current master.
    assert_eq!(route_addrs(&client.route("TestTopic").unwrap(), "Default_Broker"), json!({"0": MASTER_ADDR}));
    assert_eq!(client.route("ConflictTopic"), Err(17));
    // The stale broker's live entry was removed; the master's is untouched.
    let resp = query_data_version(&mut client, &stale_master, Some(stale_master.data_version));
    assert_eq!(resp.ext("changed"), Some("true"));
    assert_eq!(resp.body, None);
    let resp = query_data_version(&mut client, &current, Some(current.data_version));
    assert_eq!(resp.ext("changed"), Some("false"));
}
