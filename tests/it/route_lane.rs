//! Every route query takes the route lane (answered from the batch straight onto its
//! connection, no request future each): pipelined on one connection with every other kind of
//! route request, each is answered once, with its own opaque, header serialization, code, remark
//! and body, as the same request sent alone is; one-way ones are never answered. With access
//! control on, route queries are admitted first and take the same lane: the same replies and
//! the same metrics, query by query.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use crate::common::checks::body_text;
use crate::common::http::{get, sample};
use crate::common::security::{signed, write_accounts, ACCOUNTS};
use crate::common::*;
use namesrv::protocol::{ExtFields, RemotingCommand, SerializeType};
use namesrv::settings::AclProtect;

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
    fn pipelined_route_queries_are_each_answered_as_when_sent_alone(topology) {
        let server = topology.server();
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

/// How a server checks route queries: off; on without protecting them (the codec still reads
/// plain ones straight off their frames); on protecting every request (each is decoded, its
/// signature checked, then it takes the lane).
const ACCESS: [Option<AclProtect>; 3] = [None, Some(AclProtect::Broker), Some(AclProtect::All)];

/// A server with access control at `access` (`None`: off), serving HTTP for its metrics, with
/// brokers b1 (T1, T2) and b2 (T3, T4) registered (signed where registrations are protected).
fn routed_server(access: Option<AclProtect>) -> (TestServer, SocketAddr) {
    let dir = temp_dir();
    let accounts = write_accounts(&dir, ACCOUNTS);
    let server = TestServer::with_http(|s| {
        s.acl.acl_enabled = access.is_some();
        s.acl.acl_accounts_file = accounts.display().to_string();
        s.acl.acl_protect = access.unwrap_or(AclProtect::Admin);
    });
    let mut broker = server.client();
    for b in [
        Broker::new("c", "b1", 0, "127.0.0.1:1").topics(&["T1", "T2"]),
        Broker::new("d", "b2", 0, "127.0.0.1:2").topics(&["T3", "T4"]),
    ] {
        let request = b.register_request();
        let request = if access.is_some() { signed(request, "any-broker-key", "any-broker-secret") } else { request };
        assert_eq!(broker.call(request).code, 0);
    }
    let http = server.http_addr.unwrap();
    (server, http)
}

/// The route requests of the mix sent where every request must be signed (`signing`): signed by
/// the client account, and without the one that has no extFields (it cannot be signed).
fn mix_signed(signing: bool) -> Vec<(&'static str, RemotingCommand)> {
    mix()
        .into_iter()
        .filter(|(name, _)| !(signing && *name == "no-ext-fields"))
        .map(|(name, request)| (name, if signing { signed(request, "app", "app-secret") } else { request }))
        .collect()
}

/// What a reply says, opaque aside.
type Said = (i32, Option<String>, Option<Vec<u8>>, SerializeType);

/// What a server was seen to do: each reply by request name, and its route metrics.
type Observed = (Vec<(String, Said)>, Vec<(String, f64)>);

fn said(reply: &RemotingCommand) -> Said {
    (reply.code, reply.remark.clone(), reply.body.as_ref().map(|b| b.to_vec()), reply.serialize_type)
}

/// The route query series of a server's metrics: requests by result, their durations counted,
/// cache hits and misses.
fn route_series(http: SocketAddr) -> Vec<(String, f64)> {
    let text = get(http, "/metrics").body;
    let results = ["SUCCESS", "SYSTEM_ERROR", "TOPIC_NOT_EXIST", "NO_PERMISSION", "ONEWAY"];
    let mut names: Vec<String> = results
        .iter()
        .map(|r| format!(r#"namesrv_requests_total{{code="GET_ROUTEINFO_BY_TOPIC",result="{r}"}}"#))
        .collect();
    names.push(r#"namesrv_request_duration_seconds_count{code="GET_ROUTEINFO_BY_TOPIC"}"#.into());
    names.extend(["namesrv_route_cache_hits_total".into(), "namesrv_route_cache_misses_total".into()]);
    names.into_iter().map(|name| (name.clone(), sample(&text, &name).unwrap_or(0.0))).collect()
}

/// Sends `mix` one by one, then pipelined with one-way copies, to a fresh server at `access`:
/// the replies by name, and its route metrics after.
fn replies_and_metrics(access: Option<AclProtect>, mix: impl Fn() -> Vec<(&'static str, RemotingCommand)>) -> Observed {
    let (server, http) = routed_server(access);
    let mut client = server.client();
    let mut replies: Vec<(String, Said)> =
        mix().into_iter().map(|(name, request)| (format!("alone {name}"), said(&client.call(request)))).collect();
    let mut requests = mix();
    requests.extend(mix().into_iter().map(|(name, request)| (name, RemotingCommand { flag: 2, ..request })));
    let commands: Vec<RemotingCommand> = requests.iter().map(|(_, r)| r.clone()).collect();
    let opaques = client.send_batch(&commands);
    let mut pending: HashMap<i32, &str> =
        opaques.iter().zip(&requests).filter(|(_, (_, r))| !r.is_oneway()).map(|(o, (n, _))| (*o, *n)).collect();
    let mut pipelined = Vec::new();
    while !pending.is_empty() {
        let reply = client.read_frame().expect("every answered request is answered");
        let name = pending.remove(&reply.opaque).unwrap_or_else(|| panic!("unexpected or repeated reply {reply:?}"));
        pipelined.push((format!("pipelined {name}"), said(&reply)));
    }
    client.expect_silence(Duration::from_millis(200));
    pipelined.sort_by(|a, b| (&a.0, a.1 .0, &a.1 .1).cmp(&(&b.0, b.1 .0, &b.1 .1)));
    replies.extend(pipelined);
    (replies, route_series(http))
}

#[test]
fn route_queries_get_the_same_replies_and_metrics_with_access_control_on_and_off() {
    for access in ACCESS.into_iter().flatten() {
        let signing = access == AclProtect::All;
        let (open, open_metrics) = replies_and_metrics(None, || {
            mix_signed(false).into_iter().filter(|(n, _)| !signing || *n != "no-ext-fields").collect()
        });
        assert!(open_metrics.iter().any(|(name, n)| name.contains("ONEWAY") && *n > 0.0), "{open_metrics:?}");
        let (checked, checked_metrics) = replies_and_metrics(Some(access), || mix_signed(signing));
        assert_eq!(checked, open, "replies at {access:?}");
        assert_eq!(checked_metrics, open_metrics, "metrics at {access:?}");
    }
}
