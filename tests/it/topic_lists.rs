//! Topic lists over real TCP: all topics (206), topics by cluster (224), the system topic list
//! (304), unit topic lists (311–313) and the 3 × 3 grid of Java's RouteInfoManagerStaticRegisterTest.

use crate::common::checks::{assert_success, body_text, broker_names, topic_list};
use crate::common::requests::{delete_topic, register_edited, request};
use crate::common::routeinfo::grid_broker;
use crate::common::*;
use namesrv::protocol::RemotingCommand;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206)
// ---------------------------------------------------------------------------------------------

in_both_topologies! {
    fn all_topic_list_is_empty_without_brokers(topology) {
        let server = topology.server();
        let resp = server.client().call(RemotingCommand::request(206, None));
        assert_success(&resp);
        assert_eq!(body_text(&resp), r#"{"topicList":[]}"#);
    }

    fn all_topic_list_holds_every_topic_of_every_cluster_sorted(topology) {
        let server = topology.server();
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

    fn all_topic_list_is_refused_when_disabled(topology) {
        let server = topology.server_with(|s| s.routing.enable_all_topic_list = false);
        let mut conn = server.client();
        conn.register(&Broker::new("c", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
        let resp = server.client().call(RemotingCommand::request(206, None));
        assert_eq!((resp.code, resp.remark.as_deref()), (1, Some("disable")));
        assert!(resp.body.is_none());
    }

    // ---------------------------------------------------------------------------------------------
    // GET_TOPICS_BY_CLUSTER (224), GET_SYSTEM_TOPIC_LIST_FROM_NS (304),
    // unit topic lists (311, 312, 313)
    // ---------------------------------------------------------------------------------------------

    fn topics_by_cluster_lists_the_topics_of_that_clusters_brokers_sorted(topology) {
        let server = topology.server();
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

    fn topics_by_cluster_for_an_unknown_cluster_is_an_empty_list(topology) {
        let server = topology.server();
        let mut conn = server.client();
        conn.register(&Broker::new("c1", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
        let resp = server.client().call(request(224, &[("cluster", "nope")]));
        assert_success(&resp);
        assert_eq!(body_text(&resp), r#"{"topicList":[]}"#);
    }

    fn topics_by_cluster_without_the_cluster_header_is_a_system_error(topology) {
        let server = topology.server();
        let resp = server.client().call(request(224, &[("other", "x")]));
        assert_eq!(resp.code, 1);
        assert!(resp.remark.as_deref().unwrap_or_default().contains("cluster"), "remark: {:?}", resp.remark);
    }

    fn topic_lists_are_refused_when_disabled_even_without_a_header(topology) {
        let server = topology.server_with(|s| s.routing.enable_topic_list = false);
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

    fn system_topic_list_names_clusters_and_brokers_and_the_first_groups_lowest_id_address(topology) {
        let server = topology.server_with(|s| s.routing.enable_topic_list = false);
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

    fn system_topic_list_without_brokers_has_no_broker_addr(topology) {
        let server = topology.server();
        let resp = server.client().call(RemotingCommand::request(304, None));
        assert_success(&resp);
        assert_eq!(body_text(&resp), r#"{"topicList":[]}"#);
    }

    fn unit_topic_lists_select_topics_by_their_sys_flag(topology) {
        let server = topology.server();
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
    // Java's routeinfo/RouteInfoManagerStaticRegisterTest: 3 broker names × 3 ids × 10 topics
    // ---------------------------------------------------------------------------------------------

    fn three_by_three_grid_lists_every_name_topic_and_member(topology) {
        let server = topology.server();
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
}
