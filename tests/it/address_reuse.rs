//! Liveness under churn, over real TCP: an address serves one broker, so a broker registering
//! at an address another broker held replaces it, removal leaves no address without a live
//! registration, and an expired broker's connection is closed.

use std::time::Duration;

use crate::common::checks::assert_success;
use crate::common::process::{namesrv_command, Proc};
use crate::common::*;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(5);
const ADDR: &str = "10.0.0.5:10911";

/// A server whose brokers expire 300 ms after their last registration, scanned every 50 ms.
fn fast_expiry_server() -> TestServer {
    TestServer::with(|s| {
        s.routing.scan_interval_ms = 50;
        s.routing.broker_timeout_ms = 300;
    })
}

/// broker-a (cluster C, id 0) and broker-b (given cluster and id) register at one address over
/// two connections; the connections are returned.
fn register_both_at_one_address(server: &TestServer, cluster_b: &str, id_b: i64) -> (Client, Client) {
    let mut conn1 = server.client();
    assert_success(&conn1.register(&Broker::new("C", "broker-a", 0, ADDR).topics(&["TA", "TA2"])));
    let mut conn2 = server.client();
    assert_success(&conn2.register(&Broker::new(cluster_b, "broker-b", id_b, ADDR).topics(&["TB", "TB2"])));
    (conn1, conn2)
}

/// Nothing is listed any more: no cluster, no group, no route for either broker's topics.
fn assert_nothing_listed(client: &mut Client) {
    assert!(
        eventually(WAIT, || client.cluster_info() == json!({"brokerAddrTable": {}, "clusterAddrTable": {}})),
        "still listed: {}",
        client.cluster_info()
    );
    for topic in ["TA", "TA2", "TB", "TB2"] {
        assert_eq!(client.route(topic), Err(17), "{topic}");
    }
}

#[test]
fn an_address_reused_by_another_broker_leaves_nothing_once_both_connections_close() {
    for (cluster_b, id_b) in [("C", 0), ("D", 0), ("C", 1)] {
        let server = TestServer::start();
        let (conn1, conn2) = register_both_at_one_address(&server, cluster_b, id_b);
        let mut client = server.client();
        assert_eq!(client.route("TA"), Err(17), "{cluster_b}/{id_b}: broker-a was replaced at once");
        let expected = if id_b == 0 { json!({"0": ADDR}) } else { json!({"1": ADDR}) };
        assert_eq!(route_addrs(&client.route("TB").unwrap(), "broker-b"), expected);
        drop(conn1);
        drop(conn2);
        assert_nothing_listed(&mut client);
    }
}

#[test]
fn an_address_reused_by_another_broker_leaves_nothing_once_both_expire() {
    for (cluster_b, id_b) in [("C", 0), ("D", 0), ("C", 1)] {
        let server = fast_expiry_server();
        let (_conn1, _conn2) = register_both_at_one_address(&server, cluster_b, id_b);
        let mut client = server.client();
        assert_nothing_listed(&mut client);
    }
}

#[test]
fn an_expired_broker_gets_its_connection_closed() {
    let server = fast_expiry_server();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("C", "b", 0, ADDR).topics(&["T1", "T2"])));
    assert!(conn.closed_by_server(Duration::from_secs(3)), "Java closes the channel of an expired broker");
    let mut client = server.client();
    assert_eq!(client.route("T1"), Err(17));
}

#[test]
fn a_broker_that_keeps_registering_keeps_its_connection() {
    let server = TestServer::with(|s| {
        s.routing.scan_interval_ms = 50;
        s.routing.broker_timeout_ms = 1000;
    });
    let mut conn = server.client();
    let broker = Broker::new("C", "b", 0, ADDR).topics(&["T1", "T2"]);
    for _ in 0..25 {
        assert_success(&conn.register(&broker));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_success(&conn.register(&broker));
}

#[test]
fn address_reuse_is_logged_once_naming_both_brokers() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    let mut conn1 = Client::connect(addr);
    assert_success(&conn1.register(&Broker::new("C", "broker-a", 0, ADDR).topics(&["TA", "TA2"])));
    let mut conn2 = Client::connect(addr);
    assert_success(&conn2.register(&Broker::new("C", "broker-b", 0, ADDR).topics(&["TB", "TB2"])));
    let line = format!("address reused: broker-a replaced by broker-b at {ADDR}");
    assert!(eventually(WAIT, || proc.stderr().contains(&line)), "log:\n{}", proc.stderr());
    assert_eq!(proc.stderr().matches("address reused").count(), 1);
}

#[test]
fn the_connection_of_a_replaced_broker_is_closed() {
    let server = TestServer::start();
    let (mut conn1, mut conn2) = register_both_at_one_address(&server, "C", 0);
    assert!(conn1.closed_by_server(Duration::from_secs(3)), "broker-a's process is gone: its address serves broker-b");
    assert_success(&conn2.register(&Broker::new("C", "broker-b", 0, ADDR).topics(&["TB", "TB2"])));
}
