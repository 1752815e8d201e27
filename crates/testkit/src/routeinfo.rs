//! Helpers for the restated Java suites (RequestProcessorTest and the RouteInfoManager*Test classes): route
//! perms, data-version queries and the 3 × 3 broker grid.

use namesrv::model::DataVersion;
use namesrv::protocol::RemotingCommand;
use serde_json::Value;

use crate::{route_queue, Broker, Client};

/// The perm of broker `name`'s QueueData in a parsed route.
pub fn perm(route: &Value, name: &str) -> i64 {
    route_queue(route, name)["perm"].as_i64().unwrap_or_else(|| panic!("no queue data for {name} in {route}"))
}

/// QUERY_DATA_VERSION for `broker`'s identity, with `version` as the body when given.
pub fn query_data_version(client: &mut Client, broker: &Broker, version: Option<DataVersion>) -> RemotingCommand {
    let mut request = broker.identity_request(322);
    if let Some(v) = version {
        request = request.with_body(namesrv::protocol::reply::body::encode_data_version(&v));
    }
    client.call(request)
}

/// A DataVersion from its three parts.
pub fn dv(counter: i64, state_version: i64, timestamp: i64) -> DataVersion {
    DataVersion { counter, state_version, timestamp }
}

/// Broker `broker-N` id `id` at `cluster-broker-N:id`, with topics `topic-0..9`.
pub fn grid_broker(n: usize, id: i64) -> Broker {
    let topics: Vec<String> = (0..10).map(|t| format!("topic-{t}")).collect();
    let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
    Broker::new("cluster", &format!("broker-{n}"), id, &format!("cluster-broker-{n}:{id}")).topics(&topics)
}
