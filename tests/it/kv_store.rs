//! KV config over TCP (Java's KVConfigManager, codes 100–102 and 219): the KV requests, persistence
//! across restarts and crashes, and ORDER_TOPIC_CONFIG in registrations and routes.

use crate::common::kv_config::{
    broker_a, json_body, put_kv, put_ok, read_json, update_config, with_suffix, PUT_KV_CONFIG, SUCCESS, SYSTEM_ERROR,
};
use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
use namesrv::protocol::{ExtFields, RemotingCommand};
use serde_json::{json, Value};

const GET_KV_CONFIG: i32 = 101;
const DELETE_KV_CONFIG: i32 = 102;
const GET_KVLIST_BY_NAMESPACE: i32 = 219;

const QUERY_NOT_FOUND: i32 = 22;

const ORDER_TOPIC_CONFIG: &str = "ORDER_TOPIC_CONFIG";

/// The KVConfigSerializeWrapperTest sample, as Java's KVConfigSerializeWrapper writes it.
const JAVA_KV_FILE: &str = r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"broker-name":"default-broker","topic-name":"default-topic","cid":"default-consumer-name"}}}"#;

// ---------------------------------------------------------------------------------------------
// Requests

fn get_kv(client: &mut Client, namespace: &str, key: &str) -> RemotingCommand {
    let ext = ExtFields::new().with("namespace", namespace).with("key", key);
    client.call(RemotingCommand::request(GET_KV_CONFIG, Some(ext)))
}

fn delete_kv(client: &mut Client, namespace: &str, key: &str) -> RemotingCommand {
    let ext = ExtFields::new().with("namespace", namespace).with("key", key);
    client.call(RemotingCommand::request(DELETE_KV_CONFIG, Some(ext)))
}

fn kv_list(client: &mut Client, namespace: &str) -> RemotingCommand {
    let ext = ExtFields::new().with("namespace", namespace);
    client.call(RemotingCommand::request(GET_KVLIST_BY_NAMESPACE, Some(ext)))
}

fn value_of(resp: &RemotingCommand) -> Option<&str> {
    resp.ext("value")
}

// ---------------------------------------------------------------------------------------------
// RequestProcessorTest / KVConfigManagerTest: the KV requests

#[test]
fn a_put_kv_config_is_answered_with_bare_success_and_then_served_by_get() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = put_kv(&mut client, "namespace", "key", "value");
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(resp.remark, None, "PUT_KV_CONFIG answers with no remark");
    assert!(resp.body.is_none(), "PUT_KV_CONFIG answers with no body");
    assert!(value_of(&resp).is_none(), "PUT_KV_CONFIG answers with no header fields");

    let resp = get_kv(&mut client, "namespace", "key");
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(resp.remark, None);
    assert_eq!(value_of(&resp), Some("value"));
}

#[test]
fn a_second_put_of_the_same_key_replaces_its_value() {
    let server = TestServer::start();
    let mut client = server.client();
    put_ok(&mut client, "ns", "k", "one");
    put_ok(&mut client, "ns", "k", "two");
    assert_eq!(value_of(&get_kv(&mut client, "ns", "k")), Some("two"));
}

#[test]
fn get_kv_config_of_a_missing_key_is_query_not_found_with_empty_ext_fields() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = get_kv(&mut client, "namespace", "key");
    assert_eq!(resp.code, QUERY_NOT_FOUND);
    assert_eq!(resp.remark.as_deref(), Some("No config item, Namespace: namespace Key: key"));
    let ext = resp.ext_fields.as_ref().expect("GET_KV_CONFIG: the response still carries extFields");
    assert!(ext.get("value").is_none(), "no value when nothing is found");

    // A missing key inside an existing namespace is just as missing.
    put_ok(&mut client, "namespace", "other", "x");
    let resp = get_kv(&mut client, "namespace", "key");
    assert_eq!(resp.code, QUERY_NOT_FOUND);
    assert_eq!(resp.remark.as_deref(), Some("No config item, Namespace: namespace Key: key"));
}

#[test]
fn get_kv_config_of_a_missing_key_carries_an_empty_ext_fields_object_on_the_wire() {
    let server = TestServer::start();
    let mut client = server.client();
    let ext = ExtFields::new().with("namespace", "namespace").with("key", "key");
    client.send(&RemotingCommand::request(GET_KV_CONFIG, Some(ext)).with_opaque(77));
    let raw = client.read_raw_frame();
    let header_len = (u32::from_be_bytes(raw[4..8].try_into().unwrap()) & 0x00ff_ffff) as usize;
    let header: Value = serde_json::from_slice(&raw[8..8 + header_len]).expect("a JSON header, as requested");
    assert_eq!(header["code"], 22);
    assert_eq!(header["opaque"], 77);
    assert_eq!(header["extFields"], json!({}), "GET_KV_CONFIG: \"extFields\":{{}} is present; header {header}");
}

#[test]
fn delete_kv_config_removes_the_key() {
    let server = TestServer::start();
    let mut client = server.client();
    put_ok(&mut client, "namespace", "key", "value");
    let resp = delete_kv(&mut client, "namespace", "key");
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(resp.remark, None);
    let resp = get_kv(&mut client, "namespace", "key");
    assert_eq!(resp.code, QUERY_NOT_FOUND);
    assert!(value_of(&resp).is_none());
}

#[test]
fn deleting_the_last_key_leaves_an_empty_namespace_that_is_still_listed() {
    let server = TestServer::start();
    let mut client = server.client();
    put_ok(&mut client, "ns", "only", "v");
    assert_eq!(delete_kv(&mut client, "ns", "only").code, SUCCESS);
    let resp = kv_list(&mut client, "ns");
    assert_eq!(resp.code, SUCCESS, "KVConfigManager keeps an emptied namespace");
    assert_eq!(json_body(&resp), json!({"table": {}}));
}

#[test]
fn delete_on_a_fresh_store_succeeds_and_leaves_the_namespace_absent() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = delete_kv(&mut client, ORDER_TOPIC_CONFIG, "UnitTest");
    assert_eq!(resp.code, SUCCESS, "DELETE_KV_CONFIG always answers SUCCESS");
    let resp = kv_list(&mut client, ORDER_TOPIC_CONFIG);
    assert_eq!(resp.code, QUERY_NOT_FOUND, "KVConfigManagerTest: the namespace never existed");
    assert_eq!(resp.remark.as_deref(), Some("No config item, Namespace: ORDER_TOPIC_CONFIG"));
    assert_eq!(get_kv(&mut client, ORDER_TOPIC_CONFIG, "UnitTest").code, QUERY_NOT_FOUND);
    // KVConfigManager rewrites the file after every DELETE, even when nothing changed.
    assert_eq!(read_json(&server.settings.state.kv_config_path), json!({"configTable": {}}));
}

#[test]
fn kv_list_of_a_missing_namespace_is_query_not_found_until_a_key_is_put() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = kv_list(&mut client, "default-namespace-1");
    assert_eq!(resp.code, QUERY_NOT_FOUND);
    assert_eq!(resp.remark.as_deref(), Some("No config item, Namespace: default-namespace-1"));
    assert!(resp.body.is_none());

    put_ok(&mut client, "default-namespace-1", "a", "1");
    put_ok(&mut client, "default-namespace-1", "b", "2");
    put_ok(&mut client, "another", "c", "3");
    let resp = kv_list(&mut client, "default-namespace-1");
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(json_body(&resp), json!({"table": {"a": "1", "b": "2"}}), "KVTable of that namespace only");
}

#[test]
fn put_kv_config_without_any_ext_fields_is_a_system_error_naming_namespace_or_key() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = client.call(RemotingCommand::request(PUT_KV_CONFIG, None));
    assert_eq!(resp.code, SYSTEM_ERROR);
    assert_eq!(resp.remark.as_deref(), Some("namespace or key is null"));
}

#[test]
fn put_kv_config_without_a_value_is_a_system_error_naming_the_field() {
    let server = TestServer::start();
    let mut client = server.client();
    let ext = ExtFields::new().with("namespace", "ns").with("key", "k");
    let resp = client.call(RemotingCommand::request(PUT_KV_CONFIG, Some(ext)));
    assert_eq!(resp.code, SYSTEM_ERROR);
    let remark = resp.remark.unwrap_or_default();
    assert!(remark.contains("the custom field <value> is null"), "remark {remark:?}");
    assert_eq!(get_kv(&mut client, "ns", "k").code, QUERY_NOT_FOUND, "nothing was stored");

    let ext = ExtFields::new().with("namespace", "ns").with("value", "v");
    let resp = client.call(RemotingCommand::request(PUT_KV_CONFIG, Some(ext)));
    assert_eq!(resp.code, SYSTEM_ERROR);
    let remark = resp.remark.unwrap_or_default();
    assert!(remark.contains("the custom field <key> is null"), "remark {remark:?}");
}

// ---------------------------------------------------------------------------------------------
// KVConfigManager persistence (KVConfigSerializeWrapper JSON)

#[test]
fn kv_entries_survive_a_restart() {
    let server = TestServer::start();
    let mut client = server.client();
    put_ok(&mut client, "ns1", "k1", "v1");
    put_ok(&mut client, "ns1", "k2", "v2");
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder", "broker-a:4");
    put_ok(&mut client, "ns2", "gone", "x");
    assert_eq!(delete_kv(&mut client, "ns2", "gone").code, SUCCESS);
    drop(client);
    let settings = server.settings.clone();
    drop(server);

    let server = TestServer::with_settings(settings);
    let mut client = server.client();
    assert_eq!(value_of(&get_kv(&mut client, "ns1", "k1")), Some("v1"));
    assert_eq!(value_of(&get_kv(&mut client, "ns1", "k2")), Some("v2"));
    assert_eq!(value_of(&get_kv(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder")), Some("broker-a:4"));
    assert_eq!(get_kv(&mut client, "ns2", "gone").code, QUERY_NOT_FOUND, "a delete survives too");
    assert_eq!(json_body(&kv_list(&mut client, "ns2")), json!({"table": {}}), "the emptied namespace survives");
}

#[test]
fn the_kv_file_is_javas_compact_config_table_json() {
    let server = TestServer::start();
    let mut client = server.client();
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder", "broker-a:4;broker-b:4");
    let bytes = std::fs::read(&server.settings.state.kv_config_path).unwrap();
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"}}}"#,
        "KVConfigSerializeWrapper JSON: compact, one line, no trailing newline"
    );

    put_ok(&mut client, "ns", "k", "v \"quoted\" é");
    assert_eq!(
        read_json(&server.settings.state.kv_config_path),
        json!({"configTable": {
            "ORDER_TOPIC_CONFIG": {"TopicOrder": "broker-a:4;broker-b:4"},
            "ns": {"k": "v \"quoted\" é"}
        }})
    );
}

#[test]
fn each_kv_write_keeps_the_previous_file_as_bak() {
    let server = TestServer::start();
    let mut client = server.client();
    let path = &server.settings.state.kv_config_path;
    put_ok(&mut client, "ns", "a", "1");
    let first = std::fs::read(path).unwrap();
    put_ok(&mut client, "ns", "b", "2");
    let bak = std::fs::read(with_suffix(path, ".bak")).expect("<path>.bak after a second write (MixAll.string2File)");
    assert_eq!(bak, first, "the .bak holds the previous version");
    assert_eq!(read_json(path), json!({"configTable": {"ns": {"a": "1", "b": "2"}}}));
}

#[test]
fn a_java_written_kv_file_is_served_after_start() {
    let settings = test_settings();
    std::fs::write(&settings.state.kv_config_path, JAVA_KV_FILE).unwrap();
    let server = TestServer::with_settings(settings);
    let mut client = server.client();
    assert_eq!(value_of(&get_kv(&mut client, ORDER_TOPIC_CONFIG, "broker-name")), Some("default-broker"));
    assert_eq!(value_of(&get_kv(&mut client, ORDER_TOPIC_CONFIG, "topic-name")), Some("default-topic"));
    assert_eq!(value_of(&get_kv(&mut client, ORDER_TOPIC_CONFIG, "cid")), Some("default-consumer-name"));
    let resp = kv_list(&mut client, ORDER_TOPIC_CONFIG);
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(
        json_body(&resp),
        json!({"table": {"broker-name": "default-broker", "topic-name": "default-topic", "cid": "default-consumer-name"}})
    );
    // Writing it back keeps Java's shape (KVConfigSerializeWrapperTest round trip).
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "extra", "x");
    let mut expected: Value = serde_json::from_str(JAVA_KV_FILE).unwrap();
    expected["configTable"][ORDER_TOPIC_CONFIG]["extra"] = json!("x");
    assert_eq!(read_json(&server.settings.state.kv_config_path), expected);
}

#[test]
fn a_corrupt_kv_file_stops_start_up_naming_the_file_and_is_left_untouched() {
    let dir = temp_dir();
    let kv_path = dir.join("kvConfig.json");
    let corrupt = b"{\"configTable\":{";
    std::fs::write(&kv_path, corrupt).unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let (status, _, stderr) = run_to_exit(cmd);
    assert!(!status.success(), "as in Java, start-up must fail on a corrupt KV file; stderr:\n{stderr}");
    let path = kv_path.display().to_string();
    assert!(
        stderr.lines().any(|l| l.contains("ERROR") && l.contains(&path)),
        "an error line names the file:\n{stderr}"
    );
    assert!(!stderr.contains("listening"), "it never served:\n{stderr}");
    assert_eq!(std::fs::read(&kv_path).unwrap(), corrupt, "the corrupt file is not overwritten");
    assert!(!with_suffix(&kv_path.display().to_string(), ".bak").exists(), "nothing was written");
}

#[test]
fn numbers_and_booleans_in_a_kv_file_are_read_as_java_reads_them() {
    let dir = temp_dir();
    let kv_path = dir.join("kvConfig.json");
    let text = r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"T":1},"ns":{"k":true,"f":1.50,"gone":null}}}"#;
    std::fs::write(&kv_path, text).unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    assert_eq!(value_of(&get_kv(&mut client, ORDER_TOPIC_CONFIG, "T")), Some("1"), "fastjson's StringCodec");
    assert_eq!(value_of(&get_kv(&mut client, "ns", "k")), Some("true"));
    assert_eq!(value_of(&get_kv(&mut client, "ns", "f")), Some("1.50"), "the digits as written");
    assert_eq!(get_kv(&mut client, "ns", "gone").code, QUERY_NOT_FOUND, "null is no value");
    assert!(proc.stderr().contains("not JSON strings"), "{}", proc.stderr());
    drop(client);
    proc.terminate();
    proc.wait(std::time::Duration::from_secs(10));
    let expected = json!({"configTable": {"ORDER_TOPIC_CONFIG": {"T": "1"}, "ns": {"k": "true", "f": "1.50"}}});
    assert_eq!(read_json(&kv_path), expected, "written back as strings");
}

#[test]
fn every_acknowledged_put_survives_kill_9() {
    const KEYS: usize = 50;
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    for i in 0..KEYS {
        put_ok(&mut client, "crash", &format!("key-{i:02}"), &format!("value-{i}"));
    }
    proc.kill_9();

    let file = read_json(dir.join("kvConfig.json"));
    let table = file["configTable"]["crash"].as_object().expect("the namespace is on disk");
    assert_eq!(table.len(), KEYS, "all acknowledged keys are on disk");
    for i in 0..KEYS {
        assert_eq!(table[&format!("key-{i:02}")], json!(format!("value-{i}")));
    }
}

// ---------------------------------------------------------------------------------------------
// ORDER_TOPIC_CONFIG in REGISTER_BROKER responses and in routes (orderTopicConf)

#[test]
fn register_broker_is_answered_with_the_order_topic_config_table() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = client.register(&broker_a());
    assert_eq!(resp.code, SUCCESS);
    assert!(resp.body.is_none(), "REGISTER_BROKER: no body while the namespace does not exist");

    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder", "broker-a:4");
    let resp = client.register(&broker_a().bump());
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(resp.body.as_deref(), Some(&br#"{"table":{"TopicOrder":"broker-a:4"}}"#[..]));

    // An emptied namespace still exists, so the (empty) table is still returned.
    assert_eq!(delete_kv(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder").code, SUCCESS);
    let resp = client.register(&broker_a().bump().bump());
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(resp.body.as_deref(), Some(&br#"{"table":{}}"#[..]));
}

#[test]
fn register_broker_has_no_body_when_returning_order_topics_is_off() {
    let server = TestServer::with(|s| s.routing.return_order_topic_config_to_broker = false);
    let mut client = server.client();
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder", "broker-a:4");
    let resp = client.register(&broker_a());
    assert_eq!(resp.code, SUCCESS);
    assert!(resp.body.is_none(), "returnOrderTopicConfigToBroker=false sends no KVTable");
}

#[test]
fn a_java_kv_file_with_order_topics_is_returned_to_the_first_registering_broker() {
    let settings = test_settings();
    std::fs::write(
        &settings.state.kv_config_path,
        r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4"}}}"#,
    )
    .unwrap();
    let server = TestServer::with_settings(settings);
    let resp = server.client().register(&broker_a());
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(resp.body.as_deref(), Some(&br#"{"table":{"TopicOrder":"broker-a:4"}}"#[..]));
}

#[test]
fn routes_carry_order_topic_conf_when_order_messages_are_enabled() {
    let server = TestServer::with(|s| s.routing.order_message_enable = true);
    let mut client = server.client();
    assert_eq!(client.register(&broker_a()).code, SUCCESS);
    let route = client.route("TopicOrder").unwrap();
    assert!(route.get("orderTopicConf").is_none(), "no KV entry yet: {route}");

    // A put after the route was served must show (the cached route is dropped).
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder", "broker-a:4");
    let route = client.route("TopicOrder").unwrap();
    assert_eq!(route["orderTopicConf"], "broker-a:4", "route {route}");
    let plain = client.route("TopicPlain").unwrap();
    assert!(plain.get("orderTopicConf").is_none(), "only the configured topic: {plain}");

    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder", "broker-a:8");
    assert_eq!(client.route("TopicOrder").unwrap()["orderTopicConf"], "broker-a:8");
    assert_eq!(delete_kv(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder").code, SUCCESS);
    let route = client.route("TopicOrder").unwrap();
    assert!(route.get("orderTopicConf").is_none(), "deleted again: {route}");
}

#[test]
fn routes_have_no_order_topic_conf_when_order_messages_are_disabled() {
    let server = TestServer::start();
    let mut client = server.client();
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder", "broker-a:4");
    assert_eq!(client.register(&broker_a()).code, SUCCESS);
    let route = client.route("TopicOrder").unwrap();
    assert!(route.get("orderTopicConf").is_none(), "orderMessageEnable defaults to false: {route}");
}

#[test]
fn enabling_order_messages_at_runtime_adds_order_topic_conf_to_cached_routes() {
    let server = TestServer::start();
    let mut client = server.client();
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder", "broker-a:4");
    assert_eq!(client.register(&broker_a()).code, SUCCESS);
    let route = client.route("TopicOrder").unwrap();
    assert!(route.get("orderTopicConf").is_none(), "off at first: {route}");

    assert_eq!(update_config(&mut client, Some("orderMessageEnable=true")).code, SUCCESS);
    let route = client.route("TopicOrder").unwrap();
    assert_eq!(route["orderTopicConf"], "broker-a:4", "the cached route must be rebuilt: {route}");

    assert_eq!(update_config(&mut client, Some("orderMessageEnable=false")).code, SUCCESS);
    let route = client.route("TopicOrder").unwrap();
    assert!(route.get("orderTopicConf").is_none(), "off again: {route}");
}
