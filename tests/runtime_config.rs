//! Runtime configuration over TCP (spec §2.3.19–2.3.20, §7.1–7.3): GET/UPDATE_NAMESRV_CONFIG,
//! the config store, and start-up and shutdown of the real binary.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::kv_config::{broker_a, json_body, put_ok, read_json, update_config, with_suffix, SUCCESS, SYSTEM_ERROR};
use common::process::{namesrv_command, run_to_exit, Proc};
use common::*;
use namesrv::protocol::RemotingCommand;
use serde_json::json;

const GET_ALL_TOPIC_LIST: i32 = 206;
const GET_NAMESRV_CONFIG: i32 = 319;

const NO_PERMISSION: i32 = 16;

// ---------------------------------------------------------------------------------------------
// Requests

fn get_config(client: &mut Client) -> String {
    let resp = client.call(RemotingCommand::request(GET_NAMESRV_CONFIG, None));
    assert_eq!(resp.code, SUCCESS, "GET_NAMESRV_CONFIG: {:?}", resp.remark);
    String::from_utf8(resp.body.expect("GET_NAMESRV_CONFIG always has a body").to_vec()).unwrap()
}

fn all_topic_list(client: &mut Client) -> RemotingCommand {
    client.call(RemotingCommand::request(GET_ALL_TOPIC_LIST, None))
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
