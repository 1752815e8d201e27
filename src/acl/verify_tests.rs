use std::path::Path;

use super::*;
use crate::protocol::signature::{sign_command, SessionCredentials};
use crate::protocol::ExtFields;

const ACCOUNTS: &str = r#"
[[accounts]]
access_key = "ops"
secret_key = "ops-secret"
role = "admin"

[[accounts]]
access_key = "rocketmq2"
secret_key = "12345678"
role = "client"

[[accounts]]
access_key = "bk"
secret_key = "bk-secret"
role = "broker"
brokers = ["broker-a"]

[[accounts]]
access_key = "lan-only"
secret_key = "lan-secret"
role = "admin"
allow = ["10.0.0.0/8"]
"#;

fn accounts() -> Accounts {
    Accounts::parse(ACCOUNTS, Path::new("accounts.toml")).unwrap()
}

fn creds(access_key: &str, secret_key: &str) -> SessionCredentials {
    SessionCredentials { access_key: access_key.into(), secret_key: secret_key.into(), security_token: None }
}

fn signed(code: i32, fields: &[(&str, &str)], access_key: &str, secret_key: &str) -> RemotingCommand {
    let mut req = RemotingCommand::request(code, Some(fields.iter().copied().collect::<ExtFields>()));
    sign_command(&mut req, &creds(access_key, secret_key));
    req
}

const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

fn denied(req: &RemotingCommand) -> Denied {
    check(&accounts(), LOCAL, req).unwrap_err()
}

#[test]
fn each_level_protects_what_it_names_and_the_levels_nest() {
    for code in [100, 102, 205, 216, 217, 318, 319, 327] {
        assert!(
            protects(AclProtect::Admin, code) && protects(AclProtect::Broker, code) && protects(AclProtect::All, code)
        );
    }
    for code in [103, 104, 322, 904] {
        assert!(!protects(AclProtect::Admin, code) && protects(AclProtect::Broker, code), "{code}");
    }
    for code in [101, 105, 106, 206, 219, 224, 304, 311, 312, 313, 901, 99999] {
        assert!(!protects(AclProtect::Broker, code) && protects(AclProtect::All, code), "{code}");
    }
}

#[test]
fn roles_admin_everything_broker_its_own_codes_and_reads_client_reads_only() {
    for code in [100, 103, 105, 318, 319, 99999] {
        assert!(role_allows(Role::Admin, code), "{code}");
    }
    for code in [103, 104, 322, 904, 217, 105, 106] {
        assert!(role_allows(Role::Broker, code), "{code}");
    }
    for code in [100, 102, 205, 216, 318, 319, 327] {
        assert!(!role_allows(Role::Broker, code) && !role_allows(Role::Client, code), "{code}");
    }
    for code in READ_ONLY_CODES {
        assert!(role_allows(Role::Client, *code), "{code}");
    }
    for code in [103, 104, 217, 322, 904] {
        assert!(!role_allows(Role::Client, code), "{code}");
    }
}

#[test]
fn a_correctly_signed_request_passes_and_names_its_account() {
    let req = signed(100, &[("namespace", "ns"), ("key", "k"), ("value", "v")], "ops", "ops-secret");
    assert_eq!(check(&accounts(), LOCAL, &req).unwrap().access_key, "ops");
    let with_body = signed(318, &[], "ops", "ops-secret").with_body(&b"x=1"[..]);
    assert!(matches!(check(&accounts(), LOCAL, &with_body), Err(Denied::BadSignature(_))), "body added after signing");
    let mut body_first = RemotingCommand::request(318, None).with_body(&b"x=1"[..]);
    sign_command(&mut body_first, &creds("ops", "ops-secret"));
    assert!(check(&accounts(), LOCAL, &body_first).is_ok(), "the body is signed");
}

#[test]
fn every_failure_says_what_was_missing_or_wrong() {
    let unsigned = RemotingCommand::request(100, Some(ExtFields::new().with("namespace", "n")));
    assert_eq!(denied(&unsigned), Denied::MissingAccessKey(100));
    assert_eq!(denied(&RemotingCommand::request(216, None)), Denied::MissingAccessKey(216), "no extFields at all");
    assert_eq!(denied(&signed(100, &[], "nobody", "x")), Denied::UnknownAccessKey("nobody".into()));
    assert_eq!(denied(&signed(100, &[], "ops", "wrong")), Denied::BadSignature("ops".into()));
    let mut no_signature = signed(100, &[], "ops", "ops-secret");
    no_signature.ext_fields = Some(ExtFields::new().with("AccessKey", "ops"));
    assert_eq!(denied(&no_signature), Denied::MissingSignature("ops".into()));
    let mut garbage = signed(100, &[], "ops", "ops-secret");
    garbage.ext_fields.as_mut().unwrap().insert("Signature", "not base64 at all");
    assert_eq!(denied(&garbage), Denied::BadSignature("ops".into()));
    let client_write = signed(102, &[("namespace", "n"), ("key", "k")], "rocketmq2", "12345678");
    assert_eq!(
        denied(&client_write),
        Denied::RoleNotAllowed { key: "rocketmq2".into(), role: Role::Client, code: 102 }
    );
    assert_eq!(denied(&client_write).to_string(), "AccessKey rocketmq2 (role client) may not send request code 102");
    let elsewhere = signed(100, &[], "lan-only", "lan-secret");
    assert_eq!(denied(&elsewhere), Denied::AccountAddressNotAllowed("lan-only".into(), LOCAL));
    assert!(check(&accounts(), "10.9.8.7".parse().unwrap(), &elsewhere).is_ok());
}

#[test]
fn without_the_secret_no_remark_tells_whether_a_key_exists() {
    let remark = |key: &str, secret: &str, missing: bool| {
        let mut req = signed(100, &[], key, secret);
        if missing {
            req.ext_fields = Some(ExtFields::new().with("AccessKey", key));
        }
        denied(&req).to_string().replace(key, "KEY")
    };
    for missing_signature in [false, true] {
        let unknown = remark("nobody", "x", missing_signature);
        assert_eq!(remark("ops", "wrong", missing_signature), unknown, "a known key");
        assert_eq!(remark("lan-only", "wrong", missing_signature), unknown, "a known key outside its allow list");
    }
    assert_eq!(denied(&signed(100, &[], "nobody", "x")).reason(), "unknown_access_key", "the metrics still tell");
    assert_eq!(denied(&signed(100, &[], "ops", "x")).reason(), "bad_signature");
}

#[test]
fn a_replayed_request_with_one_field_changed_fails() {
    let original = signed(216, &[("topic", "Orders"), ("clusterName", "c1")], "ops", "ops-secret");
    assert!(check(&accounts(), LOCAL, &original).is_ok());
    let mut replay = original.clone();
    replay.ext_fields.as_mut().unwrap().insert("topic", "Payments");
    assert_eq!(denied(&replay), Denied::BadSignature("ops".into()));
    let mut added = original.clone();
    added.ext_fields.as_mut().unwrap().insert("extra", "1");
    assert_eq!(denied(&added), Denied::BadSignature("ops".into()));
    let mut other_key = original;
    other_key.ext_fields.as_mut().unwrap().insert("AccessKey", "rocketmq2");
    assert_eq!(denied(&other_key), Denied::BadSignature("rocketmq2".into()));
}

#[test]
fn a_broker_account_acts_only_for_the_brokers_it_lists() {
    let own = signed(904, &[("brokerName", "broker-a"), ("brokerAddr", "a:1")], "bk", "bk-secret");
    assert!(check(&accounts(), LOCAL, &own).is_ok());
    let other = signed(904, &[("brokerName", "broker-b"), ("brokerAddr", "b:1")], "bk", "bk-secret");
    assert_eq!(denied(&other), Denied::BrokerNotListed { key: "bk".into(), broker: "broker-b".into() });
    let nameless = signed(322, &[("brokerAddr", "b:1")], "bk", "bk-secret");
    assert_eq!(denied(&nameless), Denied::MissingBrokerName("bk".into()));
    let admin = signed(104, &[("brokerName", "broker-b")], "ops", "ops-secret");
    assert!(check(&accounts(), LOCAL, &admin).is_ok(), "an admin acts for any broker");
}

#[test]
fn the_notes_vector_with_an_empty_value_verifies_whether_or_not_the_empty_field_arrives() {
    // V2: {AccessKey:rocketmq2, ns:"", topic:TopicTest}, secret 12345678 -> GeeGoP9mRvDhoVp4PD5omX0prgE=
    // A binary header drops the empty value; a JSON one keeps it. Both give the signed content.
    for fields in [vec![("ns", ""), ("topic", "TopicTest")], vec![("topic", "TopicTest")]] {
        let mut ext: ExtFields = fields.iter().copied().collect();
        ext.insert("AccessKey", "rocketmq2");
        ext.insert("Signature", "GeeGoP9mRvDhoVp4PD5omX0prgE=");
        let req = RemotingCommand::request(105, Some(ext));
        assert!(check(&accounts(), LOCAL, &req).is_ok(), "{fields:?}");
    }
}

#[test]
fn unique_key_query_is_left_out_for_clients_up_to_4_9_3_only() {
    let fields = [("topic", "T"), ("_UNIQUE_KEY_QUERY", "false")];
    let mut signed_without = RemotingCommand::request(105, Some(ExtFields::new().with("topic", "T")));
    sign_command(&mut signed_without, &creds("rocketmq2", "12345678"));
    let mut req = signed_without.clone();
    req.ext_fields.as_mut().unwrap().insert(fields[1].0, fields[1].1);
    req.version = 399;
    assert!(check(&accounts(), LOCAL, &req).is_ok(), "V4_9_3 did not sign it");
    req.version = 401;
    assert!(matches!(check(&accounts(), LOCAL, &req), Err(Denied::BadSignature(_))), "later clients do");
    let both = signed(105, &fields, "rocketmq2", "12345678");
    assert!(check(&accounts(), LOCAL, &both).is_ok());
}

#[test]
fn peer_supplied_names_are_escaped_and_cut_short_in_remarks() {
    assert_eq!(shown("bad\nkey"), "bad\\nkey");
    let long = "k".repeat(1000);
    assert_eq!(shown(&long), format!("{}...", "k".repeat(64)));
    assert_eq!(shown("broker-ä"), "broker-ä");
}
