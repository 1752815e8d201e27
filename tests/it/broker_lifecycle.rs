//! A broker's life as clients see it: register, route, cluster info, slaves, unregister,
//! connection close, expiry, and re-registration over a new connection.

use std::time::Duration;

use crate::common::*;
use namesrv::settings::LargeBodyDecode;
use serde_json::json;

in_both_topologies! {
    fn registered_broker_is_routed_in_both_json_styles_and_listed_in_cluster_info(topology) {
        let server = topology.server();
        let mut broker = server.client();
        let master = Broker::new("DefaultCluster", "broker-a", 0, "127.0.0.1:10911").topics(&["TopicTest", "TBW102"]);
        let resp = broker.register(&master);
        assert_eq!(resp.code, 0, "{:?}", resp.remark);
        assert!(resp.ext_fields.is_some(), "register responses always carry extFields");
        assert_eq!(resp.ext("masterAddr"), None);

        let mut client = server.client();
        let route = client.route("TopicTest").unwrap();
        assert_eq!(route_addrs(&route, "broker-a"), json!({"0": "127.0.0.1:10911"}));
        assert_eq!(
            route_queue(&route, "broker-a"),
            json!({"brokerName":"broker-a","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8})
        );
        assert_eq!(route["filterServerTable"], json!({}));

        // A pre-4.9.4 client gets bare numeric keys, byte for byte as fastjson writes them.
        let old = client.call(route_request("TopicTest", 317));
        assert_eq!(old.code, 0);
        let text = String::from_utf8(old.body.unwrap().to_vec()).unwrap();
        assert_eq!(
            text,
            r#"{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]}"#
        );
        // ... unless it asks for standard JSON.
        let mut asks = route_request("TopicTest", 317);
        asks.ext_fields.as_mut().unwrap().insert("acceptStandardJsonOnly", "TRUE");
        let standard = client.call(asks);
        assert!(String::from_utf8_lossy(standard.body.as_deref().unwrap()).contains(r#"{"0":"127.0.0.1:10911"}"#));

        let info = client.cluster_info();
        assert_eq!(info["clusterAddrTable"], json!({"DefaultCluster": ["broker-a"]}));
        assert_eq!(info["brokerAddrTable"]["broker-a"]["brokerAddrs"], json!({"0": "127.0.0.1:10911"}));
    }

    fn unknown_topic_is_topic_not_exist_with_javas_remark(topology) {
        let server = topology.server();
        let resp = server.client().call(route_request("nope", 479));
        assert_eq!(resp.code, 17);
        assert!(resp.remark.unwrap().starts_with("No topic route info in name server for the topic: nope"));
        assert!(resp.body.is_none());
    }

    fn slave_learns_its_masters_addresses_once_the_master_is_live(topology) {
        let server = topology.server();
        let slave = Broker::new("c", "broker-a", 1, "127.0.0.1:30911").topics(&["T1", "T2"]);
        let master = Broker::new("c", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
        let mut slave_conn = server.client();
        let early = slave_conn.register(&slave);
        assert_eq!(early.code, 0);
        assert_eq!(early.ext("masterAddr"), None, "no master registered yet");

        let mut master_conn = server.client();
        assert_eq!(master_conn.register(&master).code, 0);
        let later = slave_conn.register(&slave);
        assert_eq!(later.ext("masterAddr"), Some("127.0.0.1:10911"));
        assert_eq!(later.ext("haServerAddr"), Some("127.0.0.1:10911-ha"));

        let route = server.client().route("T1").unwrap();
        assert_eq!(route_addrs(&route, "broker-a"), json!({"0": "127.0.0.1:10911", "1": "127.0.0.1:30911"}));
    }

    fn first_registration_with_a_single_topic_is_rejected(topology) {
        let server = topology.server();
        let resp = server.client().register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["only"]));
        assert_eq!((resp.code, resp.remark.as_deref()), (1, Some("register broker failed")));
        assert_eq!(server.client().route("only"), Err(17));
    }

    fn crc_mismatch_is_rejected_and_nothing_registers(topology) {
        let server = topology.server();
        let mut req = Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]).register_request();
        req.ext_fields.as_mut().unwrap().insert("bodyCrc32", "12345");
        let resp = server.client().call(req);
        assert_eq!((resp.code, resp.remark.as_deref()), (1, Some("crc32 not match")));
        assert_eq!(server.client().route("T1"), Err(17));
    }

    fn unregister_removes_the_broker_its_topics_and_its_cluster(topology) {
        let server = topology.server();
        let broker = Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
        let mut conn = server.client();
        conn.register(&broker);
        let resp = conn.unregister(&broker);
        assert_eq!((resp.code, resp.remark), (0, None));
        assert_eq!(conn.route("T1"), Err(17));
        assert_eq!(conn.cluster_info(), json!({"brokerAddrTable": {}, "clusterAddrTable": {}}));
    }

    fn closing_the_brokers_connection_removes_it_at_once(topology) {
        let server = topology.server();
        let mut conn = server.client();
        conn.register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]));
        let mut client = server.client();
        assert!(client.route("T1").is_ok());
        drop(conn);
        assert!(eventually(Duration::from_secs(2), || client.route("T1") == Err(17)));
    }

    fn a_client_connection_closing_does_not_touch_brokers(topology) {
        let server = topology.server_with_http(|_| {});
        let mut broker = server.client();
        broker.register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]));
        for _ in 0..3 {
            let mut c = server.client();
            assert!(c.route("T1").is_ok());
        }
        server.wait_for_open_connections(1);
        assert!(server.client().route("T1").is_ok());
    }

    fn re_registration_over_a_new_connection_survives_the_close_of_the_old_one(topology) {
        let server = topology.server_with_http(|_| {});
        let broker = Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
        let mut old = server.client();
        old.register(&broker);
        let mut new = server.client();
        assert_eq!(new.register(&broker).code, 0);
        drop(old);
        server.wait_for_open_connections(1);
        assert!(server.client().route("T1").is_ok(), "the newer registration owns the broker now");
        drop(new);
        let mut client = server.client();
        assert!(eventually(Duration::from_secs(2), || client.route("T1") == Err(17)));
    }

    fn silent_broker_is_removed_after_its_timeout_and_heartbeats_keep_it(topology) {
        let server = topology.server_with(|s| {
            s.routing.scan_interval_ms = 50;
            s.routing.broker_timeout_ms = 400;
        });
        // Each broker over its own connection, as brokers do: an expired broker's connection is closed.
        let mut silent_conn = server.client();
        let mut conn = server.client();
        let silent = Broker::new("c", "silent", 0, "127.0.0.1:1").topics(&["S1", "S2"]);
        let chatty = Broker::new("c", "chatty", 0, "127.0.0.1:2").topics(&["C1", "C2"]);
        silent_conn.register(&silent);
        conn.register(&chatty);
        let mut heartbeat = chatty.identity_request(904);
        heartbeat.flag = 2; // oneway, as brokers send it
        let mut client = server.client();
        let deadline = std::time::Instant::now() + Duration::from_millis(1200);
        while std::time::Instant::now() < deadline {
            conn.send(&heartbeat);
            std::thread::sleep(Duration::from_millis(100));
        }
        let expired = eventually(Duration::from_secs(3), || {
            conn.send(&heartbeat);
            client.route("S1") == Err(17)
        });
        assert!(expired, "silent broker expired");
        assert!(client.route("C1").is_ok(), "heartbeats kept the other broker");
    }

    fn broker_registered_timeout_overrides_the_default(topology) {
        let server = topology.server_with(|s| s.routing.scan_interval_ms = 50);
        let mut broker = Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
        broker.heartbeat_timeout_ms = Some(1000);
        let mut conn = server.client();
        conn.register(&broker);
        let mut client = server.client();
        assert!(client.route("T1").is_ok());
        assert!(eventually(Duration::from_secs(5), || client.route("T1") == Err(17)));
    }

    fn query_data_version_reports_changes_and_refreshes_liveness(topology) {
        let server = topology.server();
        let broker = Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
        let mut conn = server.client();
        let unknown = conn.call(broker.identity_request(322));
        assert_eq!((unknown.code, unknown.ext("changed")), (0, Some("true")));
        assert!(unknown.body.is_none());

        conn.register(&broker);
        let dv = &broker.data_version;
        let same = format!(r#"{{"counter":{},"stateVersion":0,"timestamp":{}}}"#, dv.counter, dv.timestamp);
        let resp = conn.call(broker.identity_request(322).with_body(same.clone()));
        assert_eq!(resp.ext("changed"), Some("false"));
        assert_eq!(resp.body.as_deref(), Some(same.as_bytes()));
        let other = conn.call(broker.identity_request(322).with_body(r#"{"counter":99,"timestamp":1}"#));
        assert_eq!(other.ext("changed"), Some("true"));
    }

    fn unchanged_re_registration_keeps_routes_and_changed_one_merges_topics(topology) {
        let server = topology.server();
        let mut conn = server.client();
        let v1 = Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
        conn.register(&v1);
        conn.register(&v1);
        let v2 = v1.clone().topics(&["T3"]).bump();
        assert_eq!(conn.register(&v2).code, 0, "an incremental registration of a known broker is accepted");
        for topic in ["T1", "T2", "T3"] {
            assert!(conn.route(topic).is_ok(), "{topic} routed: registration merges");
        }
    }

    fn large_registrations_decode_the_same_in_place_and_on_the_blocking_pool(topology) {
        let names: Vec<String> = (0..3000).map(|i| format!("LargeTopic-{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let broker = Broker::new("c", "big", 0, "127.0.0.1:1").topics(&refs);
        assert!(broker.body_json().len() > 64 * 1024, "large enough to take the large-body path");
        for mode in [LargeBodyDecode::Inline, LargeBodyDecode::Blocking] {
            let server = topology.server_with(|s| s.listen.large_body_decode = mode);
            let mut conn = server.client();
            assert_eq!(conn.register(&broker).code, 0, "{mode}");
            let mut client = server.client();
            for topic in ["LargeTopic-0", "LargeTopic-1499", "LargeTopic-2999"] {
                assert!(client.route(topic).is_ok(), "{mode}: {topic}");
            }
            let mut bad = broker.register_request();
            bad.ext_fields.as_mut().unwrap().insert("bodyCrc32", "1");
            assert_eq!(conn.call(bad).remark.as_deref(), Some("crc32 not match"), "{mode}");
        }
    }
}

#[test]
fn a_heartbeat_timeout_past_the_maximum_is_clamped_at_the_door() {
    let server = TestServer::with(|s| {
        s.routing.scan_interval_ms = 50;
        s.routing.max_heartbeat_timeout_ms = 1_500;
    });
    let mut conn = server.client();
    let ghost = Broker { heartbeat_timeout_ms: Some(i64::MAX as u64), ..Broker::new("c", "ghost", 0, "127.0.0.1:9") };
    assert_eq!(conn.register(&ghost.topics(&["G1", "G2"])).code, 0);
    let mut client = server.client();
    assert!(client.route("G1").is_ok());
    assert!(
        eventually(Duration::from_secs(5), || client.route("G1").is_err()),
        "a broker asking for i64::MAX still expires at the maximum (1.5 s)"
    );
}
