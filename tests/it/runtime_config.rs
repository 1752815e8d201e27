//! Runtime configuration over TCP (Java's NamesrvConfig and NamesrvStartup): GET/UPDATE_NAMESRV_CONFIG,
//! the config store, and start-up and shutdown of the real binary.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::checks::assert_success;
use crate::common::kv_config::{
    broker_a, json_body, put_ok, read_json, update_config, with_suffix, SUCCESS, SYSTEM_ERROR,
};
use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
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
// UPDATE_NAMESRV_CONFIG (318) and GET_NAMESRV_CONFIG (319): runtime configuration

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
    assert!(text.ends_with('\n'), "GET_NAMESRV_CONFIG: `key=value\\n` lines");
    let pairs = config_pairs(&text);
    let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "GET_NAMESRV_CONFIG: sorted by key");
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
    assert_eq!(config_value(&text, "kvConfigPath").as_deref(), Some(server.settings.state.kv_config_path.as_str()));
    assert_eq!(
        config_value(&text, "configStorePath").as_deref(),
        Some(server.settings.state.config_store_path.as_str())
    );
}

#[test]
fn get_namesrv_config_lists_javas_remoting_keys_with_what_this_server_does() {
    let server = TestServer::start();
    let text = get_config(&mut server.client());
    let threads = server.settings.connection_threads().to_string();
    let epoll = cfg!(target_os = "linux").to_string();
    for (key, value) in [
        ("serverWorkerThreads", threads.as_str()),
        ("serverSelectorThreads", threads.as_str()),
        ("serverCallbackExecutorThreads", "0"),
        ("serverOnewaySemaphoreValue", "256"),
        ("serverAsyncSemaphoreValue", "64"),
        ("serverSocketBacklog", "1024"),
        ("serverSocketSndBufSize", "0"),
        ("serverSocketRcvBufSize", "0"),
        ("serverPooledByteBufAllocatorEnable", "false"),
        ("useEpollNativeSelector", epoll.as_str()),
        ("writeBufferHighWaterMark", &server.settings.limits.write_buffer_high_bytes.to_string()),
        ("writeBufferLowWaterMark", &server.settings.limits.write_buffer_low_bytes.to_string()),
        ("clusterTest", "false"),
        ("productEnvName", "center"),
    ] {
        assert_eq!(config_value(&text, key).as_deref(), Some(value), "{key} in\n{text}");
    }
    let home = config_value(&text, "rocketmqHome").unwrap_or_default();
    let state_dir = Path::new(&server.settings.state.kv_config_path).parent().unwrap().display().to_string();
    assert_eq!(home, state_dir, "rocketmqHome: the state directory when unset");
    assert_eq!(config_pairs(&text).iter().filter(|(k, _)| k == "rocketmqHome").count(), 1);
}

#[test]
fn get_namesrv_config_lists_every_key_java_5_3_3_lists() {
    let server = TestServer::start();
    let text = get_config(&mut server.client());
    let pairs = config_pairs(&text);
    let java =
        namesrv::settings::java::NAMESRV_CONFIG_KEYS.iter().chain(namesrv::settings::java::NETTY_SERVER_CONFIG_KEYS);
    for key in java {
        let count = pairs.iter().filter(|(k, _)| k == key).count();
        assert_eq!(
            count, 1,
            "{key}: Java's Configuration lists every NamesrvConfig and NettyServerConfig field:\n{text}"
        );
    }
    let threads = server.settings.connection_threads().to_string();
    for (key, value) in [
        ("clientRequestThreadPoolNums", threads.as_str()),
        ("defaultThreadPoolNums", threads.as_str()),
        ("enableControllerInNamesrv", "false"),
        ("enableShutdownGracefully", "true"),
        ("shutdownWaitTimeSeconds", "5"),
    ] {
        assert_eq!(config_value(&text, key).as_deref(), Some(value), "{key} in\n{text}");
    }
}

#[test]
fn get_namesrv_config_reports_the_port_actually_bound_when_listen_port_is_zero() {
    let server = TestServer::start();
    assert_eq!(server.settings.listen.listen_port, 0);
    let text = get_config(&mut server.client());
    // As in Java's NamesrvStartup, `listenPort=0` binds an ephemeral port and the real port is written back.
    assert_eq!(
        config_value(&text, "listenPort"),
        Some(server.addr.port().to_string()),
        "the real port is written back into the config"
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

    let stored =
        std::fs::read_to_string(&server.settings.state.config_store_path).expect("UPDATE_NAMESRV_CONFIG persisted");
    assert_eq!(
        stored, "enableAllTopicList=false\n",
        "only the changed key is persisted: the file is a layer the next start reads over the config files"
    );

    assert_eq!(update_config(&mut client, Some("enableAllTopicList=true")).code, SUCCESS);
    assert_eq!(all_topic_list(&mut client).code, SUCCESS);
    let bak = std::fs::read_to_string(with_suffix(&server.settings.state.config_store_path, ".bak")).unwrap();
    assert_eq!(bak, stored, "the previous file is copied to .bak first (MixAll.string2File)");
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
    assert!(!Path::new(&server.settings.state.config_store_path).exists(), "nothing was persisted");
}

// Java ignores keys that are no setting (RequestProcessorTest.testUpdateConfig sends "{key=value}"
// and expects SUCCESS); here an unknown key is refused, naming it, and nothing changes.
#[test]
fn an_unknown_key_is_refused_naming_it() {
    let server = TestServer::start();
    let mut client = server.client();
    let before = get_config(&mut client);
    let resp = update_config(&mut client, Some("{key=value}"));
    assert_eq!((resp.code, resp.remark.as_deref()), (SYSTEM_ERROR, Some("unknown config key {key")));
    assert_eq!(get_config(&mut client), before, "an unknown key changes nothing");
}

#[test]
fn restart_only_keys_are_refused_and_nothing_is_applied_or_persisted() {
    let server = TestServer::start();
    let mut client = server.client();
    assert_success(&client.register(&broker_a()));
    let before = get_config(&mut client);
    for body in [
        "needWaitForService=true\nwaitSecondsForService=999999999",
        "max_frame_bytes=1024",
        "listenPort=1",
        "bindAddress=not an address",
        "enableAllTopicList=false\nroute_cache_max_bytes=0",
    ] {
        let resp = update_config(&mut client, Some(body));
        assert_eq!(resp.code, SYSTEM_ERROR, "{body:?}");
        let remark = resp.remark.unwrap_or_default();
        assert!(remark.contains("applies only at start"), "{body:?}: {remark}");
    }
    assert_eq!(get_config(&mut client), before, "nothing changed");
    assert!(!Path::new(&server.settings.state.config_store_path).exists(), "nothing was persisted");
    assert!(client.route("TopicOrder").is_ok(), "routing stays on");
    assert_eq!(all_topic_list(&mut client).code, SUCCESS);
}

#[test]
fn runtime_values_are_checked() {
    let server = TestServer::start();
    let mut client = server.client();
    for body in ["enableTopicList=yes", "broker_timeout_ms=5", "broker_timeout_ms=-1"] {
        let resp = update_config(&mut client, Some(body));
        assert_eq!(resp.code, SYSTEM_ERROR, "{body}");
        assert!(resp.remark.unwrap_or_default().starts_with("invalid value for"), "{body}");
    }
    assert_success(&update_config(&mut client, Some("broker_timeout_ms=60000")));
}

#[test]
fn one_update_cannot_cut_the_broker_timeout_below_the_runtime_minimum() {
    let server = TestServer::start();
    let mut client = server.client();
    assert_success(&client.register(&broker_a()));
    let before = get_config(&mut client);
    for body in ["broker_timeout_ms=1000", "enableTopicList=false\nbroker_timeout_ms=59999"] {
        let resp = update_config(&mut client, Some(body));
        assert_eq!(resp.code, SYSTEM_ERROR, "{body:?}");
        let remark = resp.remark.unwrap_or_default();
        assert!(remark.contains("outside the runtime range 60000..=86400000"), "{body:?}: {remark}");
    }
    assert_eq!(get_config(&mut client), before, "nothing changed");
    assert!(!Path::new(&server.settings.state.config_store_path).exists(), "nothing was persisted");
    assert!(client.route("TopicOrder").is_ok(), "the broker stays routed");
    assert_success(&update_config(&mut client, Some("broker_timeout_ms=60000")));
    assert_eq!(config_value(&get_config(&mut client), "broker_timeout_ms").as_deref(), Some("60000"));
}

#[test]
fn an_update_without_a_body_is_a_successful_no_op() {
    let server = TestServer::start();
    let mut client = server.client();
    let before = get_config(&mut client);
    let resp = update_config(&mut client, None);
    assert_eq!(resp.code, SUCCESS, "UPDATE_NAMESRV_CONFIG: body null → SUCCESS");
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
    assert_eq!(resp.code, SUCCESS, "RequestProcessorTest.testProcessRequest_UpdateConfigPath: {:?}", resp.remark);
    assert_eq!(config_value(&get_config(&mut client), "enableTopicList").as_deref(), Some("true"));
}

// ---------------------------------------------------------------------------------------------
// NamesrvStartup: start-up and shutdown of the binary

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
        // As in Java's NamesrvStartup, with -c the configStorePath is that file.
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
    assert!(stored.lines().any(|l| l == "enableAllTopicList=true"), "the -c file is overwritten:\n{stored}");
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

#[test]
fn accepted_updates_are_logged_with_the_peer_and_old_and_new_values_and_refusals_warned() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    let peer = client.local_addr().to_string();
    assert_success(&update_config(&mut client, Some("enableTopicList=false")));
    assert_eq!(update_config(&mut client, Some("listenPort=1")).code, SYSTEM_ERROR);
    let wanted = |line: &str| {
        line.contains(&format!("peer={peer}"))
            && ((line.contains("INFO") && line.contains("config updated") && line.contains("old=true new=false"))
                || (line.contains("WARN") && line.contains("config update refused") && line.contains("listenPort")))
    };
    assert!(
        eventually(Duration::from_secs(5), || proc.stderr().lines().filter(|l| wanted(l)).count() == 2),
        "log:\n{}",
        proc.stderr()
    );
}
