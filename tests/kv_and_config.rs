//! KV config (spec §2.3.1–2.3.3, §2.3.15, §6, §3.14) and runtime configuration (§2.3.19–2.3.20,
//! §7.1–7.3) over TCP: answers, persistence across restarts and crashes, order topics, start-up.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::*;
use namesrv::protocol::{ExtFields, RemotingCommand};
use serde_json::{json, Value};

const PUT_KV_CONFIG: i32 = 100;
const GET_KV_CONFIG: i32 = 101;
const DELETE_KV_CONFIG: i32 = 102;
const GET_ALL_TOPIC_LIST: i32 = 206;
const GET_KVLIST_BY_NAMESPACE: i32 = 219;
const UPDATE_NAMESRV_CONFIG: i32 = 318;
const GET_NAMESRV_CONFIG: i32 = 319;

const SUCCESS: i32 = 0;
const SYSTEM_ERROR: i32 = 1;
const NO_PERMISSION: i32 = 16;
const QUERY_NOT_FOUND: i32 = 22;

const ORDER_TOPIC_CONFIG: &str = "ORDER_TOPIC_CONFIG";

/// The §9.10 sample, as Java's KVConfigSerializeWrapper writes it.
const JAVA_KV_FILE: &str = r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"broker-name":"default-broker","topic-name":"default-topic","cid":"default-consumer-name"}}}"#;

// ---------------------------------------------------------------------------------------------
// Requests

fn put_kv(client: &mut Client, namespace: &str, key: &str, value: &str) -> RemotingCommand {
    let ext = ExtFields::new().with("namespace", namespace).with("key", key).with("value", value);
    client.call(RemotingCommand::request(PUT_KV_CONFIG, Some(ext)))
}

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

fn update_config(client: &mut Client, body: Option<&str>) -> RemotingCommand {
    let mut cmd = RemotingCommand::request(UPDATE_NAMESRV_CONFIG, None);
    if let Some(body) = body {
        cmd = cmd.with_body(body.as_bytes().to_vec());
    }
    client.call(cmd)
}

fn get_config(client: &mut Client) -> String {
    let resp = client.call(RemotingCommand::request(GET_NAMESRV_CONFIG, None));
    assert_eq!(resp.code, SUCCESS, "GET_NAMESRV_CONFIG: {:?}", resp.remark);
    String::from_utf8(resp.body.expect("GET_NAMESRV_CONFIG always has a body").to_vec()).unwrap()
}

fn all_topic_list(client: &mut Client) -> RemotingCommand {
    client.call(RemotingCommand::request(GET_ALL_TOPIC_LIST, None))
}

fn put_ok(client: &mut Client, namespace: &str, key: &str, value: &str) {
    let resp = put_kv(client, namespace, key, value);
    assert_eq!(resp.code, SUCCESS, "put {namespace}/{key}: {:?}", resp.remark);
}

fn value_of(resp: &RemotingCommand) -> Option<&str> {
    resp.ext("value")
}

fn json_body(resp: &RemotingCommand) -> Value {
    serde_json::from_slice(resp.body.as_deref().expect("a body")).expect("json body")
}

fn read_json(path: impl AsRef<Path>) -> Value {
    let bytes = std::fs::read(path.as_ref()).unwrap_or_else(|e| panic!("read {}: {e}", path.as_ref().display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{} is not json: {e}", path.as_ref().display()))
}

fn with_suffix(path: &str, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{path}{suffix}"))
}

// ---------------------------------------------------------------------------------------------
// The real binary, killed on drop

/// A `namesrv` command with its KV and config-store files in a fresh directory.
fn namesrv_command(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_namesrv"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_LOG")
        .env("NAMESRV_KV_CONFIG_PATH", dir.join("kvConfig.json"))
        .env("NAMESRV_CONFIG_STORE_PATH", dir.join("namesrv.properties"));
    cmd
}

/// A spawned `namesrv` process, collecting its output; killed and reaped when dropped.
struct Proc {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

impl Proc {
    fn spawn(mut cmd: Command) -> Proc {
        let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let readers = vec![
            collect(child.stdout.take().unwrap(), stdout.clone()),
            collect(child.stderr.take().unwrap(), stderr.clone()),
        ];
        Proc { child, stdout, stderr, readers }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    /// The address from the `listening addr=HOST:PORT` log line; panics if it does not come
    /// within 10 s or the process exits first.
    fn addr(&mut self) -> SocketAddr {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = self.stderr();
            let found = text.lines().filter(|l| l.contains("listening")).find_map(|l| l.split("addr=").nth(1));
            if let Some(addr) = found {
                let addr = addr.split_whitespace().next().unwrap_or_default();
                return addr.parse().unwrap_or_else(|e| panic!("bad listening address {addr:?}: {e}"));
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("namesrv exited with {status} before listening; stderr:\n{}", self.stderr());
            }
            assert!(Instant::now() < deadline, "no listening line within 10 s; stderr:\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the process to exit (at most `timeout`) and for its output to be collected.
    fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "namesrv did not exit within {timeout:?}; stderr:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        };
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        status
    }

    /// SIGKILL, as `kill -9`.
    fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.wait(Duration::from_secs(5));
    }

    /// SIGTERM, as a service manager stops it.
    fn terminate(&self) {
        let status = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().unwrap();
        assert!(status.success(), "kill -TERM failed");
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn collect(mut from: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(&mut from);
        let mut line = String::new();
        while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
            into.lock().unwrap().push_str(&line);
            line.clear();
        }
    })
}

/// Runs a command that should end on its own (start-up failures, `-p`), at most 10 s.
fn run_to_exit(cmd: Command) -> (ExitStatus, String, String) {
    let mut proc = Proc::spawn(cmd);
    let status = proc.wait(Duration::from_secs(10));
    (status, proc.stdout(), proc.stderr())
}

// ---------------------------------------------------------------------------------------------
// §9.1 / §9.9: the KV requests

#[test]
fn a_put_kv_config_is_answered_with_bare_success_and_then_served_by_get() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = put_kv(&mut client, "namespace", "key", "value");
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(resp.remark, None, "§2.3.1: no remark");
    assert!(resp.body.is_none(), "§2.3.1: no body");
    assert!(value_of(&resp).is_none(), "§2.3.1: no header fields");

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
    let ext = resp.ext_fields.as_ref().expect("§2.3.2: the response still carries extFields");
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
    assert_eq!(header["extFields"], json!({}), "§2.3.2: \"extFields\":{{}} is present; header {header}");
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
    assert_eq!(resp.code, SUCCESS, "§6: an emptied namespace stays");
    assert_eq!(json_body(&resp), json!({"table": {}}));
}

#[test]
fn delete_on_a_fresh_store_succeeds_and_leaves_the_namespace_absent() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = delete_kv(&mut client, ORDER_TOPIC_CONFIG, "UnitTest");
    assert_eq!(resp.code, SUCCESS, "§2.3.3: always SUCCESS");
    let resp = kv_list(&mut client, ORDER_TOPIC_CONFIG);
    assert_eq!(resp.code, QUERY_NOT_FOUND, "§9.9: the namespace never existed");
    assert_eq!(resp.remark.as_deref(), Some("No config item, Namespace: ORDER_TOPIC_CONFIG"));
    assert_eq!(get_kv(&mut client, ORDER_TOPIC_CONFIG, "UnitTest").code, QUERY_NOT_FOUND);
    // §6: the file is rewritten after every DELETE, even when nothing changed.
    assert_eq!(read_json(&server.settings.kv_config_path), json!({"configTable": {}}));
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
    assert_eq!(json_body(&resp), json!({"table": {"a": "1", "b": "2"}}), "§3.7 KVTable of that namespace only");
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
// §6, §3.14: persistence

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
    let bytes = std::fs::read(&server.settings.kv_config_path).unwrap();
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"}}}"#,
        "§3.14: compact, one line, no trailing newline"
    );

    put_ok(&mut client, "ns", "k", "v \"quoted\" é");
    assert_eq!(
        read_json(&server.settings.kv_config_path),
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
    let path = &server.settings.kv_config_path;
    put_ok(&mut client, "ns", "a", "1");
    let first = std::fs::read(path).unwrap();
    put_ok(&mut client, "ns", "b", "2");
    let bak = std::fs::read(with_suffix(path, ".bak")).expect("§6: <path>.bak after a second write");
    assert_eq!(bak, first, "the .bak holds the previous version");
    assert_eq!(read_json(path), json!({"configTable": {"ns": {"a": "1", "b": "2"}}}));
}

#[test]
fn a_java_written_kv_file_is_served_after_start() {
    let settings = test_settings();
    std::fs::write(&settings.kv_config_path, JAVA_KV_FILE).unwrap();
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
    // Writing it back keeps Java's shape (§9.10 round trip).
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "extra", "x");
    let mut expected: Value = serde_json::from_str(JAVA_KV_FILE).unwrap();
    expected["configTable"][ORDER_TOPIC_CONFIG]["extra"] = json!("x");
    assert_eq!(read_json(&server.settings.kv_config_path), expected);
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
    assert!(!status.success(), "§6: start-up must fail on a corrupt KV file; stderr:\n{stderr}");
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
// §2.3.6 step 7, §2.3.4 step 3, §6: ORDER_TOPIC_CONFIG

fn broker_a() -> Broker {
    Broker::new("DefaultCluster", "broker-a", 0, "127.0.0.1:10911").topics(&["TopicOrder", "TopicPlain"])
}

#[test]
fn register_broker_is_answered_with_the_order_topic_config_table() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = client.register(&broker_a());
    assert_eq!(resp.code, SUCCESS);
    assert!(resp.body.is_none(), "§2.3.6 step 7: no body while the namespace does not exist");

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
    let server = TestServer::with(|s| s.return_order_topic_config_to_broker = false);
    let mut client = server.client();
    put_ok(&mut client, ORDER_TOPIC_CONFIG, "TopicOrder", "broker-a:4");
    let resp = client.register(&broker_a());
    assert_eq!(resp.code, SUCCESS);
    assert!(resp.body.is_none(), "returnOrderTopicConfigToBroker=false sends no KVTable");
}

#[test]
fn a_java_kv_file_with_order_topics_is_returned_to_the_first_registering_broker() {
    let settings = test_settings();
    std::fs::write(&settings.kv_config_path, r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4"}}}"#)
        .unwrap();
    let server = TestServer::with_settings(settings);
    let resp = server.client().register(&broker_a());
    assert_eq!(resp.code, SUCCESS);
    assert_eq!(resp.body.as_deref(), Some(&br#"{"table":{"TopicOrder":"broker-a:4"}}"#[..]));
}

#[test]
fn routes_carry_order_topic_conf_when_order_messages_are_enabled() {
    let server = TestServer::with(|s| s.order_message_enable = true);
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

// ---------------------------------------------------------------------------------------------
// §2.3.19–2.3.20, §7.3: runtime configuration

/// The `key=value` pairs of a GET_NAMESRV_CONFIG body, in order.
fn config_pairs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap_or_else(|| panic!("not a key=value line: {l:?}"));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

fn config_value(text: &str, key: &str) -> Option<String> {
    config_pairs(text).into_iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

#[test]
fn get_namesrv_config_answers_sorted_java_named_lines() {
    let server = TestServer::start();
    let mut client = server.client();
    let text = get_config(&mut client);
    assert!(text.ends_with('\n'), "§2.3.20: `key=value\\n` lines");
    let pairs = config_pairs(&text);
    let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "§2.3.20: sorted by key");
    for line in [
        "enableAllTopicList=true",
        "enableTopicList=true",
        "orderMessageEnable=false",
        "returnOrderTopicConfigToBroker=true",
        "scanNotActiveBrokerInterval=5000",
        "configBlackList=configBlackList;configStorePath;kvConfigPath",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
    assert!(text.lines().any(|l| l.starts_with("listenPort=")), "missing listenPort in\n{text}");
    assert_eq!(config_value(&text, "kvConfigPath").as_deref(), Some(server.settings.kv_config_path.as_str()));
    assert_eq!(config_value(&text, "configStorePath").as_deref(), Some(server.settings.config_store_path.as_str()));
}

#[test]
fn get_namesrv_config_reports_the_port_actually_bound_when_listen_port_is_zero() {
    let server = TestServer::start();
    assert_eq!(server.settings.listen_port, 0);
    let text = get_config(&mut server.client());
    // §7.1: "`listenPort=0` binds an ephemeral port, and the real port is written back into the config".
    assert_eq!(
        config_value(&text, "listenPort"),
        Some(server.addr.port().to_string()),
        "§7.1: the real port is written back into the config"
    );
}

#[test]
fn disabling_the_all_topic_list_at_runtime_takes_effect_and_is_persisted() {
    let server = TestServer::start();
    let mut client = server.client();
    assert_eq!(client.register(&broker_a()).code, SUCCESS);
    let resp = all_topic_list(&mut client);
    assert_eq!(resp.code, SUCCESS);
    let topics = json_body(&resp)["topicList"].clone();
    assert!(topics.as_array().unwrap().contains(&json!("TopicOrder")), "{topics}");

    let resp = update_config(&mut client, Some("enableAllTopicList=false"));
    assert_eq!(resp.code, SUCCESS, "{:?}", resp.remark);
    let resp = all_topic_list(&mut client);
    assert_eq!(resp.code, SYSTEM_ERROR);
    assert_eq!(resp.remark.as_deref(), Some("disable"));
    let text = get_config(&mut client);
    assert!(text.lines().any(|l| l == "enableAllTopicList=false"), "GET shows the change:\n{text}");

    let stored = std::fs::read_to_string(&server.settings.config_store_path).expect("§2.3.19: persisted");
    assert!(stored.lines().any(|l| l == "enableAllTopicList=false"), "config store:\n{stored}");
    assert_eq!(stored, text, "§7.3: the whole config set, as GET_NAMESRV_CONFIG shows it");

    assert_eq!(update_config(&mut client, Some("enableAllTopicList=true")).code, SUCCESS);
    assert_eq!(all_topic_list(&mut client).code, SUCCESS);
    let bak = std::fs::read_to_string(with_suffix(&server.settings.config_store_path, ".bak")).unwrap();
    assert_eq!(bak, stored, "§7.3: the previous file is copied to .bak first");
}

#[test]
fn blacklisted_keys_are_refused_with_no_permission_and_change_nothing() {
    let server = TestServer::start();
    let mut client = server.client();
    let before = get_config(&mut client);
    for body in [
        "configStorePath=test/path",
        "kvConfigPath=test/path",
        "configBlackList=test;path",
        "rocketmqHome=/tmp/evil",
        "enableAllTopicList=false\nkvConfigPath=/tmp/evil.json",
    ] {
        let resp = update_config(&mut client, Some(body));
        assert_eq!(resp.code, NO_PERMISSION, "body {body:?}");
        let remark = resp.remark.unwrap_or_default();
        assert!(remark.contains("Can not update config in black list."), "body {body:?}: remark {remark:?}");
    }
    assert_eq!(get_config(&mut client), before, "nothing changed");
    assert_eq!(all_topic_list(&mut client).code, SUCCESS, "the allowed key in a refused update is not applied");
    assert!(!Path::new(&server.settings.config_store_path).exists(), "nothing was persisted");
}

#[test]
fn a_java_map_to_string_body_is_accepted() {
    let server = TestServer::start();
    let mut client = server.client();
    let before = get_config(&mut client);
    let resp = update_config(&mut client, Some("{key=value}"));
    assert_eq!(resp.code, SUCCESS, "§9.1 testUpdateConfig: {:?}", resp.remark);
    assert_eq!(get_config(&mut client), before, "an unknown key changes nothing");
}

#[test]
fn an_update_without_a_body_is_a_successful_no_op() {
    let server = TestServer::start();
    let mut client = server.client();
    let before = get_config(&mut client);
    let resp = update_config(&mut client, None);
    assert_eq!(resp.code, SUCCESS, "§2.3.19: body null → SUCCESS");
    assert_eq!(get_config(&mut client), before);
}

#[test]
fn an_update_with_a_bad_value_is_a_system_error_and_changes_nothing() {
    let server = TestServer::start();
    let mut client = server.client();
    let before = get_config(&mut client);
    let resp = update_config(&mut client, Some("scanNotActiveBrokerInterval=soon\nenableAllTopicList=false"));
    assert_eq!(resp.code, SYSTEM_ERROR, "remark {:?}", resp.remark);
    assert_eq!(get_config(&mut client), before, "nothing changed");
    assert_eq!(all_topic_list(&mut client).code, SUCCESS);
}

#[test]
fn an_update_of_enable_topic_list_succeeds_as_in_javas_test() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = update_config(&mut client, Some("enableTopicList=true"));
    assert_eq!(resp.code, SUCCESS, "§9.1 testProcessRequest_UpdateConfigPath: {:?}", resp.remark);
    assert_eq!(config_value(&get_config(&mut client), "enableTopicList").as_deref(), Some("true"));
}

// ---------------------------------------------------------------------------------------------
// §7.1: start-up and shutdown of the binary

const JAVA_PROPERTIES: &str =
    "listenPort=0\nbindAddress=127.0.0.1\nclientRequestThreadPoolNums=8\nenableAllTopicList=false\n";

#[test]
fn the_binary_starts_from_a_java_properties_file() {
    let dir = temp_dir();
    let file = dir.join("that.properties");
    std::fs::write(&file, JAVA_PROPERTIES).unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file);
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    assert!(addr.ip().is_loopback(), "bindAddress=127.0.0.1 is used: {addr}");
    assert_ne!(addr.port(), 0);
    let mut client = Client::connect(addr);
    let resp = all_topic_list(&mut client);
    assert_eq!(resp.code, SYSTEM_ERROR);
    assert_eq!(resp.remark.as_deref(), Some("disable"), "enableAllTopicList=false from the file");
    assert_eq!(config_value(&get_config(&mut client), "enableAllTopicList").as_deref(), Some("false"));
}

#[test]
fn print_config_shows_the_settings_of_a_java_properties_file() {
    let dir = temp_dir();
    let file = dir.join("that.properties");
    std::fs::write(&file, JAVA_PROPERTIES).unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file).arg("-p");
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    for line in ["enable_all_topic_list = false", "listen_port = 0", "bind_address = \"127.0.0.1\""] {
        assert!(stdout.lines().any(|l| l == line), "missing {line:?} in\n{stdout}");
    }
    assert!(!stdout.contains("clientRequestThreadPoolNums"), "the Java-only key is ignored");
}

#[test]
fn an_unknown_key_in_a_properties_file_fails_start_up_naming_it() {
    let dir = temp_dir();
    let file = dir.join("bad.properties");
    std::fs::write(&file, "listenPort=0\nenableAllTopicLsit=false\n").unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file);
    let (status, _, stderr) = run_to_exit(cmd);
    assert!(!status.success(), "start-up must fail");
    assert!(stderr.contains("enableAllTopicLsit"), "stderr names the key:\n{stderr}");
    assert!(!stderr.contains("listening"), "it never served:\n{stderr}");
}

#[test]
fn an_update_rewrites_the_properties_file_given_with_c_and_the_next_start_reads_it() {
    let dir = temp_dir();
    let file = dir.join("that.properties");
    std::fs::write(&file, JAVA_PROPERTIES).unwrap();
    let command = || {
        let mut cmd = namesrv_command(&dir);
        // §7.1: with -c, configStorePath is that file.
        cmd.env_remove("NAMESRV_CONFIG_STORE_PATH").arg("-c").arg(&file);
        cmd
    };
    let mut proc = Proc::spawn(command());
    let mut client = Client::connect(proc.addr());
    assert_eq!(config_value(&get_config(&mut client), "configStorePath"), Some(file.display().to_string()));
    let resp = update_config(&mut client, Some("enableAllTopicList=true\norderMessageEnable=true"));
    assert_eq!(resp.code, SUCCESS, "{:?}", resp.remark);
    assert_eq!(all_topic_list(&mut client).code, SUCCESS);
    drop(client);
    drop(proc);

    let stored = std::fs::read_to_string(&file).unwrap();
    assert!(stored.lines().any(|l| l == "enableAllTopicList=true"), "§7.3: the -c file is overwritten:\n{stored}");
    assert!(stored.lines().any(|l| l == "orderMessageEnable=true"), "{stored}");
    assert_eq!(std::fs::read_to_string(with_suffix(&file.display().to_string(), ".bak")).unwrap(), JAVA_PROPERTIES);

    let mut proc = Proc::spawn(command());
    let mut client = Client::connect(proc.addr());
    assert_eq!(all_topic_list(&mut client).code, SUCCESS, "the rewritten file starts the server with the update");
    assert_eq!(config_value(&get_config(&mut client), "orderMessageEnable").as_deref(), Some("true"));
}

#[test]
fn sigterm_stops_the_binary_gracefully_with_exit_status_zero() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    put_ok(&mut client, "ns", "k", "v");
    let started = Instant::now();
    proc.terminate();
    let status = proc.wait(Duration::from_secs(10));
    assert!(status.success(), "exit status {status}; stderr:\n{}", proc.stderr());
    assert!(started.elapsed() < Duration::from_secs(6), "stopped within the drain timeout: {:?}", started.elapsed());
    let stderr = proc.stderr();
    assert!(stderr.contains("shutdown complete"), "stderr:\n{stderr}");
    assert!(client.closed_by_server(Duration::from_secs(2)), "open connections are closed");
    assert_eq!(read_json(dir.join("kvConfig.json")), json!({"configTable": {"ns": {"k": "v"}}}));
}
