//! Wire compatibility: frames captured on the wire from the rocketmq-rust 1.0.0 broker and client
//! (`fixtures/rocketmq-rust-broker-1.0.0`) replayed byte for byte against the server.

use std::path::PathBuf;

use crate::common::*;
use serde_json::{json, Value};

fn sample(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rocketmq-rust-broker-1.0.0").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Rebuilds the exact frame: length, type|header length, captured header, captured body.
fn frame(prefix: &str, serialize_type: u8) -> Vec<u8> {
    let header = sample(&format!("{prefix}.req.header.raw"));
    let body = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/rocketmq-rust-broker-1.0.0")
            .join(format!("{prefix}.req.body.bin")),
    )
    .unwrap_or_default();
    let mut out = Vec::new();
    out.extend_from_slice(&((4 + header.len() + body.len()) as u32).to_be_bytes());
    out.extend_from_slice(&(((serialize_type as u32) << 24) | header.len() as u32).to_be_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&body);
    out
}

/// Drops the `null` fields rocketmq-rust writes and Java leaves out.
fn without_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

#[test]
fn json_header_registration_from_the_rust_broker_is_accepted_and_routed() {
    let server = TestServer::start();
    let mut broker = server.client();
    broker.send_raw(&frame("01-register-broker.json-header", 0));
    let resp = broker.read_frame().unwrap();
    assert_eq!((resp.code, resp.flag, resp.opaque), (0, 1, 0));
    assert_eq!(resp.serialize_type, namesrv::protocol::SerializeType::Json);

    // The captured route response, modulo the nulls Java omits.
    let expected =
        without_nulls(serde_json::from_slice(&sample("03-get-routeinfo-by-topic.found.resp.body.json")).unwrap());
    let mut client = server.client();
    client.send_raw(&frame("03-get-routeinfo-by-topic.found", 0));
    let route = client.read_frame().unwrap();
    assert_eq!(route.code, 0);
    let got: Value = serde_json::from_slice(route.body.as_deref().unwrap()).unwrap();
    assert_eq!(got["brokerDatas"], expected["brokerDatas"]);
    assert_eq!(got["queueDatas"], expected["queueDatas"]);
    assert_eq!(got["filterServerTable"], json!({}));

    let info = client.cluster_info();
    assert_eq!(info["clusterAddrTable"], json!({"DefaultCluster": ["broker-a"]}));
    let topics = serde_json::from_slice::<Value>(&sample("01-register-broker.json-header.req.body.json")).unwrap();
    for topic in topics["topicConfigSerializeWrapper"]["topicConfigTable"].as_object().unwrap().keys() {
        assert!(client.route(topic).is_ok(), "{topic} routed");
    }

    client.send_raw(&frame("04-get-routeinfo-by-topic.not-found", 0));
    let missing = client.read_frame().unwrap();
    assert_eq!(missing.code, 17);

    broker.send_raw(&frame("07-unregister-broker", 0));
    assert_eq!(broker.read_frame().unwrap().code, 0);
    assert_eq!(client.route("PeerTopic"), Err(17));
}

#[test]
fn rocketmq_binary_header_registration_and_route_query_are_answered_in_kind() {
    let server = TestServer::start();
    let mut broker = server.client();
    broker.send_raw(&frame("02-register-broker.rocketmq-header", 1));
    let resp = broker.read_frame().unwrap();
    assert_eq!(resp.code, 0, "{:?}", resp.remark);
    assert_eq!(resp.serialize_type, namesrv::protocol::SerializeType::RocketMq);

    let mut client = server.client();
    client.send_raw(&frame("05-get-routeinfo-by-topic.rocketmq-header", 1));
    let raw = client.read_raw_frame();
    assert_eq!(raw[4], 1, "binary request, binary response header");
    let route = {
        let mut codec = namesrv::protocol::RemotingCodec::default();
        tokio_util::codec::Decoder::decode(&mut codec, &mut bytes::BytesMut::from(&raw[..])).unwrap().unwrap()
    };
    assert_eq!(route.code, 0);
    let expected = without_nulls(
        serde_json::from_slice(&sample("05-get-routeinfo-by-topic.rocketmq-header.resp.body.json")).unwrap(),
    );
    let got: Value = serde_json::from_slice(route.body.as_deref().unwrap()).unwrap();
    assert_eq!(got["queueDatas"], expected["queueDatas"]);
    assert_eq!(got["brokerDatas"], expected["brokerDatas"]);
}

#[test]
fn raw_deflate_compressed_registration_from_the_rust_broker_is_decoded() {
    let server = TestServer::start();
    let mut broker = server.client();
    broker.send_raw(&frame("08-register-broker.compressed", 0));
    let resp = broker.read_frame().unwrap();
    assert_eq!(resp.code, 0, "{:?}", resp.remark);

    let decoded: Value =
        serde_json::from_slice(&sample("08-register-broker.compressed.req.body.decoded.json")).unwrap();
    let lines = decoded["topicConfigs"].as_array().unwrap();
    assert_eq!(lines.len(), 22);
    let mut client = server.client();
    for line in lines {
        let fields: Vec<&str> = line.as_str().unwrap().split(' ').collect();
        let route = client.route(fields[0]).unwrap_or_else(|code| panic!("{} not routed: {code}", fields[0]));
        let queue = route_queue(&route, "broker-a");
        assert_eq!(queue["readQueueNums"].to_string(), fields[1]);
        assert_eq!(queue["writeQueueNums"].to_string(), fields[2]);
        assert_eq!(queue["perm"].to_string(), fields[3]);
    }
}

#[test]
fn register_topic_pushed_by_the_rust_broker_is_routed_at_once() {
    let server = TestServer::start();
    let mut broker = server.client();
    broker.send_raw(&frame("01-register-broker.json-header", 0));
    assert_eq!(broker.read_frame().unwrap().code, 0);
    let mut client = server.client();
    assert_eq!(client.route("%RETRY%peer_group_7"), Err(17), "not in the startup registration");

    broker.send_raw(&frame("06-register-topic-in-namesrv", 0));
    let resp = broker.read_frame().unwrap();
    assert_eq!((resp.code, resp.opaque), (0, 14));
    let body: Value = serde_json::from_slice(&sample("06-register-topic-in-namesrv.req.body.json")).unwrap();
    let route = client.route("%RETRY%peer_group_7").unwrap();
    assert_eq!(route["queueDatas"], without_nulls(body["queueDatas"].clone()));
    assert_eq!(route_addrs(&route, "broker-a"), json!({"0": "127.0.0.1:30911"}));
}
