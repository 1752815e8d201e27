//! Requests on the wire for each operation: REGISTER_BROKER bodies in plain JSON and in the
//! compressed layout (`RegisterBrokerBody.encode(true)`), and the matching model calls.

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use namesrv::protocol::{ExtFields, RemotingCommand};
use namesrv::service::namesrv::body_crc32;
use serde_json::{json, Value};

use super::ops::{Reg, Style, PERMS, TOPICS, ZONES};
use crate::differential::java_model::register::{RegisterCall, TopicConfig};
use crate::differential::java_model::unregister::BrokerIdentity;
use crate::differential::java_model::{Dv, QueueData};

/// The dataVersion timestamp every registration carries.
const TIMESTAMP: i64 = 1_700_000_000_000;

/// A request with `code` and `fields`.
pub fn request(code: i32, fields: &[(&str, &str)]) -> RemotingCommand {
    RemotingCommand::request(code, Some(fields.iter().map(|(k, v)| (*k, *v)).collect::<ExtFields>()))
}

/// UNREGISTER_BROKER / QUERY_DATA_VERSION fields of `who`.
pub fn identity_request(code: i32, who: &BrokerIdentity) -> RemotingCommand {
    let id = who.id.to_string();
    request(
        code,
        &[("brokerName", &who.name), ("brokerAddr", &who.addr), ("clusterName", &who.cluster), ("brokerId", &id)],
    )
}

/// The registration as the model sees it (a compressed body carries no `topicSysFlag`).
pub fn register_call(reg: &Reg, who: &BrokerIdentity) -> RegisterCall {
    let queue = QueueData {
        read: reg.queues,
        write: reg.queues,
        perm: PERMS[reg.perm],
        sys_flag: if reg.compressed { 0 } else { reg.sys_flag },
    };
    let topics = listed_topics(reg).map(|name| TopicConfig { name: name.to_owned(), queue }).collect();
    let filter_servers = reg.filter.map(|one| if one { vec![format!("fs-{}", who.addr)] } else { vec![] });
    RegisterCall {
        cluster: who.cluster.clone(),
        addr: who.addr.clone(),
        name: who.name.clone(),
        id: who.id,
        ha: format!("{}-ha", who.addr),
        zone: reg.zone.map(|z| ZONES[z].to_owned()),
        acting_master: match reg.style {
            Style::Old => None,
            Style::New { acting_master } => Some(acting_master),
        },
        dv: Dv { counter: reg.counter, state_version: reg.state_version, timestamp: TIMESTAMP },
        topics,
        filter_servers,
    }
}

fn listed_topics(reg: &Reg) -> impl Iterator<Item = &'static str> + '_ {
    TOPICS.iter().enumerate().filter(|(i, _)| reg.topics & (1 << i) != 0).map(|(_, t)| *t)
}

/// REGISTER_BROKER as a broker of `reg.style` sends it, with `bodyCrc32`.
pub fn register_request(reg: &Reg, call: &RegisterCall) -> RemotingCommand {
    let version = match reg.style {
        Style::Old => 409,
        Style::New { .. } => 479,
    };
    let body = if reg.compressed { compressed_body(call, version) } else { json_body(call) };
    let mut ext = ExtFields::new()
        .with("brokerName", &call.name)
        .with("brokerAddr", &call.addr)
        .with("clusterName", &call.cluster)
        .with("haServerAddr", &call.ha)
        .with("brokerId", call.id.to_string())
        .with("compressed", reg.compressed.to_string())
        .with("bodyCrc32", body_crc32(&body).to_string());
    if let Some(acting) = call.acting_master {
        ext.insert("enableActingMaster", acting.to_string());
    }
    if let Some(zone) = &call.zone {
        ext.insert("__ZONE_NAME", zone);
    }
    let mut cmd = RemotingCommand::request(103, Some(ext)).with_body(body);
    cmd.version = version;
    cmd
}

fn topic_config_json(tc: &TopicConfig) -> Value {
    let q = tc.queue;
    json!({"attributes":{},"order":false,"perm":q.perm,"readQueueNums":q.read,"topicFilterType":"SINGLE_TAG",
        "topicName":tc.name,"topicSysFlag":q.sys_flag,"writeQueueNums":q.write})
}

/// `RegisterBrokerBody` JSON.
fn json_body(call: &RegisterCall) -> Vec<u8> {
    let table: serde_json::Map<String, Value> =
        call.topics.iter().map(|tc| (tc.name.clone(), topic_config_json(tc))).collect();
    let mut body = json!({
        "topicConfigSerializeWrapper": {
            "dataVersion": call.dv.to_json(),
            "topicConfigTable": table,
            "topicQueueMappingDetailMap": {},
            "topicQueueMappingInfoMap": {}
        }
    });
    if let Some(list) = &call.filter_servers {
        body["filterServerList"] = json!(list);
    }
    serde_json::to_vec(&body).expect("json")
}

/// The zlib stream of length-prefixed parts; 4.x brokers (version < V5_0_0) write exactly five
/// fields per topic line and no mapping section.
fn compressed_body(call: &RegisterCall, version: i32) -> Vec<u8> {
    let mut s = Vec::new();
    let chunk = |s: &mut Vec<u8>, bytes: &[u8]| {
        s.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
        s.extend_from_slice(bytes);
    };
    chunk(&mut s, &serde_json::to_vec(&call.dv.to_json()).expect("json"));
    s.extend_from_slice(&(call.topics.len() as i32).to_be_bytes());
    for tc in &call.topics {
        let q = tc.queue;
        let attributes = if version >= 413 { " {}" } else { "" };
        let line = format!("{} {} {} {} SINGLE_TAG{attributes}", tc.name, q.read, q.write, q.perm);
        chunk(&mut s, line.as_bytes());
    }
    // A null list (`JSON.toJSONString(null)`) leaves the filter servers alone, as absent JSON does.
    let filters = serde_json::to_vec(&call.filter_servers).expect("json");
    chunk(&mut s, &filters);
    if version >= 413 {
        s.extend_from_slice(&0i32.to_be_bytes());
    }
    let mut zlib = ZlibEncoder::new(Vec::new(), Compression::best());
    zlib.write_all(&s).expect("deflate");
    zlib.finish().expect("deflate")
}

/// REGISTER_TOPIC_IN_NAMESRV: a `TopicRouteData` body holding only queue data.
pub fn register_topic_request(topic: &str, queues: &[(String, QueueData)]) -> RemotingCommand {
    let queue_datas: Vec<Value> = queues.iter().map(|(name, q)| q.to_json(name)).collect();
    let body = json!({"brokerDatas": [], "filterServerTable": {}, "queueDatas": queue_datas});
    request(217, &[("topic", topic)]).with_body(serde_json::to_vec(&body).expect("json"))
}

/// The queue data an operation registers for a topic, by pool index.
pub fn topic_queue(perm: usize) -> QueueData {
    QueueData { read: 2, write: 2, perm: PERMS[perm], sys_flag: perm as i32 % 4 }
}

/// DataVersion JSON for QUERY_DATA_VERSION.
pub fn data_version(counter: i64, state_version: i64) -> Dv {
    Dv { counter, state_version, timestamp: TIMESTAMP }
}
