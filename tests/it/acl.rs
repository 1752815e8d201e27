//! Access control over real TCP: every protection level against every role and code class,
//! what a refused peer sees, broker identities bound to their credentials, and reloading the
//! accounts file. (Log lines and SIGHUP: `acl_process`.)

use std::time::Duration;

use crate::common::http::security_reloads;
use crate::common::requests::request;
use crate::common::security::{signed, write_accounts, ACCOUNTS};
use crate::common::*;
use namesrv::protocol::command::FLAG_ONEWAY;
use namesrv::protocol::RemotingCommand;
use namesrv::settings::AclProtect;

const NO_PERMISSION: i32 = 16;

/// A server with access control at `protect`, its accounts file in a fresh directory, serving
/// HTTP for its reload counters.
fn acl_server(protect: AclProtect) -> (TestServer, std::path::PathBuf) {
    let dir = temp_dir();
    let accounts = write_accounts(&dir, ACCOUNTS);
    let server = TestServer::with_http(|s| {
        s.acl.acl_enabled = true;
        s.acl.acl_accounts_file = accounts.display().to_string();
        s.acl.acl_protect = protect;
        s.acl.security_reload_interval_ms = 50;
        s.acl.security_reload_settle_ms = 0;
    });
    (server, dir)
}

/// (access key, secret) of each caller; `None` sends unsigned.
const CALLERS: [Option<(&str, &str)>; 4] =
    [None, Some(("ops", "ops-secret-1")), Some(("broker-a-key", "broker-a-secret")), Some(("app", "app-secret"))];

fn as_caller(cmd: RemotingCommand, caller: Option<(&str, &str)>) -> RemotingCommand {
    match caller {
        Some((key, secret)) => signed(cmd, key, secret),
        None => cmd,
    }
}

/// One request of each code class: an admin write (PUT_KV_CONFIG), the config read only
/// admins may do (GET_NAMESRV_CONFIG), a broker's own (BROKER_HEARTBEAT for broker-a), and a
/// route query.
fn class_requests() -> [RemotingCommand; 4] {
    [
        request(100, &[("namespace", "ns"), ("key", "k"), ("value", "v")]),
        RemotingCommand::request(319, None),
        request(904, &[("clusterName", "c"), ("brokerAddr", "127.0.0.1:1"), ("brokerName", "broker-a")]),
        route_request("NoSuchTopic", 479),
    ]
}

#[test]
fn every_level_refuses_exactly_what_it_protects_from_every_role() {
    // Rows: unsigned, admin, broker (for broker-a), client; columns: the classes above.
    // 'R' refused with NO_PERMISSION, '.' answered.
    let expected = [
        (AclProtect::Admin, ["RR..", "....", "RR..", "RR.."]),
        (AclProtect::Broker, ["RRR.", "....", "RR..", "RRR."]),
        (AclProtect::All, ["RRRR", "....", "RR..", "RRR."]),
    ];
    for (level, rows) in expected {
        let (server, _dir) = acl_server(level);
        for (caller, row) in CALLERS.iter().zip(rows) {
            let mut client = server.client();
            let seen: String = class_requests()
                .into_iter()
                .map(|req| if client.call(as_caller(req, *caller)).code == NO_PERMISSION { 'R' } else { '.' })
                .collect();
            assert_eq!(seen, row, "level {level}, caller {:?}", caller.map(|c| c.0));
        }
    }
}

#[test]
fn a_refused_peer_gets_no_permission_with_a_remark_saying_what_was_wrong() {
    let (server, _dir) = acl_server(AclProtect::Admin);
    let mut client = server.client();
    let put = || request(100, &[("namespace", "ns"), ("key", "k"), ("value", "v")]);
    let cases = [
        (put(), "no AccessKey: request code 100 needs credentials (access control is on)"),
        (signed(put(), "nobody", "x"), "signature refused for AccessKey nobody (unknown key or wrong secret)"),
        (signed(put(), "ops", "not-the-secret"), "signature refused for AccessKey ops (unknown key or wrong secret)"),
        (request(100, &[("namespace", "ns"), ("AccessKey", "ops")]), "no Signature for AccessKey ops"),
        (signed(put(), "app", "app-secret"), "AccessKey app (role client) may not send request code 100"),
    ];
    for (req, remark) in cases {
        let resp = client.call(req);
        assert_eq!((resp.code, resp.remark.as_deref()), (NO_PERMISSION, Some(remark)));
    }
    assert_eq!(client.call(signed(put(), "ops", "ops-secret-1")).code, 0, "the admin's signed request");
}

#[test]
fn a_replayed_request_with_one_field_changed_is_refused_and_changes_nothing() {
    let (server, _dir) = acl_server(AclProtect::Admin);
    let mut client = server.client();
    let original = signed(request(100, &[("namespace", "ns"), ("key", "k"), ("value", "v1")]), "ops", "ops-secret-1");
    assert_eq!(client.call(original.clone()).code, 0);
    let mut replay = original.clone();
    replay.ext_fields.as_mut().unwrap().insert("value", "v2");
    let resp = client.call(replay);
    assert_eq!(
        (resp.code, resp.remark.as_deref()),
        (NO_PERMISSION, Some("signature refused for AccessKey ops (unknown key or wrong secret)"))
    );
    let mut body_added = original;
    body_added.body = Some(b"extra".to_vec().into());
    assert_eq!(client.call(body_added).code, NO_PERMISSION, "the body is signed too");
    let value = client.call(request(101, &[("namespace", "ns"), ("key", "k")]));
    assert_eq!(value.ext("value"), Some("v1"));
}

#[test]
fn a_refused_oneway_request_is_dropped_unanswered() {
    let (server, _dir) = acl_server(AclProtect::Admin);
    let mut client = server.client();
    let mut oneway = request(100, &[("namespace", "ns"), ("key", "k"), ("value", "v")]);
    oneway.flag |= FLAG_ONEWAY;
    client.send(&oneway);
    client.expect_silence(Duration::from_millis(300));
    assert_eq!(client.call(request(101, &[("namespace", "ns"), ("key", "k")])).code, 22, "nothing stored");
}

#[test]
fn access_control_settings_cannot_be_changed_over_the_wire_even_by_an_admin() {
    let (server, _dir) = acl_server(AclProtect::Admin);
    let mut client = server.client();
    for body in ["acl_enabled=false", "acl_protect=admin", "tls_mode=disabled", "acl_accounts_file=/tmp/x"] {
        let update =
            signed(RemotingCommand::request(318, None).with_body(body.as_bytes().to_vec()), "ops", "ops-secret-1");
        let resp = client.call(update);
        assert_eq!((resp.code, resp.remark.as_deref()), (NO_PERMISSION, Some("Can not update config in black list.")));
    }
    assert_eq!(client.call(request(100, &[("namespace", "n"), ("key", "k"), ("value", "v")])).code, NO_PERMISSION);
    let config = client.call(signed(RemotingCommand::request(319, None), "ops", "ops-secret-1"));
    let text = String::from_utf8(config.body.unwrap().to_vec()).unwrap();
    assert!(text.contains("acl_enabled=true") && text.contains("acl_protect=admin"), "{text}");
    for (_, secret) in CALLERS.iter().flatten() {
        assert!(!text.contains(secret), "GET_NAMESRV_CONFIG never shows a secret:\n{text}");
    }
    let settings = text.lines().filter_map(|l| l.split_once('='));
    assert!(settings.filter(|(k, _)| k.contains("secret")).all(|(k, _)| k.ends_with("_file")), "{text}");
}

/// REGISTER_TOPIC_IN_NAMESRV for `topic` with queues on `broker`.
fn register_topic(topic: &str, broker: &str) -> RemotingCommand {
    let body = format!(
        r#"{{"brokerDatas":[],"queueDatas":[{{"brokerName":"{broker}","readQueueNums":4,"writeQueueNums":4,"perm":6,"topicSysFlag":0}}]}}"#
    );
    request(217, &[("topic", topic)]).with_body(body.into_bytes())
}

#[test]
fn a_broker_account_registers_and_speaks_only_for_the_brokers_it_lists() {
    let (server, _dir) = acl_server(AclProtect::Broker);
    let mut conn = server.client();
    let own = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    assert_eq!(conn.call(signed(own.register_request(), "broker-a-key", "broker-a-secret")).code, 0);
    let other = Broker::new("c", "broker-b", 0, "127.0.0.1:2").topics(&["T1", "T2"]);
    let resp = conn.call(signed(other.register_request(), "broker-a-key", "broker-a-secret"));
    assert_eq!(
        (resp.code, resp.remark.as_deref()),
        (NO_PERMISSION, Some("AccessKey broker-a-key may not act for broker broker-b"))
    );
    assert_eq!(conn.call(register_topic("T3", "broker-a")).code, NO_PERMISSION, "217 unsigned");
    assert_eq!(conn.call(signed(register_topic("T3", "broker-a"), "broker-a-key", "broker-a-secret")).code, 0);
    let resp = conn.call(signed(register_topic("T4", "broker-b"), "broker-a-key", "broker-a-secret"));
    assert_eq!(
        (resp.code, resp.remark.as_deref()),
        (NO_PERMISSION, Some("AccessKey broker-a-key may not act for broker broker-b"))
    );
    assert_eq!(conn.call(signed(other.identity_request(104), "broker-a-key", "broker-a-secret")).code, NO_PERMISSION);
    assert_eq!(conn.call(own.register_request()).code, NO_PERMISSION, "an unsigned registration");
    let mut client = server.client();
    assert!(client.route("T3").is_ok() && client.route("T4").is_err());
    assert!(client.cluster_info()["brokerAddrTable"].get("broker-b").is_none());
}

#[test]
fn a_live_brokers_name_and_address_cannot_be_taken_by_another_account() {
    let (server, _dir) = acl_server(AclProtect::Broker);
    let mut owner = server.client();
    let broker_a = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    assert_eq!(owner.call(signed(broker_a.register_request(), "broker-a-key", "broker-a-secret")).code, 0);
    let mut impostor = server.client();
    let as_impostor = |cmd| signed(cmd, "any-broker-key", "any-broker-secret");
    let same_name = Broker::new("c", "broker-a", 1, "127.0.0.1:9").topics(&["T1", "T2"]);
    let resp = impostor.call(as_impostor(same_name.register_request()));
    assert_eq!(
        (resp.code, resp.remark.as_deref()),
        (NO_PERMISSION, Some("broker broker-a at 127.0.0.1:1 is live under another AccessKey"))
    );
    let same_addr = Broker::new("c", "broker-z", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    assert_eq!(impostor.call(as_impostor(same_addr.register_request())).code, NO_PERMISSION);
    assert_eq!(impostor.call(as_impostor(broker_a.identity_request(104))).code, NO_PERMISSION, "nor unregister it");
    let mut reader = server.client();
    assert_eq!(route_addrs(&reader.route("T1").unwrap(), "broker-a"), serde_json::json!({"0": "127.0.0.1:1"}));
    let elsewhere = Broker::new("c", "broker-z", 0, "127.0.0.1:3").topics(&["T1", "T2"]);
    assert_eq!(impostor.call(as_impostor(elsewhere.register_request())).code, 0, "its own broker is fine");
    // An admin may remove any broker; then the name is free.
    assert_eq!(impostor.call(signed(broker_a.identity_request(104), "ops", "ops-secret-1")).code, 0);
    assert_eq!(impostor.call(as_impostor(same_name.register_request())).code, 0);
}

/// A server protecting broker codes, with a third broker account that lists broker-b only,
/// and a short expiry scan.
fn acl_server_with_broker_b() -> (TestServer, std::path::PathBuf) {
    let dir = temp_dir();
    let extra = "\n[[accounts]]\naccess_key = \"broker-b-key\"\nsecret_key = \"broker-b-secret\"\nrole = \"broker\"\nbrokers = [\"broker-b\"]\n";
    let accounts = write_accounts(&dir, &format!("{ACCOUNTS}{extra}"));
    let server = TestServer::with(|s| {
        s.acl.acl_enabled = true;
        s.acl.acl_accounts_file = accounts.display().to_string();
        s.acl.acl_protect = AclProtect::Broker;
        s.routing.scan_interval_ms = 100;
    });
    (server, dir)
}

#[test]
fn another_brokers_account_can_neither_keep_a_broker_alive_nor_read_its_data_version() {
    let (server, _dir) = acl_server_with_broker_b();
    let mut owner = server.client();
    let mut broker_a = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    broker_a.heartbeat_timeout_ms = Some(1_500);
    assert_eq!(owner.call(signed(broker_a.register_request(), "broker-a-key", "broker-a-secret")).code, 0);
    // Signed for broker-b, which the account may act for, but naming broker-a's address.
    let as_b = |code| {
        let mut cmd = Broker::new("c", "broker-b", 0, "127.0.0.1:1").identity_request(code);
        if code == 322 {
            cmd = cmd.with_body(br#"{"counter":1,"stateVersion":0,"timestamp":1700000000000}"#.to_vec());
        }
        signed(cmd, "broker-b-key", "broker-b-secret")
    };
    let mut impostor = server.client();
    let beat = impostor.call(as_b(904));
    assert_eq!(
        (beat.code, beat.remark.as_deref()),
        (NO_PERMISSION, Some("broker broker-a at 127.0.0.1:1 is live under another AccessKey"))
    );
    let query = impostor.call(as_b(322));
    assert_eq!((query.code, query.body.is_none()), (NO_PERMISSION, true), "no dataVersion read: {:?}", query.remark);
    // Its own account heartbeats it; an admin may too.
    assert_eq!(owner.call(signed(broker_a.identity_request(904), "broker-a-key", "broker-a-secret")).code, 0);
    let query = broker_a
        .identity_request(322)
        .with_body(br#"{"counter":1,"stateVersion":0,"timestamp":1700000000000}"#.to_vec());
    let own_query = owner.call(signed(query, "broker-a-key", "broker-a-secret"));
    assert_eq!((own_query.code, own_query.body.is_some()), (0, true), "its own account reads the dataVersion");
    assert_eq!(impostor.call(signed(broker_a.identity_request(904), "ops", "ops-secret-1")).code, 0);
    // Heartbeats from the other account keep nothing alive: the silent broker expires.
    let mut reader = server.client();
    assert!(
        eventually(Duration::from_secs(10), || {
            let code = impostor.call(as_b(904)).code;
            let gone = reader.route("T1").is_err();
            assert!(gone || code == NO_PERMISSION, "refused while broker-a is live, got {code}");
            gone
        }),
        "broker-a expired although another account kept heartbeating its address"
    );
}

#[test]
fn a_newer_state_version_from_another_account_cannot_take_a_live_brokers_id() {
    let (server, _dir) = acl_server(AclProtect::Broker);
    let mut owner = server.client();
    let broker_a = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    assert_eq!(owner.call(signed(broker_a.register_request(), "broker-a-key", "broker-a-secret")).code, 0);
    let mut newer = Broker::new("c", "broker-a", 0, "127.0.0.1:9").topics(&["T1", "T2"]);
    newer.data_version.state_version = 1_000;
    let mut impostor = server.client();
    let resp = impostor.call(signed(newer.register_request(), "any-broker-key", "any-broker-secret"));
    assert_eq!(resp.code, NO_PERMISSION, "{:?}", resp.remark);
    let mut reader = server.client();
    assert_eq!(route_addrs(&reader.route("T1").unwrap(), "broker-a"), serde_json::json!({"0": "127.0.0.1:1"}));
    assert_eq!(owner.call(signed(broker_a.identity_request(904), "broker-a-key", "broker-a-secret")).code, 0);
}

#[test]
fn another_account_reusing_a_live_brokers_address_does_not_close_its_connection() {
    let (server, _dir) = acl_server(AclProtect::Broker);
    let mut owner = server.client();
    let broker_a = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    assert_eq!(owner.call(signed(broker_a.register_request(), "broker-a-key", "broker-a-secret")).code, 0);
    let reuse = Broker::new("other", "broker-z", 0, "127.0.0.1:1").topics(&["T3", "T4"]);
    let mut impostor = server.client();
    let resp = impostor.call(signed(reuse.register_request(), "any-broker-key", "any-broker-secret"));
    assert_eq!(resp.code, NO_PERMISSION, "{:?}", resp.remark);
    assert!(!owner.closed_by_server(Duration::from_millis(300)), "the victim's connection stays open");
    assert_eq!(owner.call(signed(broker_a.identity_request(904), "broker-a-key", "broker-a-secret")).code, 0);
    let mut reader = server.client();
    assert_eq!(route_addrs(&reader.route("T1").unwrap(), "broker-a"), serde_json::json!({"0": "127.0.0.1:1"}));
    assert!(reader.route("T3").is_err());
}

#[test]
fn a_signed_heartbeat_or_unregistration_replayed_over_another_connection_is_refused() {
    let (server, _dir) = acl_server(AclProtect::Broker);
    let mut owner = server.client();
    let broker_a = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    assert_eq!(owner.call(signed(broker_a.register_request(), "broker-a-key", "broker-a-secret")).code, 0);
    // What an eavesdropper saw on the wire: requests the broker signed.
    let heartbeat = signed(broker_a.identity_request(904), "broker-a-key", "broker-a-secret");
    let unregister = signed(broker_a.identity_request(104), "broker-a-key", "broker-a-secret");
    let mut replayer = server.client();
    for captured in [&heartbeat, &unregister] {
        let resp = replayer.call(captured.clone());
        assert_eq!(
            (resp.code, resp.remark.as_deref()),
            (
                NO_PERMISSION,
                Some("broker broker-a at 127.0.0.1:1 registered over another connection: register again over this one")
            )
        );
    }
    let mut reader = server.client();
    assert!(reader.route("T1").is_ok(), "the broker stays routed");
    assert_eq!(owner.call(heartbeat.clone()).code, 0, "over its own connection the heartbeat counts");
    assert_eq!(owner.call(unregister).code, 0, "and so does the unregistration");
    assert!(reader.route("T1").is_err(), "unregistered over the connection it registered on");
}

/// A broker of broker-a's account registered over `owner`, heartbeating every 200 ms with a
/// 1.5 s timeout, and its registration as an eavesdropper captured it.
fn heartbeating_broker_a(server: &TestServer) -> (Client, Broker, RemotingCommand) {
    let mut owner = server.client();
    let mut broker_a = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    broker_a.heartbeat_timeout_ms = Some(1_500);
    let registration = signed(broker_a.register_request(), "broker-a-key", "broker-a-secret");
    assert_eq!(owner.call(registration.clone()).code, 0);
    (owner, broker_a, registration)
}

#[test]
fn a_registration_replayed_over_another_connection_does_not_move_the_broker_off_its_own() {
    let (server, _dir) = acl_server_with_broker_b();
    let (mut owner, broker_a, registration) = heartbeating_broker_a(&server);
    let heartbeat = signed(broker_a.identity_request(904), "broker-a-key", "broker-a-secret");
    let mut replayer = Client::connect_from("127.0.0.2", server.addr);
    let mut reader = server.client();
    let began = std::time::Instant::now();
    while began.elapsed() < Duration::from_secs(3) {
        let replay = replayer.call(registration.clone());
        assert_eq!(
            (replay.code, replay.remark.as_deref()),
            (NO_PERMISSION, Some("broker broker-a at 127.0.0.1:1 is live over another connection: it moves once that connection closes or the broker is silent for half its timeout"))
        );
        assert_eq!(owner.call(heartbeat.clone()).code, 0, "the broker's own heartbeats count throughout");
        assert!(reader.route("T1").is_ok(), "the broker stays routed");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Once its connection closes, the broker registers over a new one.
    drop(owner);
    assert!(eventually(Duration::from_secs(5), || reader.route("T1").is_err()), "the broker went with its connection");
    let mut reconnected = server.client();
    assert_eq!(reconnected.call(registration).code, 0);
    assert_eq!(reconnected.call(heartbeat).code, 0);
}

#[test]
fn a_broker_silent_for_half_its_timeout_registers_over_a_new_connection() {
    let (server, _dir) = acl_server_with_broker_b();
    let (_owner, broker_a, registration) = heartbeating_broker_a(&server);
    // Its old connection stays open but carries nothing (a connection lost without a FIN).
    let mut reconnected = server.client();
    assert_eq!(reconnected.call(registration.clone()).code, NO_PERMISSION, "heard from just now");
    std::thread::sleep(Duration::from_millis(900));
    assert_eq!(reconnected.call(registration).code, 0, "silent past half its timeout, it moves");
    let heartbeat = signed(broker_a.identity_request(904), "broker-a-key", "broker-a-secret");
    assert_eq!(reconnected.call(heartbeat).code, 0);
    let mut reader = server.client();
    assert!(reader.route("T1").is_ok());
}

#[test]
fn a_signed_registration_resent_under_another_code_or_with_an_injected_field_is_refused() {
    let (server, _dir) = acl_server(AclProtect::Broker);
    let mut owner = server.client();
    let broker_a = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    let registration = signed(broker_a.register_request(), "broker-a-key", "broker-a-secret");
    assert_eq!(owner.call(registration.clone()).code, 0);
    // The same fields, body and signature under UNREGISTER_BROKER, then BROKER_HEARTBEAT: the
    // signature covers neither the code nor the keys.
    for code in [104, 904] {
        let mut swapped = registration.clone();
        swapped.code = code;
        let resp = owner.call(swapped);
        assert_eq!(resp.code, NO_PERMISSION, "code {code}: {:?}", resp.remark);
        assert_eq!(
            resp.remark.as_deref(),
            Some(format!("malformed signed request: request code {code} has no field haServerAddr").as_str())
        );
    }
    // A field with an empty value adds nothing to the signed content.
    let mut injected = signed(broker_a.identity_request(104), "broker-a-key", "broker-a-secret");
    injected.ext_fields.as_mut().unwrap().insert("brokerIdx", "");
    let resp = owner.call(injected);
    assert_eq!(resp.code, NO_PERMISSION, "{:?}", resp.remark);
    let mut reader = server.client();
    assert!(reader.route("T1").is_ok(), "the broker stays routed");
    assert_eq!(owner.call(signed(broker_a.identity_request(904), "broker-a-key", "broker-a-secret")).code, 0);
}

#[test]
fn a_closed_connection_frees_the_name_for_another_account() {
    let (server, _dir) = acl_server(AclProtect::Broker);
    let broker_a = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    let mut owner = server.client();
    assert_eq!(owner.call(signed(broker_a.register_request(), "broker-a-key", "broker-a-secret")).code, 0);
    drop(owner);
    let mut next = server.client();
    assert!(eventually(Duration::from_secs(5), || next.route("T1").is_err()), "the broker went with its connection");
    assert_eq!(next.call(signed(broker_a.register_request(), "any-broker-key", "any-broker-secret")).code, 0);
}

#[test]
fn a_client_account_reads_routes_and_lists_and_nothing_else() {
    let (server, _dir) = acl_server(AclProtect::All);
    let mut broker = server.client();
    let broker_a = Broker::new("c", "broker-a", 0, "127.0.0.1:1").topics(&["T1", "T2"]);
    assert_eq!(broker.call(signed(broker_a.register_request(), "broker-a-key", "broker-a-secret")).code, 0);
    let mut app = server.client();
    let as_app = |cmd| signed(cmd, "app", "app-secret");
    let route = app.call(as_app(route_request("T1", 479)));
    assert_eq!(route.code, 0, "{:?}", route.remark);
    for code in [106, 206] {
        assert_eq!(app.call(as_app(RemotingCommand::request(code, None))).code, 0, "{code}");
    }
    assert_eq!(app.call(as_app(request(224, &[("cluster", "c")]))).code, 0);
    let writes = [
        request(100, &[("namespace", "n"), ("key", "k"), ("value", "v")]),
        request(216, &[("topic", "T1")]),
        request(205, &[("brokerName", "broker-a")]),
        RemotingCommand::request(318, None).with_body(b"enableTopicList=false".to_vec()),
        RemotingCommand::request(319, None),
        broker_a.identity_request(104),
        Broker::new("c", "broker-q", 0, "127.0.0.1:7").topics(&["Q1", "Q2"]).register_request(),
    ];
    for req in writes {
        let code = req.code;
        assert_eq!(app.call(as_app(req)).code, NO_PERMISSION, "code {code}");
    }
    assert_eq!(app.call(route_request("T1", 479)).code, NO_PERMISSION, "unsigned reads are refused at `all`");
    assert!(server.client().call(as_app(route_request("T1", 479))).body.is_some(), "the route is still there");
}

#[test]
fn signed_requests_to_a_server_without_access_control_work_as_before() {
    let server = TestServer::start();
    let mut client = server.client();
    let put = signed(request(100, &[("namespace", "ns"), ("key", "k"), ("value", "v")]), "anyone", "anything");
    assert_eq!(client.call(put).code, 0);
    assert_eq!(client.call(request(100, &[("namespace", "ns"), ("key", "k"), ("value", "w")])).code, 0);
}

#[test]
fn a_changed_accounts_file_is_applied_and_a_bad_one_keeps_the_accounts_in_force() {
    let (server, dir) = acl_server(AclProtect::Admin);
    let mut client = server.client();
    let put = |key: &str, secret: &str| {
        signed(request(100, &[("namespace", "n"), ("key", "k"), ("value", "v")]), key, secret)
    };
    assert_eq!(client.call(put("ops", "ops-secret-1")).code, 0);
    assert_eq!(client.call(put("ops2", "fresh")).code, NO_PERMISSION);
    write_accounts(&dir, "[[accounts]]\naccess_key = \"ops2\"\nsecret_key = \"fresh\"\nrole = \"admin\"\n");
    assert!(eventually(Duration::from_secs(5), || client.call(put("ops2", "fresh")).code == 0), "the new key works");
    assert_eq!(client.call(put("ops", "ops-secret-1")).code, NO_PERMISSION, "the removed key does not");
    let refused = || security_reloads(server.http_addr.unwrap(), "accounts", "refused");
    let before = refused();
    write_accounts(&dir, "[[accounts]]\naccess_key = \"ops3\"\nsecret_key = \"\"\nrole = \"admin\"\n");
    assert!(eventually(Duration::from_secs(5), || refused() > before), "the bad file was read and refused");
    assert_eq!(client.call(put("ops2", "fresh")).code, 0, "a bad file leaves the accounts in force");
}

#[test]
fn with_broker_addresses_bound_to_the_peer_a_registration_naming_another_host_is_refused() {
    let dir = temp_dir();
    let accounts = write_accounts(&dir, ACCOUNTS);
    let server = TestServer::with(|s| {
        s.acl.acl_enabled = true;
        s.acl.acl_accounts_file = accounts.display().to_string();
        s.acl.acl_protect = AclProtect::Broker;
        s.acl.acl_broker_addr_matches_peer = true;
    });
    let mut client = server.client();
    let register = |addr: &str| {
        let broker = Broker::new("c", "broker-a", 0, addr).topics(&["T1", "T2"]);
        signed(broker.register_request(), "broker-a-key", "broker-a-secret")
    };
    // The boundary shift of a captured registration: "...:10911" + "0" signs as "...:1091" + "10"
    // (an address on another host), and a plain other host.
    for addr in ["10.9.9.9:10911", "broker-a.example:10911"] {
        let resp = client.call(register(addr));
        let remark =
            format!("brokerAddr {addr} is not on this connection's address 127.0.0.1 (acl_broker_addr_matches_peer)");
        assert_eq!((resp.code, resp.remark.as_deref()), (NO_PERMISSION, Some(remark.as_str())));
    }
    assert_eq!(client.call(register("127.0.0.1:10911")).code, 0, "the broker's own address");
}
