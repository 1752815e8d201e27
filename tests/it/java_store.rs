//! A Java `-c` file is the config store, as Java's `NamesrvStartup` makes it
//! (`namesrvConfig.setConfigStorePath(file)`), whatever its own `configStorePath` says (issue 37,
//! item 1): the real binary, without the harness's `NAMESRV_CONFIG_STORE_PATH`, which would be an
//! explicit choice of another store.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::kv_config::{update_config, SUCCESS};
use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
use namesrv::protocol::RemotingCommand;

const GET_ALL_TOPIC_LIST: i32 = 206;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `namesrv -c <file>` with no store named by the environment, `HOME` in `dir`.
fn with_java_conf(dir: &Path, file: &Path) -> Command {
    let mut cmd = namesrv_command(dir);
    cmd.env_remove("NAMESRV_CONFIG_STORE_PATH").env("HOME", dir).arg("-c").arg(file);
    cmd
}

fn all_topic_list(proc: &mut Proc) -> RemotingCommand {
    Client::connect(proc.addr()).call(RemotingCommand::request(GET_ALL_TOPIC_LIST, None))
}

#[test]
fn a_java_file_naming_itself_as_config_store_starts_and_is_rewritten_in_place() {
    let dir = temp_dir();
    let path = dir.join("namesrv.conf");
    let text = format!("listenPort=0\nbindAddress=127.0.0.1\nconfigStorePath={}\n", path.display());
    let file = write(&dir, "namesrv.conf", &text);
    let mut proc = Proc::spawn(with_java_conf(&dir, &file));
    let mut client = Client::connect(proc.addr());
    assert_eq!(update_config(&mut client, Some("enableAllTopicList=false")).code, SUCCESS);
    drop(client);
    drop(proc);
    let stored = std::fs::read_to_string(&file).unwrap();
    assert!(stored.lines().any(|l| l == "enableAllTopicList=false"), "written into the -c file:\n{stored}");
    assert!(stored.contains(&format!("configStorePath={}", path.display())), "{stored}");
    assert!(dir.join("namesrv.conf.bak").exists(), "the previous text is kept, as Java's string2File keeps it");

    let mut proc = Proc::spawn(with_java_conf(&dir, &file));
    assert_eq!(all_topic_list(&mut proc).remark.as_deref(), Some("disable"), "the update survived the restart");
}

#[test]
fn a_copied_java_file_is_its_own_store_and_the_original_is_neither_read_nor_written() {
    let dir = temp_dir();
    let original_text = "enableAllTopicList=false\nbindAddress=0.0.0.0\nlistenPort=0\n";
    let original = write(&dir, "original.properties", original_text);
    let copy_text = format!(
        "bindAddress=127.0.0.1\nlistenPort=0\nenableAllTopicList=true\nconfigStorePath={}\n",
        original.display()
    );
    let copy = write(&dir, "copy.properties", &copy_text);
    let mut proc = Proc::spawn(with_java_conf(&dir, &copy));
    let addr = proc.addr();
    assert!(addr.ip().is_loopback(), "the copy's bindAddress holds: {addr}");
    assert_eq!(all_topic_list(&mut proc).code, SUCCESS, "the original's enableAllTopicList=false is not read");
    let note = proc.wait_for_line(&["configStorePath in a Java -c file is ignored"]);
    assert!(note.contains(&original.display().to_string()), "{note}");
    assert_eq!(update_config(&mut Client::connect(addr), Some("orderMessageEnable=true")).code, SUCCESS);
    assert_eq!(std::fs::read_to_string(&original).unwrap(), original_text, "the original is never written");
    let stored = std::fs::read_to_string(&copy).unwrap();
    assert!(stored.lines().any(|l| l == "orderMessageEnable=true"), "{stored}");
    assert!(stored.contains(&format!("configStorePath={}", copy.display())), "it names itself now:\n{stored}");
}

#[test]
fn a_saved_mqnamesrv_p_output_with_log_prefixes_loads_and_is_the_store() {
    let dir = temp_dir();
    let lines = [
        "kvConfigPath=/home/rocketmq/namesrv/kvConfig.json",
        "configStorePath=/home/rocketmq/namesrv/namesrv.properties",
        "scanNotActiveBrokerInterval=5000",
        "enableTopicList=false",
        "bindAddress=0.0.0.0",
        "listenPort=0",
        "serverWorkerThreads=8",
        "useTLS=false",
    ];
    let mut text = "load config properties file OK, /opt/rocketmq/conf/namesrv.conf\n".to_owned();
    for line in lines {
        text.push_str(&format!("2025-01-02 10:00:00 INFO main - {line}\n"));
    }
    let file = write(&dir, "saved-p.txt", &text);
    let mut cmd = with_java_conf(&dir, &file);
    cmd.args(["-p", "--format", "properties"]);
    let (status, stdout, stderr) = run_to_exit(cmd);
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    let store = format!("configStorePath={}", file.display());
    assert!(stdout.lines().any(|l| l == store), "{store} in\n{stdout}");
    assert!(stdout.lines().any(|l| l == "enableTopicList=false"), "{stdout}");
    assert!(stderr.contains("saved mqnamesrv -p output"), "{stderr}");
}
