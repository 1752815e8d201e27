//! Coming from the Java NameServer: each trap an operator hit when bringing a Java NameServer's
//! environment and files over, replayed against the real binary.

use std::path::{Path, PathBuf};

use crate::common::kv_config::{update_config, SUCCESS, SYSTEM_ERROR};
use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
use namesrv::protocol::RemotingCommand;

const GET_ALL_TOPIC_LIST: i32 = 206;

fn all_topic_list(client: &mut Client) -> RemotingCommand {
    client.call(RemotingCommand::request(GET_ALL_TOPIC_LIST, None))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn line_is(text: &str, line: &str) -> bool {
    text.lines().any(|l| l == line)
}

// ---------------------------------------------------------------------------------------------
// The environment

#[test]
fn namesrv_addr_and_kubernetes_service_links_in_the_environment_do_not_stop_start_up() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.env("NAMESRV_ADDR", "namesrv-0.namesrv:9876;namesrv-1.namesrv:9876")
        .env("NAMESRV_SERVICE_HOST", "10.96.0.12")
        .env("NAMESRV_SERVICE_PORT_REMOTING", "9876")
        .env("NAMESRV_PORT", "tcp://10.96.0.12:9876")
        .env("NAMESRV_PORT_9876_TCP_ADDR", "10.96.0.12")
        .env("NAMESRV_BIND_ADDRESS", "127.0.0.1")
        .env("NAMESRV_LISTEN_PORT", "0");
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    assert!(addr.ip().is_loopback(), "NAMESRV_BIND_ADDRESS still applies: {addr}");
    assert_eq!(proc.client_call_cluster_info(), 0);
    let stderr = proc.stderr();
    assert!(!stderr.contains("WARN") && !stderr.contains("ERROR"), "nothing to warn about:\n{stderr}");
}

#[test]
fn environment_overrides_apply_under_our_names_and_java_names() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.env("NAMESRV_ADDR", "127.0.0.1:9876")
        .env("NAMESRV_LISTEN_PORT", "19877")
        .env("NAMESRV_SCANNOTACTIVEBROKERINTERVAL", "700")
        .arg("-p");
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    assert!(line_is(&stdout, "listen_port = 19877"), "{stdout}");
    assert!(line_is(&stdout, "scan_interval_ms = 700"), "{stdout}");
}

trait ClusterInfo {
    fn client_call_cluster_info(&mut self) -> i32;
}

impl ClusterInfo for Proc {
    fn client_call_cluster_info(&mut self) -> i32 {
        Client::connect(self.addr()).call(RemotingCommand::request(106, None)).code
    }
}

// ---------------------------------------------------------------------------------------------
// The -c file

/// A file as Apache's distribution ships them (`conf/namesrv.conf`): Java properties, with keys
/// of NamesrvConfig, NettyServerConfig and NettyClientConfig.
const NAMESRV_CONF: &str = "\
# namesrv.conf
listenPort=0
bindAddress=127.0.0.1
enableAllTopicList = false
serverWorkerThreads=8
clientWorkerThreads=4
useTLS=false
enableControllerInNamesrv=false
rocketmqHome=/opt/rocketmq
";

#[test]
fn apaches_namesrv_conf_is_read_as_java_properties_and_serves() {
    let dir = temp_dir();
    let file = write(&dir, "namesrv.conf", NAMESRV_CONF);
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file);
    let mut proc = Proc::spawn(cmd);
    let mut client = Client::connect(proc.addr());
    let resp = all_topic_list(&mut client);
    assert_eq!(
        (resp.code, resp.remark.as_deref()),
        (SYSTEM_ERROR, Some("disable")),
        "enableAllTopicList=false applies"
    );
    let stderr = proc.stderr();
    let warned: Vec<&str> = stderr.lines().filter(|l| l.contains("ignoring Java settings")).collect();
    assert_eq!(warned.len(), 1, "one summary line:\n{stderr}");
    for key in ["serverWorkerThreads", "clientWorkerThreads", "useTLS", "enableControllerInNamesrv"] {
        assert!(warned[0].contains(&format!("\"{key}\"")), "{key} is named:\n{stderr}");
    }
}

#[test]
fn javas_mqnamesrv_options_are_accepted() {
    let dir = temp_dir();
    let file = write(&dir, "namesrv.conf", NAMESRV_CONF);
    let mut cmd = namesrv_command(&dir);
    cmd.args(["-n", "127.0.0.1:9876", "--configFile"]).arg(&file).arg("--printConfigItem");
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    assert!(line_is(&stdout, "enable_all_topic_list = false"), "{stdout}");
    assert!(stderr.contains("ignoring -n"), "{stderr}");
}

#[test]
fn config_format_forces_the_format_and_errors_name_the_file() {
    let dir = temp_dir();
    let file = write(&dir, "namesrv.conf", NAMESRV_CONF);
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file).args(["--config-format", "toml", "-p"]);
    let (status, _, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(2), "stderr:\n{stderr}");
    assert!(stderr.contains(&file.display().to_string()) && stderr.contains("read as TOML"), "{stderr}");

    let toml = write(&dir, "namesrv-toml.conf", "listen_port = 19878\nenable_topic_list = false\n");
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&toml).arg("-p");
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "a .conf holding TOML is read as TOML: {stderr}");
    assert!(line_is(&stdout, "listen_port = 19878") && line_is(&stdout, "enable_topic_list = false"), "{stdout}");
}

/// What a Java NameServer's `-p` prints (NamesrvConfig, NettyServerConfig, NettyClientConfig;
/// Java's defaults, the port 0 and paths moved), as an operator would save it as their file.
const JAVA_PRINTED_CONFIG: &str = "\
rocketmqHome=
kvConfigPath=/home/rocketmq/namesrv/kvConfig.json
configStorePath=/home/rocketmq/namesrv/namesrv.properties
productEnvName=center
clusterTest=false
orderMessageEnable=false
returnOrderTopicConfigToBroker=true
clientRequestThreadPoolNums=8
defaultThreadPoolNums=16
clientRequestThreadPoolQueueCapacity=50000
defaultThreadPoolQueueCapacity=10000
scanNotActiveBrokerInterval=5000
unRegisterBrokerQueueCapacity=3000
supportActingMaster=false
enableAllTopicList=true
enableTopicList=true
notifyMinBrokerIdChanged=false
enableControllerInNamesrv=false
needWaitForService=false
waitSecondsForService=45
deleteTopicWithBrokerRegistration=false
configBlackList=configBlackList;configStorePath;kvConfigPath
bindAddress=0.0.0.0
listenPort=0
serverWorkerThreads=8
serverCallbackExecutorThreads=0
serverSelectorThreads=3
serverOnewaySemaphoreValue=256
serverAsyncSemaphoreValue=64
serverChannelMaxIdleTimeSeconds=120
serverSocketSndBufSize=0
serverSocketRcvBufSize=0
writeBufferHighWaterMark=0
writeBufferLowWaterMark=0
serverSocketBacklog=1024
serverNettyWorkerGroupEnable=true
serverPooledByteBufAllocatorEnable=true
enableShutdownGracefully=false
shutdownWaitTimeSeconds=30
useEpollNativeSelector=false
clientWorkerThreads=4
clientCallbackExecutorThreads=2
clientOnewaySemaphoreValue=65535
clientAsyncSemaphoreValue=65535
connectTimeoutMillis=3000
channelNotActiveInterval=60000
isScanAvailableNameSrv=true
clientChannelMaxIdleTimeSeconds=120
clientSocketSndBufSize=0
clientSocketRcvBufSize=0
clientPooledByteBufAllocatorEnable=false
clientCloseSocketIfTimeout=true
useTLS=false
socksProxyConfig={}
writeBufferHighWaterMark=0
writeBufferLowWaterMark=0
disableCallbackExecutor=false
disableNettyWorkerGroup=false
maxReconnectIntervalTimeSeconds=60
enableReconnectForGoAway=true
";

#[test]
fn every_key_java_accepts_in_its_file_warns_instead_of_failing() {
    let dir = temp_dir();
    let file = write(&dir, "java.properties", JAVA_PRINTED_CONFIG);
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file).args(["-p", "--format", "properties"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    for line in ["serverChannelMaxIdleTimeSeconds=120", "scanNotActiveBrokerInterval=5000", "waitSecondsForService=45"]
    {
        assert!(line_is(&stdout, line), "{line} in\n{stdout}");
    }
    let warned: Vec<&str> = stderr.lines().filter(|l| l.contains("ignoring Java settings")).collect();
    assert_eq!(warned.len(), 1, "one summary line, not one per key (issue 37, 13a):\n{stderr}");
    for key in ["productEnvName", "serverWorkerThreads", "isScanAvailableNameSrv", "useTLS", "socksProxyConfig"] {
        assert!(warned[0].contains(&format!("\"{key}\"")), "{key} is named:\n{stderr}");
    }
    assert!(warned[0].contains("count=43"), "every Java key without a setting here:\n{stderr}");
}

#[test]
fn dotted_keys_of_a_java_file_are_ignored_as_java_ignores_them() {
    let dir = temp_dir();
    let text = "rocketmq.namesrv.domain=x\ncom.rocketmq.remoting.socket.sndbuf.size=65536\nlistenPort=0\n\
                needWaitForService=yes\n";
    let file = write(&dir, "dotted.conf", text);
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file).args(["-p", "--format", "properties"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    assert!(line_is(&stdout, "needWaitForService=false"), "Boolean.parseBoolean(\"yes\") is false:\n{stdout}");
    let warned = stderr.lines().find(|l| l.contains("ignoring Java settings")).unwrap_or_default();
    assert!(warned.contains("\"rocketmq.namesrv.domain\""), "{stderr}");
    assert!(stderr.contains("needWaitForService=yes") && stderr.contains("Boolean.parseBoolean"), "{stderr}");
}

#[test]
fn the_embedded_controller_turns_on_and_needs_its_peers() {
    let dir = temp_dir();
    let text = format!("{NAMESRV_CONF}enableControllerInNamesrv = true\ncontrollerDLegerPeers=n0-127.0.0.1:9878\n");
    let file = write(&dir, "controller.conf", &text);
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file);
    let (status, _, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(2), "stderr:\n{stderr}");
    assert!(stderr.contains("controller_self_id") && stderr.contains("n0"), "{stderr}");
    assert!(!stderr.contains("listening"), "it never served:\n{stderr}");

    let mut cmd = namesrv_command(&dir);
    cmd.args(["--set", "enableControllerInNamesrv=TRUE", "--set", "controllerDLegerPeers=n0-127.0.0.1:9878"]);
    cmd.args(["--set", "controllerDLegerSelfId=n0", "-p"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "the Java keys set the controller:\n{stderr}");
    assert!(stdout.contains("controller_mode = \"embedded\""), "{stdout}");
    assert!(stdout.contains("controller_peers = \"n0-127.0.0.1:9878\""), "{stdout}");
}

// ---------------------------------------------------------------------------------------------
// The defaults file

#[test]
fn a_config_directory_in_the_working_directory_is_never_read() {
    let elsewhere = temp_dir();
    std::fs::create_dir_all(elsewhere.join("config")).unwrap();
    write(&elsewhere.join("config"), "default.toml", "other_program_key = 1\nlisten_port = \"x\"\n");
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.current_dir(&elsewhere).arg("-p");
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "another program's config/default.toml is not ours: {stderr}");
    assert!(line_is(&stdout, "listen_port = 9876"), "{stdout}");

    let mut cmd = namesrv_command(&dir);
    cmd.arg("--config-dir").arg(elsewhere.join("config")).arg("-p");
    let (status, _, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(2), "named with --config-dir, it is read: {stderr}");
    let named = elsewhere.join("config/default.toml").display().to_string();
    let key_named = stderr.contains("other_program_key") || stderr.contains("listen_port");
    assert!(stderr.contains(&named) && key_named, "the error names file and key:\n{stderr}");
}

// ---------------------------------------------------------------------------------------------
// Runtime updates with a TOML config

#[test]
fn runtime_updates_with_a_toml_config_survive_a_restart_below_environment_and_flags() {
    let dir = temp_dir();
    let toml = "bind_address = \"127.0.0.1\"\nlisten_port = 0\nenable_all_topic_list = true\n";
    let file = write(&dir, "namesrv.toml", toml);
    let command = || {
        let mut cmd = namesrv_command(&dir);
        cmd.arg("-c").arg(&file);
        cmd
    };
    let mut proc = Proc::spawn(command());
    let mut client = Client::connect(proc.addr());
    assert_eq!(update_config(&mut client, Some("enableAllTopicList=false")).code, SUCCESS);
    drop(client);
    drop(proc);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), toml, "the TOML file is left as the operator wrote it");

    let mut proc = Proc::spawn(command());
    let mut client = Client::connect(proc.addr());
    let resp = all_topic_list(&mut client);
    assert_eq!(resp.remark.as_deref(), Some("disable"), "the update survived the restart");
    assert!(proc.stderr().contains("applying runtime updates"), "and start-up says so:\n{}", proc.stderr());
    drop(client);
    drop(proc);

    let mut cmd = command();
    cmd.env("NAMESRV_ENABLE_ALL_TOPIC_LIST", "true");
    let mut proc = Proc::spawn(cmd);
    let resp = all_topic_list(&mut Client::connect(proc.addr()));
    assert_eq!(resp.code, SUCCESS, "the environment is a later layer than runtime updates");
}

// ---------------------------------------------------------------------------------------------
// A Java NameServer's store at Java's default path, which is also ours

#[test]
fn a_java_dump_in_the_default_store_cannot_move_the_listener() {
    let dir = temp_dir();
    std::fs::create_dir_all(dir.join("namesrv")).unwrap();
    let java_store = "bindAddress=0.0.0.0\nlistenPort=0\nserverWorkerThreads=8\n\
                      configStorePath=/root/namesrv/namesrv.properties\nenableAllTopicList=false\n";
    let store = write(&dir.join("namesrv"), "namesrv.properties", java_store);
    let file = write(&dir, "namesrv.toml", "bind_address = \"127.0.0.1\"\nlisten_port = 0\n");
    let mut cmd = namesrv_command(&dir);
    cmd.env_remove("NAMESRV_CONFIG_STORE_PATH").env("HOME", &dir).arg("-c").arg(&file);
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    assert!(addr.ip().is_loopback(), "the TOML's bind_address holds, not the Java store's: {addr}");
    let resp = all_topic_list(&mut Client::connect(addr));
    assert_eq!(resp.remark.as_deref(), Some("disable"), "the store's runtime key still applies");
    let stderr = proc.stderr();
    let store = store.display().to_string();
    let warned = stderr.lines().find(|l| l.contains("cannot set") && l.contains(&store)).unwrap_or_default();
    for key in ["listenPort", "bindAddress", "configStorePath", "serverWorkerThreads"] {
        assert!(warned.contains(&format!("\"{key}\"")), "{key} named:\n{stderr}");
    }
    assert!(stderr.contains("written by a Java NameServer"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// Relative paths

#[test]
fn relative_paths_in_a_config_file_are_relative_to_the_file_and_flags_to_the_working_directory() {
    let dir = temp_dir();
    let file = write(&dir, "ns.toml", "kv_config_path = \"state/kv.json\"\ntls_cert_file = \"/abs/cert.pem\"\n");
    let mut cmd = namesrv_command(&dir);
    cmd.env_remove("NAMESRV_KV_CONFIG_PATH").arg("-c").arg(&file).args(["--set", "acl_accounts_file=acc.json", "-p"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    let kv = format!("kv_config_path = \"{}\"", dir.join("state/kv.json").display());
    assert!(line_is(&stdout, &kv), "{kv} in\n{stdout}");
    let cwd = Path::new(env!("CARGO_MANIFEST_DIR")).join("acc.json");
    assert!(line_is(&stdout, &format!("acl_accounts_file = \"{}\"", cwd.display())), "{stdout}");
    assert!(line_is(&stdout, "tls_cert_file = \"/abs/cert.pem\""), "absolute paths stay:\n{stdout}");
    assert!(line_is(&stdout, "tls_client_ca_file = \"\""), "empty stays empty:\n{stdout}");
}
