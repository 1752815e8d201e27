//! Bad input gets a clear error and nothing is lost: malformed frames close only their own
//! connection, request-level mistakes get RocketMQ response codes, oneway is never answered.

use std::time::Duration;

use crate::common::*;
use namesrv::protocol::{ExtFields, RemotingCommand, SerializeType};
use namesrv::settings::ResponseSerializeType;

fn server_with_a_broker(topology: Topology) -> (TestServer, Client) {
    let server = topology.server();
    let mut broker = server.client();
    assert_eq!(broker.register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"])).code, 0);
    (server, broker)
}

fn assert_bad_bytes_close_only_their_connection(topology: Topology, bytes: &[u8], half_close: bool) {
    let (server, _broker) = server_with_a_broker(topology);
    let mut healthy = server.client();
    assert!(healthy.route("T1").is_ok());
    let mut bad = server.client();
    bad.send_raw(bytes);
    if half_close {
        bad.shutdown_write();
    }
    assert!(bad.closed_by_server(Duration::from_secs(3)), "server closes the offending connection");
    assert!(healthy.route("T1").is_ok(), "other connections keep working");
    assert!(server.client().route("T2").is_ok(), "new connections keep working");
}

in_both_topologies! {
    fn garbage_bytes_close_only_their_connection(topology) {
        assert_bad_bytes_close_only_their_connection(topology, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", false);
    }

    fn a_two_gib_length_prefix_closes_only_its_connection(topology) {
        assert_bad_bytes_close_only_their_connection(topology, &[0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 10], false);
    }

    fn a_negative_length_prefix_closes_only_its_connection(topology) {
        assert_bad_bytes_close_only_their_connection(topology, &[0xFF, 0xFF, 0xFF, 0xFE], false);
    }

    fn a_header_longer_than_its_frame_closes_only_its_connection(topology) {
        assert_bad_bytes_close_only_their_connection(topology, &[0, 0, 0, 10, 0, 0, 0, 200, b'{', b'}', 0, 0, 0, 0], false);
    }

    fn a_truncated_frame_closes_only_its_connection(topology) {
        let mut frame = bytes::BytesMut::new();
        namesrv::protocol::codec::encode_frame(&route_request("T1", 479), &mut frame).unwrap();
        assert_bad_bytes_close_only_their_connection(topology, &frame[..frame.len() - 5], true);
    }

    fn an_unparseable_json_header_closes_only_its_connection(topology) {
        let header = b"{\"code\":105,\"extFields\":";
        let mut frame = ((4 + header.len()) as u32).to_be_bytes().to_vec();
        frame.extend_from_slice(&(header.len() as u32).to_be_bytes());
        frame.extend_from_slice(header);
        assert_bad_bytes_close_only_their_connection(topology, &frame, false);
    }

    fn an_oversized_frame_is_refused_at_the_configured_limit(topology) {
        let server = topology.server_with(|s| s.limits.max_frame_bytes = 4096);
        let mut small = server.client();
        assert_eq!(small.call(route_request("x", 479).with_body(vec![b' '; 3000])).code, 17);
        let mut big = server.client();
        big.send(&route_request("x", 479).with_body(vec![b' '; 5000]));
        assert!(big.closed_by_server(Duration::from_secs(3)));
    }

    fn unknown_code_is_request_code_not_supported(topology) {
        let server = topology.server();
        let resp = server.client().call(RemotingCommand::request(99999, None));
        assert_eq!(resp.code, 3);
        assert_eq!(resp.remark.as_deref(), Some(" request type 99999 not supported"));
        assert_eq!(resp.flag & 1, 1);
    }

    fn missing_required_header_is_system_error_naming_the_field(topology) {
        let server = topology.server();
        let mut client = server.client();
        let resp = client.call(RemotingCommand::request(105, Some(ExtFields::new().with("nope", "x"))));
        assert_eq!((resp.code, resp.remark.as_deref()), (1, Some("the custom field <topic> is null")));
        let resp = client.call(RemotingCommand::request(104, Some(ExtFields::new().with("brokerName", "b"))));
        assert_eq!((resp.code, resp.remark.as_deref()), (1, Some("the custom field <brokerAddr> is null")));
        // With no extFields at all Java skips validation: the route lookup finds nothing.
        assert_eq!(client.call(RemotingCommand::request(105, None)).code, 17);
    }

    fn a_bad_register_body_is_system_error_and_the_connection_stays_open(topology) {
        let server = topology.server();
        let mut conn = server.client();
        let mut req = Broker::new("c", "b", 0, "127.0.0.1:1").register_request();
        req.ext_fields.as_mut().unwrap().insert("bodyCrc32", "0");
        let resp = conn.call(req.with_body(&b"{\"topicConfigSerializeWrapper\":[1,2"[..]));
        assert_eq!(resp.code, 1);
        assert!(resp.remark.unwrap().starts_with("bad json body"));
        assert_eq!(conn.call(route_request("T1", 479)).code, 17, "connection still usable");
    }

    fn oneway_requests_are_never_answered(topology) {
        let server = topology.server();
        let mut client = server.client();
        for code in [99999, 105, 106] {
            let mut oneway =
                RemotingCommand::request(code, Some(ExtFields::new().with("topic", "T"))).with_opaque(1000 + code);
            oneway.flag = 2;
            client.send(&oneway);
        }
        client.expect_silence(Duration::from_millis(300));
        assert_eq!(client.call(RemotingCommand::request(106, None)).code, 0, "the connection stays usable");
    }

    fn response_frames_sent_to_the_server_are_dropped(topology) {
        let server = topology.server();
        let mut client = server.client();
        let mut stray = RemotingCommand::request(0, None).with_opaque(77);
        stray.flag = 1;
        client.send(&stray);
        client.expect_silence(Duration::from_millis(300));
        assert_eq!(client.call(RemotingCommand::request(106, None)).code, 0, "the connection stays usable");
    }

    fn replies_copy_opaque_and_follow_the_request_serialization(topology) {
        let server = topology.server();
        let mut client = server.client();
        let mut binary = route_request("T", 479).with_opaque(4242);
        binary.serialize_type = SerializeType::RocketMq;
        client.send(&binary);
        let resp = client.read_frame().unwrap();
        assert_eq!((resp.opaque, resp.code, resp.serialize_type), (4242, 17, SerializeType::RocketMq));

        let forced = topology.server_with(|s| s.listen.response_serialize_type = ResponseSerializeType::Json);
        let mut client = forced.client();
        client.send(&binary);
        assert_eq!(client.read_frame().unwrap().serialize_type, SerializeType::Json);
    }

    fn sloppy_client_headers_are_accepted(topology) {
        let server = topology.server();
        let mut client = server.client();
        // C++ client: no serializeTypeCurrentRPC, empty remark. Node.js: language JAVA, version 121.
        // Go: numeric language, extFields values of other types.
        for header in [
            r#"{"code":105,"extFields":{"topic":"T"},"flag":0,"language":"CPP","opaque":1,"remark":"","version":0}"#,
            r#"{"code":105,"language":"JAVA","version":121,"opaque":2,"flag":0,"extFields":{"topic":"T"}}"#,
            r#"{"code":105,"language":9,"version":317,"opaque":3,"flag":0,"remark":"","extFields":{"topic":"T","n":5,"b":true}}"#,
        ] {
            let mut frame = ((4 + header.len()) as u32).to_be_bytes().to_vec();
            frame.extend_from_slice(&(header.len() as u32).to_be_bytes());
            frame.extend_from_slice(header.as_bytes());
            client.send_raw(&frame);
            let resp = client.read_frame().expect("answered");
            assert_eq!(resp.code, 17);
        }
    }

    fn idle_connections_are_closed(topology) {
        let server = topology.server_with(|s| s.listen.idle_timeout_secs = 1);
        let mut idle = server.client();
        assert!(idle.closed_by_server(Duration::from_secs(4)));
        assert_eq!(server.client().call(RemotingCommand::request(106, None)).code, 0);
    }
}
