//! Zone filtering (ZoneRouteRPCHook), the route readiness gate, min-broker-id notifications (905) and
//! unregister from any connection, fencing of connection closes and expiry, over real TCP.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::common::checks::{assert_success, broker_names, queue_names, topic_list};
use crate::common::requests::{register_edited, request};
use crate::common::*;
use bytes::BytesMut;
use namesrv::protocol::{RemotingCodec, RemotingCommand};
use serde_json::{json, Value};
use tokio_util::codec::Decoder;

const WAIT: Duration = Duration::from_secs(3);

// ---------------------------------------------------------------------------------------------
// GET_ROUTEINFO_BY_TOPIC zone filtering (ZoneRouteRPCHook, ZoneRouteRPCHookTest)
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
// ClientRequestProcessor's readiness gate (needWaitForService; ClusterTestRequestProcessorTest)
// ---------------------------------------------------------------------------------------------

/// A server with the readiness gate configured and a broker hosting `T1` registered.
fn gated_server(need_wait: bool, wait_secs: u64) -> (TestServer, Client) {
    let server = TestServer::with(|s| {
        s.routing.need_wait_for_service = need_wait;
        s.routing.wait_seconds_for_service = wait_secs;
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
// NOTIFY_MIN_BROKER_ID_CHANGE (905) sent on RouteInfoManager registerBroker / unRegisterBroker
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
    let server = TestServer::with(|s| s.routing.notify_min_broker_id_changed = true);
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
    let server = TestServer::with(|s| s.routing.notify_min_broker_id_changed = true);
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
// unregister from any connection, fencing of connection closes (apache/rocketmq#11043), expiry
// (onChannelDestroy, scanNotActiveBroker)
// ---------------------------------------------------------------------------------------------

#[test]
fn unregister_applies_whatever_connection_it_comes_over_as_in_java() {
    let server = TestServer::start();
    let broker = Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
    let mut conn_a = server.client();
    assert_success(&conn_a.register(&broker));
    let mut other = server.client();
    assert_success(&other.unregister(&broker));
    let mut client = server.client();
    assert_eq!(client.route("T1"), Err(17), "DefaultRequestProcessor.unregisterBroker never looks at the channel");
    assert_eq!(client.cluster_info()["clusterAddrTable"], json!({}));

    // After a reconnect, an unregister over the old connection still applies.
    let mut conn_b = server.client();
    assert_success(&conn_b.register(&broker));
    assert_success(&conn_a.unregister(&broker));
    assert_eq!(client.route("T1"), Err(17));
}

#[test]
fn an_unregister_naming_the_wrong_id_or_cluster_follows_javas_rules() {
    let server = TestServer::start();
    let mut client = server.client();
    // A wrong id: Java removes the live entry of (cluster, addr) and every id with that address.
    let broker = Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
    let mut conn = server.client();
    assert_success(&conn.register(&broker));
    let wrong_id = Broker { id: 5, ..broker.clone() };
    assert_success(&server.client().unregister(&wrong_id));
    assert_eq!(client.route("T1"), Err(17), "the address goes at whatever id it was listed");
    assert_eq!(client.cluster_info()["brokerAddrTable"], json!({}));

    // A wrong cluster: the group is found by name and loses the address; the live entry, which
    // no group lists any more, goes too (Java keeps it until it expires, and then forever).
    let mut conn = server.client();
    assert_success(&conn.register(&broker));
    let wrong_cluster = Broker { cluster: "elsewhere".into(), ..broker.clone() };
    assert_success(&server.client().unregister(&wrong_cluster));
    assert_eq!(client.route("T1"), Err(17));
    assert_success(&conn.register(&broker));
    assert_eq!(route_addrs(&client.route("T1").unwrap(), "b"), json!({"0": "127.0.0.1:10911"}), "it can come back");
}

#[test]
fn closing_an_old_connection_leaves_a_broker_that_re_registered_over_a_new_one() {
    let server = TestServer::with_http(|_| {});
    let broker = Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
    let mut conn_a = server.client();
    assert_success(&conn_a.register(&broker));
    let mut conn_b = server.client();
    assert_success(&conn_b.register(&broker));
    drop(conn_a);
    let mut client = server.client();
    assert_success(&client.call(RemotingCommand::request(106, None)));
    server.wait_for_open_connections(2);
    assert_eq!(route_addrs(&client.route("T1").unwrap(), "b"), json!({"0": "127.0.0.1:10911"}));
    drop(conn_b);
    assert!(eventually(WAIT, || client.route("T1") == Err(17)), "the latest connection's close removes it");
}

#[test]
fn broker_that_keeps_re_registering_is_never_expired_and_expires_once_it_stops() {
    let server = TestServer::with(|s| s.routing.scan_interval_ms = 50);
    let mut broker = Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
    broker.heartbeat_timeout_ms = Some(1000);
    let mut conn_a = server.client();
    assert_success(&conn_a.register(&broker));
    let mut conn_b = server.client();
    assert_success(&conn_b.register(&broker));
    drop(conn_a);

    let mut client = server.client();
    let deadline = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < deadline {
        assert_success(&conn_b.register(&broker));
        std::thread::sleep(Duration::from_millis(100));
        // Checked just before the next re-registration, when it has been silent the longest.
        assert!(client.route("T1").is_ok(), "expired while re-registering every 100 ms");
    }
    assert!(eventually(WAIT, || client.route("T1") == Err(17)), "silent past 1 s, it expires");
    assert_eq!(client.cluster_info()["clusterAddrTable"], json!({}));
}
