//! Request builders shared by the admin-code, topic-list and zone tests.

use namesrv::protocol::body_crc32;
use namesrv::protocol::{ExtFields, RemotingCommand};
use serde_json::Value;

use crate::{Broker, Client};

/// A request with `code` and the given ext fields.
pub fn request(code: i32, fields: &[(&str, &str)]) -> RemotingCommand {
    RemotingCommand::request(code, Some(fields.iter().map(|(k, v)| (*k, *v)).collect::<ExtFields>()))
}

/// Registers `broker` with its RegisterBrokerBody JSON edited by `edit` (CRC recomputed).
pub fn register_edited(client: &mut Client, broker: &Broker, edit: impl FnOnce(&mut Value)) -> RemotingCommand {
    let mut body: Value = serde_json::from_slice(&broker.body_json()).unwrap();
    edit(&mut body);
    let bytes = serde_json::to_vec(&body).unwrap();
    let mut req = broker.register_request();
    req.ext_fields.as_mut().unwrap().insert("bodyCrc32", body_crc32(&bytes).to_string());
    client.call(req.with_body(bytes))
}

/// DELETE_TOPIC_IN_NAMESRV (216), with `clusterName` when given.
pub fn delete_topic(client: &mut Client, topic: &str, cluster: Option<&str>) -> RemotingCommand {
    let mut fields = vec![("topic", topic)];
    if let Some(cluster) = cluster {
        fields.push(("clusterName", cluster));
    }
    client.call(request(216, &fields))
}
