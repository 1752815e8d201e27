//! A broker's life as clients see it: register, route, cluster info, slaves, unregister,
//! connection close, expiry, and re-registration over a new connection.

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;

#[test]
fn registered_broker_is_routed_in_both_json_styles_and_listed_in_cluster_info() {
    let server = TestServer::start();
    let mut broker = server.client();
    let master = Broker::new("DefaultCluster", "broker-a", 0, "127.0.0.1:10911").topics(&["TopicTest", "TBW102"]);
    let resp = broker.register(&master);
    assert_eq!(resp.code, 0, "{:?}", resp.remark);
    assert!(resp.ext_fields.is_some(), "register responses always carry extFields");
    assert_eq!(resp.ext("masterAddr"), None);

    let mut client = server.client();
    let route = client.route("TopicTest").unwrap();
    assert_eq!(route_addrs(&route, "broker-a"), json!({"0": "127.0.0.1:10911"}));
    assert_eq!(route_queue(&route, "broker-a"), json!({"brokerName":"broker-a","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}));
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

#[test]
fn unknown_topic_is_topic_not_exist_with_javas_remark() {
    let server = TestServer::start();
    let resp = server.client().call(route_request("nope", 479));
    assert_eq!(resp.code, 17);
    assert!(resp.remark.unwrap().starts_with("No topic route info in name server for the topic: nope"));
    assert!(resp.body.is_none());
}
