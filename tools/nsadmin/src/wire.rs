//! The requests nsadmin sends and the answer bodies it reads (Java's `ClusterInfo`,
//! `TopicRouteData`, `TopicList`, `KVTable`, `GetBrokerMemberGroupResponseBody`), read leniently:
//! fastjson's bare numeric keys, `null` for empty collections, unknown fields ignored.

use std::collections::{BTreeMap, BTreeSet};

use namesrv_protocol::json::lenient::parse_lenient;
use namesrv_protocol::{ExtFields, RemotingCommand, RequestCode};
use serde::{Deserialize, Serialize};

use crate::lenient::{null_default, pairs_as_map, sorted_pairs};

/// Parses an answer body; a missing body parses as empty input (and fails).
pub fn parse<T: serde::de::DeserializeOwned>(body: Option<&[u8]>) -> Result<T, serde_json::Error> {
    parse_lenient(body.unwrap_or_default())
}

/// One broker group: cluster, name and member addresses by broker id (Java's `BrokerData`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerData {
    /// The cluster the group belongs to.
    #[serde(default, deserialize_with = "null_default")]
    pub cluster: String,
    /// The group's name.
    #[serde(default, deserialize_with = "null_default")]
    pub broker_name: String,
    /// Member addresses by broker id (0 is the master), sorted by id: a JSON object read as
    /// pairs, without a tree node for each group's few members.
    #[serde(default, deserialize_with = "sorted_pairs", serialize_with = "pairs_as_map")]
    pub broker_addrs: Vec<(i64, String)>,
    /// Whether the group runs with acting-master support.
    #[serde(default, deserialize_with = "null_default")]
    pub enable_acting_master: bool,
    /// The group's zone, when it registered one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_name: Option<String>,
}

/// GET_BROKER_CLUSTER_INFO's body (Java's `ClusterInfo`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfo {
    /// Every broker group by name.
    #[serde(default, deserialize_with = "null_default")]
    pub broker_addr_table: BTreeMap<String, BrokerData>,
    /// The group names of each cluster.
    #[serde(default, deserialize_with = "null_default")]
    pub cluster_addr_table: BTreeMap<String, BTreeSet<String>>,
}

impl ClusterInfo {
    /// The cluster a group belongs to, from the cluster table (or the group's own field).
    pub fn cluster_of(&self, broker: &str) -> Option<&str> {
        let listed = self.cluster_addr_table.iter().find(|(_, names)| names.contains(broker)).map(|(c, _)| c.as_str());
        listed.or_else(|| self.broker_addr_table.get(broker).map(|b| b.cluster.as_str()).filter(|c| !c.is_empty()))
    }

    /// Every (cluster, group) in table order: by cluster, then the groups no cluster lists (a
    /// NameServer mid-change) under their own cluster field.
    pub fn groups(&self) -> Vec<(&str, &str)> {
        let mut out = Vec::new();
        let mut listed = BTreeSet::new();
        for (cluster, names) in &self.cluster_addr_table {
            for name in names {
                listed.insert(name.as_str());
                out.push((cluster.as_str(), name.as_str()));
            }
        }
        for (name, group) in self.broker_addr_table.iter().filter(|(n, _)| !listed.contains(n.as_str())) {
            out.push((group.cluster.as_str(), name.as_str()));
        }
        out
    }
}

/// One group's queues for a topic (Java's `QueueData`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueData {
    /// The group serving the queues.
    #[serde(default, deserialize_with = "null_default")]
    pub broker_name: String,
    /// Readable queues.
    #[serde(default)]
    pub read_queue_nums: i32,
    /// Writable queues.
    #[serde(default)]
    pub write_queue_nums: i32,
    /// PERM_* bits: 2 write, 4 read, 1 inherit.
    #[serde(default)]
    pub perm: i32,
    /// UNIT / UNIT_SUB flags.
    #[serde(default)]
    pub topic_sys_flag: i32,
}

impl QueueData {
    /// `r8 w8 RW-` plus the sys flag when set: what a diff and a table show.
    pub fn summary(&self) -> String {
        let flag = if self.topic_sys_flag != 0 { format!(" sysflag={}", self.topic_sys_flag) } else { String::new() };
        format!("r{} w{} {}{flag}", self.read_queue_nums, self.write_queue_nums, perm_name(self.perm))
    }
}

/// PERM bits as mqadmin shows them: `R`, `W` and `X` (inherit), `-` for a missing bit.
pub fn perm_name(perm: i32) -> String {
    let bit = |mask: i32, c: char| if perm & mask != 0 { c } else { '-' };
    [bit(4, 'R'), bit(2, 'W'), bit(1, 'X')].iter().collect()
}

/// GET_ROUTEINFO_BY_TOPIC's body (Java's `TopicRouteData`); static-topic mappings are not read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicRoute {
    /// The ORDER_TOPIC_CONFIG value, when the NameServer serves order configs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_topic_conf: Option<String>,
    /// Queues by group.
    #[serde(default, deserialize_with = "null_default")]
    pub queue_datas: Vec<QueueData>,
    /// The groups serving the topic.
    #[serde(default, deserialize_with = "null_default")]
    pub broker_datas: Vec<BrokerData>,
    /// Filter servers by broker address (4.x).
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "BTreeMap::is_empty")]
    pub filter_server_table: BTreeMap<String, Vec<String>>,
}

/// A topic-list body (Java's `TopicList`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicList {
    /// Topic names.
    #[serde(default, deserialize_with = "null_default")]
    pub topic_list: BTreeSet<String>,
}

/// A `KVTable` body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvTable {
    /// Keys and values of one namespace.
    #[serde(default, deserialize_with = "null_default")]
    pub table: BTreeMap<String, String>,
}

/// GET_BROKER_MEMBER_GROUP's body (Java's `GetBrokerMemberGroupResponseBody`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberGroupBody {
    /// The group with its members.
    #[serde(default, deserialize_with = "null_default")]
    pub broker_member_group: MemberGroup,
}

/// A broker group's members (Java's `BrokerMemberGroup`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberGroup {
    /// The cluster asked about.
    #[serde(default, deserialize_with = "null_default")]
    pub cluster: String,
    /// The group asked about.
    #[serde(default, deserialize_with = "null_default")]
    pub broker_name: String,
    /// Member addresses by broker id.
    #[serde(default, deserialize_with = "null_default")]
    pub broker_addrs: BTreeMap<i64, String>,
}

/// A request with the given code and header fields.
pub fn request(code: RequestCode, fields: &[(&str, &str)]) -> RemotingCommand {
    let ext = (!fields.is_empty()).then(|| fields.iter().copied().collect::<ExtFields>());
    RemotingCommand::request(code as i32, ext)
}

/// GET_ROUTEINFO_BY_TOPIC as a 5.x client sends it (standard JSON answer).
pub fn route_request(topic: &str) -> RemotingCommand {
    request(RequestCode::GetRouteinfoByTopic, &[("topic", topic)])
}

/// The KV namespace the NameServer keeps order-topic configs in (Java's `NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG`).
pub const ORDER_TOPIC_NAMESPACE: &str = "ORDER_TOPIC_CONFIG";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_info_with_bare_keys_and_nulls_parses() {
        let body = br#"{"brokerAddrTable":{"b":{"brokerAddrs":{0:"1.2.3.4:10911",1:"1.2.3.5:10911"},"brokerName":"b","cluster":"C","enableActingMaster":null,"zoneName":null}},"clusterAddrTable":{"C":["b"]}}"#;
        let info: ClusterInfo = parse(Some(body)).expect("parses");
        let group = &info.broker_addr_table["b"];
        assert_eq!(group.broker_addrs, [(0, "1.2.3.4:10911".to_owned()), (1, "1.2.3.5:10911".to_owned())]);
        assert!(!group.enable_acting_master);
        assert_eq!(info.cluster_of("b"), Some("C"));
        assert_eq!(info.cluster_of("x"), None);
        let out = serde_json::to_string(&info).expect("serializes");
        assert!(out.contains(r#""brokerAddrs":{"0":"1.2.3.4:10911","1":"1.2.3.5:10911"}"#), "{out}");
    }

    #[test]
    fn route_with_nulls_and_unknown_fields_parses() {
        let body = br#"{"brokerDatas":null,"queueDatas":[{"brokerName":"b","perm":6,"readQueueNums":8,"writeQueueNums":4,"topicSysFlag":0}],"orderTopicConf":null,"topicQueueMappingByBroker":{"x":{}}}"#;
        let route: TopicRoute = parse(Some(body)).expect("parses");
        assert!(route.broker_datas.is_empty());
        assert_eq!(route.queue_datas[0].summary(), "r8 w4 RW-");
        assert_eq!(route.order_topic_conf, None);
        assert!(parse::<TopicRoute>(None).is_err());
    }

    #[test]
    fn perm_names_follow_the_bits() {
        assert_eq!(perm_name(6), "RW-");
        assert_eq!(perm_name(4), "R--");
        assert_eq!(perm_name(7), "RWX");
        assert_eq!(perm_name(0), "---");
    }
}
