//! Plain route queries take the route lane (answered from the batch straight onto their
//! connection, no request future each): pipelined on one connection with every other kind of
//! route request, each is answered once, with its own opaque, header serialization, code, remark
//! and body, as the same request sent alone is; one-way ones are never answered.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::checks::body_text;
use crate::common::*;
use namesrv::protocol::{ExtFields, RemotingCommand, SerializeType};

/// The requests of the mix, by name: lane queries and the ones that go the general way.
fn mix() -> Vec<(&'static str, RemotingCommand)> {
    let binary = RemotingCommand { serialize_type: SerializeType::RocketMq, ..route_request("T3", 479) };
    let no_topic = RemotingCommand::request(105, Some(ExtFields::new().with("other", "x")));
    let zoned = RemotingCommand::request(
        105,
        Some(ExtFields::new().with("topic", "T1").with("__ZONE_MODE", "true").with("__ZONE_NAME", "nowhere")),
    );
    vec![
        ("found", route_request("T1", 479)),
        ("missing", route_request("NoSuchTopic", 479)),
        ("binary", binary),
        ("fastjson", route_request("T2", 0)),
        ("no-topic", no_topic),
        ("no-ext-fields", RemotingCommand::request(105, None)),
        ("zoned", zoned),
        ("found-again", route_request("T3", 479)),
    ]
}

in_both_topologies! {
    fn pipelined_route_queries_are_each_answered_as_when_sent_alone() {
        let server = TestServer::start();
        let mut broker = server.client();
        assert_eq!(broker.register(&Broker::new("c", "b1", 0, "127.0.0.1:1").topics(&["T1", "T2"])).code, 0);
        assert_eq!(broker.register(&Broker::new("d", "b2", 0, "127.0.0.1:2").topics(&["T3", "T4"])).code, 0);
        let alone: HashMap<&str, RemotingCommand> =
            mix().into_iter().map(|(name, request)| (name, server.client().call(request))).collect();
        assert_eq!(alone["found"].code, 0);
        assert!(body_text(&alone["found"]).contains("127.0.0.1:1"), "{}", body_text(&alone["found"]));
        assert_eq!(alone["missing"].code, 17);
        assert!(alone["missing"].remark.as_deref().unwrap_or("").contains("NoSuchTopic"));
        assert_eq!(alone["binary"].serialize_type, SerializeType::RocketMq);
        assert_eq!(alone["no-topic"].remark.as_deref(), Some("the custom field <topic> is null"));
        assert!(alone["no-ext-fields"].remark.as_deref().unwrap_or("").contains("topic: null"));

        let mut client = server.client();
        let mut requests = Vec::new();
        for round in 0..20 {
            for (name, request) in mix() {
                requests.push((name, request));
            }
            let oneway = RemotingCommand { flag: 2, ..route_request(if round % 2 == 0 { "T1" } else { "Nope" }, 479) };
            requests.push(("oneway", oneway));
        }
        let commands: Vec<RemotingCommand> = requests.iter().map(|(_, r)| r.clone()).collect();
        let opaques = client.send_batch(&commands);
        let mut expected: HashMap<i32, &str> =
            opaques.iter().zip(&requests).filter(|(_, (n, _))| *n != "oneway").map(|(o, (n, _))| (*o, *n)).collect();
        while !expected.is_empty() {
            let reply = client.read_frame().expect("every answered request is answered");
            let name = expected.remove(&reply.opaque).unwrap_or_else(|| panic!("unexpected or repeated reply {reply:?}"));
            let want = &alone[name];
            let got = (reply.code, &reply.remark, &reply.body, reply.serialize_type, reply.is_response());
            assert_eq!(got, (want.code, &want.remark, &want.body, want.serialize_type, true), "{name}");
        }
        client.expect_silence(Duration::from_millis(300));
    }
}
