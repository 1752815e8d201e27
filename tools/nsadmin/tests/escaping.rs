//! nsadmin against a server that puts control characters in what it sends (a terminal escape that
//! clears the screen, a carriage return and a line break that fake a line): everything printed as
//! text shows them escaped (`\u{1b}`), on stdout and stderr alike; JSON carries them as they are.

mod common;

use std::sync::{Arc, OnceLock};

use common::*;
use namesrv::protocol::{ExtFields, RemotingCommand, ResponseCode};
use serde_json::json;

/// Asserts `text` holds no control character but the line breaks and tabs of nsadmin's own layout.
fn assert_no_raw_control(text: &str) {
    let raw: Vec<char> = text.chars().filter(|c| c.is_control() && !matches!(c, '\n' | '\t')).collect();
    assert!(raw.is_empty(), "raw control characters {raw:?} in {text:?}");
}

/// A SUCCESS answer with these extFields.
fn with_fields(fields: &[(&str, &str)]) -> RemotingCommand {
    let ext: ExtFields = fields.iter().copied().collect();
    RemotingCommand { ext_fields: Some(ext), ..RemotingCommand::response(ResponseCode::Success, None) }
}

/// A controller stand-in answering CONTROLLER_GET_METADATA_INFO (1005) with a group, a leader
/// and peers holding control characters, the leader id `n0` followed by `suffix`.
fn hostile_controller(suffix: &'static str) -> String {
    stand_in(move |req| match req.code {
        1005 => with_fields(&[
            ("controllerLeaderId", &format!("n0{suffix}")),
            ("controllerLeaderAddress", "10.0.0.5:9878\x1b[31m"),
            ("isLeader", "true"),
            ("peers", "n0:10.0.0.5:9878\x1b[31m;n1:x\ry"),
            ("group", "g\x1b]0;owned\x07"),
        ]),
        _ => RemotingCommand::response(ResponseCode::RequestCodeNotSupported, None),
    })
}

#[test]
fn controller_metadata_shows_the_controllers_control_characters_escaped() {
    let addr = hostile_controller("\x1b[2J\r\nfake");
    let text = expect_exit(&nsadmin(&["getControllerMetaData", "-a", &addr]), 0);
    assert_no_raw_control(&text);
    assert_eq!(
        text,
        "#ControllerGroup\tg\\u{1b}]0;owned\\u{7}\n\
         #ControllerLeaderId\tn0\\u{1b}[2J\\u{d}\\u{a}fake\n\
         #ControllerLeaderAddress\t10.0.0.5:9878\\u{1b}[31m\n\
         #Peer:\tn0:10.0.0.5:9878\\u{1b}[31m\n\
         #Peer:\tn1:x\\u{d}y\n"
    );
    let json = json_ok(&nsadmin(&["getControllerMetaData", "-a", &addr, "--json"]));
    assert_eq!(json["leaderId"], "n0\x1b[2J\r\nfake", "JSON carries the value as sent, escaped by JSON itself");
}

#[test]
fn sync_state_sets_show_group_names_and_addresses_escaped() {
    let body = json!({"replicasInfoTable": {"cb\x1b[2J": {
        "masterBrokerId": 0, "masterAddress": "10.0.0.1:10911\r\nfake", "masterEpoch": 1, "syncStateSetEpoch": 2,
        "inSyncReplicas": [{"brokerName": "cb", "brokerId": 0, "brokerAddress": "10.0.0.1:10911\x1b[31m", "alive": true}],
        "notInSyncReplicas": [],
    }}});
    let body = serde_json::to_vec(&body).expect("json");
    // The controller names itself as the leader, so 1006 comes back to it.
    let me = Arc::new(OnceLock::<String>::new());
    let leader = me.clone();
    let addr = stand_in(move |req| match req.code {
        1005 => with_fields(&[("controllerLeaderId", "n0"), ("controllerLeaderAddress", leader.get().expect("set"))]),
        1006 => RemotingCommand::response(ResponseCode::Success, None).with_body(body.clone()),
        _ => RemotingCommand::response(ResponseCode::RequestCodeNotSupported, None),
    });
    me.set(addr.clone()).expect("set once");
    let text = expect_exit(&nsadmin(&["getSyncStateSet", "-a", &addr, "-b", "cb"]), 0);
    assert_no_raw_control(&text);
    assert!(text.starts_with("#brokerName\tcb\\u{1b}[2J\n#MasterBrokerId\t0\n"), "{text}");
    assert!(text.contains("#MasterAddr\t10.0.0.1:10911\\u{d}\\u{a}fake\n"), "{text}");
    assert!(
        text.contains(
            "InSyncReplica:\tbrokerName=cb\\u{1b}[2J brokerId=0 brokerAddress=10.0.0.1:10911\\u{1b}[31m alive=true\n"
        ),
        "{text}"
    );
}

#[test]
fn a_kv_namespace_listing_shows_keys_and_values_escaped() {
    let addr = stand_in(|req| match req.code {
        219 => RemotingCommand::response(ResponseCode::Success, None)
            .with_body(&br#"{"table":{"k\u001b[2J":"v\r\nfake","plain":"value"}}"#[..]),
        _ => RemotingCommand::response(ResponseCode::RequestCodeNotSupported, None),
    });
    let text = expect_exit(&nsadmin(&["getKvConfig", "-s", "NS", "-n", &addr]), 0);
    assert_no_raw_control(&text);
    assert_eq!(text, format!("== {addr}\nk\\u{{1b}}[2J=v\\u{{d}}\\u{{a}}fake\nplain=value\n"));
}

#[test]
fn diff_controllers_shows_the_values_it_compares_escaped() {
    let (a, b) = (hostile_controller("\x1b[2J"), hostile_controller("\r\nfake"));
    let text = expect_exit(&nsadmin(&["diffControllers", "-a", &format!("{a};{b}")]), 2);
    assert_no_raw_control(&text);
    assert!(text.starts_with("DRIFT leader\n"), "{text}");
    assert!(text.contains(&format!("    {a}  n0\\u{{1b}}[2J 10.0.0.5:9878\\u{{1b}}[31m\n")), "{text}");
    assert!(text.contains(&format!("    {b}  n0\\u{{d}}\\u{{a}}fake 10.0.0.5:9878\\u{{1b}}[31m\n")), "{text}");
}

#[test]
fn errors_on_stderr_show_what_a_server_sent_escaped() {
    // A cluster list naming a member at an address with an escape sequence: clusterList -m asks
    // it for its figures, fails, and says so on stderr.
    let evil = "127.0.0.1:1\x1b[2J";
    let info = json!({"brokerAddrTable": {"b": {"cluster": "C", "brokerName": "b", "brokerAddrs": {"0": evil}}},
        "clusterAddrTable": {"C": ["b"]}});
    let info = serde_json::to_vec(&info).expect("json");
    let namesrv = stand_in(move |req| match req.code {
        106 => RemotingCommand::response(ResponseCode::Success, None).with_body(info.clone()),
        _ => RemotingCommand::response(ResponseCode::TopicNotExist, Some("no route\x1b[2J\nsecond line".into())),
    });
    let out = nsadmin(&["clusterList", "-m", "-n", &namesrv, "--timeout-ms", "1000"]);
    let (text, errors) = (expect_exit(&out, 1), stderr(&out));
    assert_no_raw_control(&text);
    assert_no_raw_control(&errors);
    assert!(errors.contains("nsadmin: broker 127.0.0.1:1\\u{1b}[2J: 127.0.0.1:1\\u{1b}[2J: "), "{errors}");
    let out = nsadmin(&["topicRoute", "-t", "T", "-n", &namesrv]);
    assert_eq!(code(&out), 1);
    assert_no_raw_control(&stderr(&out));
    assert!(stderr(&out).contains("TOPIC_NOT_EXIST (17): no route\\u{1b}[2J\n"), "{}", stderr(&out));
}
