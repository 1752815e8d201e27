//! KV and runtime-config requests, codes and file checks shared by the KV store and runtime
//! configuration tests.

use std::path::{Path, PathBuf};

use namesrv::protocol::{ExtFields, RemotingCommand};
use serde_json::Value;

use super::{Broker, Client};

pub const PUT_KV_CONFIG: i32 = 100;
pub const UPDATE_NAMESRV_CONFIG: i32 = 318;

pub const SUCCESS: i32 = 0;
pub const SYSTEM_ERROR: i32 = 1;

pub fn put_kv(client: &mut Client, namespace: &str, key: &str, value: &str) -> RemotingCommand {
    let ext = ExtFields::new().with("namespace", namespace).with("key", key).with("value", value);
    client.call(RemotingCommand::request(PUT_KV_CONFIG, Some(ext)))
}

pub fn update_config(client: &mut Client, body: Option<&str>) -> RemotingCommand {
    let mut cmd = RemotingCommand::request(UPDATE_NAMESRV_CONFIG, None);
    if let Some(body) = body {
        cmd = cmd.with_body(body.as_bytes().to_vec());
    }
    client.call(cmd)
}

pub fn put_ok(client: &mut Client, namespace: &str, key: &str, value: &str) {
    let resp = put_kv(client, namespace, key, value);
    assert_eq!(resp.code, SUCCESS, "put {namespace}/{key}: {:?}", resp.remark);
}

pub fn json_body(resp: &RemotingCommand) -> Value {
    serde_json::from_slice(resp.body.as_deref().expect("a body")).expect("json body")
}

pub fn read_json(path: impl AsRef<Path>) -> Value {
    let bytes = std::fs::read(path.as_ref()).unwrap_or_else(|e| panic!("read {}: {e}", path.as_ref().display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{} is not json: {e}", path.as_ref().display()))
}

pub fn with_suffix(path: &str, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{path}{suffix}"))
}

pub fn broker_a() -> Broker {
    Broker::new("DefaultCluster", "broker-a", 0, "127.0.0.1:10911").topics(&["TopicOrder", "TopicPlain"])
}
