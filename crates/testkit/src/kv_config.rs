//! KV and runtime-config requests, codes and file checks shared by the KV store and runtime
//! configuration tests.

use std::path::{Path, PathBuf};

use namesrv::protocol::{ExtFields, RemotingCommand};
use serde_json::Value;

use crate::{Broker, Client};

/// PUT_KV_CONFIG.
pub const PUT_KV_CONFIG: i32 = 100;
/// UPDATE_NAMESRV_CONFIG.
pub const UPDATE_NAMESRV_CONFIG: i32 = 318;

/// Response code SUCCESS.
pub const SUCCESS: i32 = 0;
/// Response code SYSTEM_ERROR.
pub const SYSTEM_ERROR: i32 = 1;

/// PUT_KV_CONFIG of `namespace`/`key` = `value`; the answer.
pub fn put_kv(client: &mut Client, namespace: &str, key: &str, value: &str) -> RemotingCommand {
    let ext = ExtFields::new().with("namespace", namespace).with("key", key).with("value", value);
    client.call(RemotingCommand::request(PUT_KV_CONFIG, Some(ext)))
}

/// UPDATE_NAMESRV_CONFIG with `body` (properties text) when given; the answer.
pub fn update_config(client: &mut Client, body: Option<&str>) -> RemotingCommand {
    let mut cmd = RemotingCommand::request(UPDATE_NAMESRV_CONFIG, None);
    if let Some(body) = body {
        cmd = cmd.with_body(body.as_bytes().to_vec());
    }
    client.call(cmd)
}

/// PUT_KV_CONFIG that must succeed.
pub fn put_ok(client: &mut Client, namespace: &str, key: &str, value: &str) {
    let resp = put_kv(client, namespace, key, value);
    assert_eq!(resp.code, SUCCESS, "put {namespace}/{key}: {:?}", resp.remark);
}

/// A response's body as JSON.
pub fn json_body(resp: &RemotingCommand) -> Value {
    serde_json::from_slice(resp.body.as_deref().expect("a body")).expect("json body")
}

/// A JSON file's contents.
pub fn read_json(path: impl AsRef<Path>) -> Value {
    let bytes = std::fs::read(path.as_ref()).unwrap_or_else(|e| panic!("read {}: {e}", path.as_ref().display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{} is not json: {e}", path.as_ref().display()))
}

/// `path` with `suffix` appended (a journal or backup next to a state file).
pub fn with_suffix(path: &str, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{path}{suffix}"))
}

/// The broker the KV and configuration tests register: broker-a with two topics.
pub fn broker_a() -> Broker {
    Broker::new("DefaultCluster", "broker-a", 0, "127.0.0.1:10911").topics(&["TopicOrder", "TopicPlain"])
}
