//! Response bodies as Java's NameServer writes them with fastjson: `TopicRouteData`,
//! `ClusterInfo`, `TopicList`, `GetBrokerMemberGroupResponseBody`, `KVTable` and `DataVersion`.
//!
//! Fields come out in fastjson's alphabetical order and maps sorted by key, so both JSON styles
//! are deterministic. What goes into a body is decided by the caller; this module only writes.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::json::{
    push_bool, push_decimal, push_field, push_int, push_int_key, push_joined, push_str, push_str_array, JsonStyle,
};
use crate::model::{BrokerData, DataVersion, QueueData, TopicQueueMappingInfo};

/// The parts of one topic's `TopicRouteData`, already selected by the registry.
#[derive(Debug, Default)]
pub struct TopicRoute<'a> {
    /// The broker groups serving the topic, sorted by name.
    pub broker_datas: Vec<Cow<'a, BrokerData>>,
    /// Filter servers by broker address (a 4.x legacy, usually empty).
    pub filter_servers: Vec<(&'a str, &'a [String])>,
    /// The ORDER_TOPIC_CONFIG entry, when order messages are enabled.
    pub order_topic_conf: Option<&'a str>,
    /// Each group's queues, sorted by broker name.
    pub queue_datas: Vec<(&'a str, &'a QueueData)>,
    /// Static-topic mappings by hosting broker, when the topic has any.
    pub mappings: Option<&'a BTreeMap<String, TopicQueueMappingInfo>>,
}

/// Encodes a `TopicRouteData`.
pub fn encode_topic_route(route: &TopicRoute, style: JsonStyle) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + route.broker_datas.len() * 160 + route.queue_datas.len() * 110);
    out.extend_from_slice(b"{\"brokerDatas\":[");
    push_joined(&mut out, &route.broker_datas, |out, group| push_broker_data(out, group, style));
    out.extend_from_slice(b"],\"filterServerTable\":{");
    push_joined(&mut out, &route.filter_servers, |out, (addr, servers)| {
        push_str(out, addr, style);
        out.push(b':');
        push_str_array(out, servers.iter().map(String::as_str), style);
    });
    out.push(b'}');
    if let Some(conf) = route.order_topic_conf {
        out.extend_from_slice(b",\"orderTopicConf\":");
        push_str(&mut out, conf, style);
    }
    out.extend_from_slice(b",\"queueDatas\":[");
    push_joined(&mut out, &route.queue_datas, |out, (name, queue)| push_queue_data(out, name, queue, style));
    out.push(b']');
    if let Some(mappings) = route.mappings {
        out.extend_from_slice(b",\"topicQueueMappingByBroker\":{");
        push_joined(&mut out, mappings, |out, (bname, info)| {
            push_str(out, bname, style);
            out.push(b':');
            push_mapping_info(out, info, style);
        });
        out.push(b'}');
    }
    out.push(b'}');
    out
}

/// Encodes a `ClusterInfo`, always with bare numeric keys as Java does.
pub fn encode_cluster_info<'a, N>(
    groups: impl IntoIterator<Item = &'a BrokerData>,
    clusters: impl IntoIterator<Item = (&'a str, N)>,
) -> Vec<u8>
where
    N: IntoIterator<Item = &'a str>,
{
    let style = JsonStyle::Fastjson;
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"brokerAddrTable\":{");
    push_joined(&mut out, groups, |out, group| {
        push_str(out, &group.broker_name, style);
        out.push(b':');
        push_broker_data(out, group, style);
    });
    out.extend_from_slice(b"},\"clusterAddrTable\":{");
    push_joined(&mut out, clusters, |out, (cluster, names)| {
        push_str(out, cluster, style);
        out.push(b':');
        push_str_array(out, names, style);
    });
    out.extend_from_slice(b"}}");
    out
}

/// Encodes a `TopicList`; `broker_addr` only for the system topic list.
pub fn encode_topic_list<'a>(topics: impl IntoIterator<Item = &'a str>, broker_addr: Option<&str>) -> Vec<u8> {
    let style = JsonStyle::Fastjson;
    let mut out = Vec::with_capacity(64);
    out.push(b'{');
    if let Some(addr) = broker_addr {
        out.extend_from_slice(b"\"brokerAddr\":");
        push_str(&mut out, addr, style);
        out.push(b',');
    }
    out.extend_from_slice(b"\"topicList\":");
    push_str_array(&mut out, topics, style);
    out.push(b'}');
    out
}

/// Encodes a `GetBrokerMemberGroupResponseBody`, always with bare numeric keys.
pub fn encode_member_group(cluster: &str, broker: &str, addrs: &BTreeMap<i64, String>) -> Vec<u8> {
    let style = JsonStyle::Fastjson;
    let mut out = Vec::with_capacity(96);
    out.extend_from_slice(b"{\"brokerMemberGroup\":{\"brokerAddrs\":");
    push_addr_map(&mut out, addrs, style);
    out.extend_from_slice(b",\"brokerName\":");
    push_str(&mut out, broker, style);
    out.extend_from_slice(b",\"cluster\":");
    push_str(&mut out, cluster, style);
    out.extend_from_slice(b"}}");
    out
}

/// Encodes a `KVTable` (`{"table":{...}}`), as GET_KVLIST_BY_NAMESPACE and REGISTER_BROKER send it.
pub fn encode_kv_table(table: &BTreeMap<String, String>) -> Vec<u8> {
    let style = JsonStyle::Fastjson;
    let mut out = Vec::with_capacity(16 + table.iter().map(|(k, v)| k.len() + v.len() + 6).sum::<usize>());
    out.extend_from_slice(b"{\"table\":{");
    push_joined(&mut out, table, |out, (key, value)| {
        push_str(out, key, style);
        out.push(b':');
        push_str(out, value, style);
    });
    out.extend_from_slice(b"}}");
    out
}

/// Encodes a `DataVersion` (fields in alphabetical order).
pub fn encode_data_version(v: &DataVersion) -> Vec<u8> {
    let mut out = Vec::with_capacity(80);
    out.extend_from_slice(b"{\"counter\":");
    push_decimal(&mut out, v.counter);
    out.extend_from_slice(b",\"stateVersion\":");
    push_decimal(&mut out, v.state_version);
    out.extend_from_slice(b",\"timestamp\":");
    push_decimal(&mut out, v.timestamp);
    out.push(b'}');
    out
}

/// One `BrokerData` object.
fn push_broker_data(out: &mut Vec<u8>, group: &BrokerData, style: JsonStyle) {
    out.extend_from_slice(b"{\"brokerAddrs\":");
    push_addr_map(out, &group.broker_addrs, style);
    out.extend_from_slice(b",\"brokerName\":");
    push_str(out, &group.broker_name, style);
    out.extend_from_slice(b",\"cluster\":");
    push_str(out, &group.cluster, style);
    out.extend_from_slice(b",\"enableActingMaster\":");
    push_bool(out, group.enable_acting_master);
    if let Some(zone) = &group.zone_name {
        out.extend_from_slice(b",\"zoneName\":");
        push_str(out, zone, style);
    }
    out.push(b'}');
}

/// One `QueueData` object.
fn push_queue_data(out: &mut Vec<u8>, broker_name: &str, queue: &QueueData, style: JsonStyle) {
    out.extend_from_slice(b"{\"brokerName\":");
    push_str(out, broker_name, style);
    for (field, value) in [
        (&b",\"perm\":"[..], queue.perm),
        (b",\"readQueueNums\":", queue.read_queue_nums),
        (b",\"topicSysFlag\":", queue.topic_sys_flag),
        (b",\"writeQueueNums\":", queue.write_queue_nums),
    ] {
        out.extend_from_slice(field);
        push_decimal(out, value);
    }
    out.push(b'}');
}

/// A broker-id → address map.
fn push_addr_map(out: &mut Vec<u8>, addrs: &BTreeMap<i64, String>, style: JsonStyle) {
    out.push(b'{');
    push_joined(out, addrs, |out, (id, addr)| {
        push_int_key(out, *id, style);
        push_str(out, addr, style);
    });
    out.push(b'}');
}

/// One `TopicQueueMappingInfo` object.
fn push_mapping_info(out: &mut Vec<u8>, info: &TopicQueueMappingInfo, style: JsonStyle) {
    out.extend_from_slice(b"{\"bname\":");
    push_str(out, &info.bname, style);
    out.extend_from_slice(b",\"currIdMap\":{");
    push_joined(out, &info.curr_id_map, |out, (global, local)| {
        push_int_key(out, *global, style);
        push_int(out, *local, style);
    });
    out.extend_from_slice(b"},\"dirty\":");
    push_bool(out, info.dirty);
    out.push(b',');
    push_field(out, "epoch");
    push_int(out, info.epoch, style);
    out.extend_from_slice(b",\"scope\":");
    push_str(out, &info.scope, style);
    out.extend_from_slice(b",\"topic\":");
    push_str(out, &info.topic, style);
    out.extend_from_slice(b",\"totalQueues\":");
    push_decimal(out, info.total_queues);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_table_body_is_javas_shape() {
        let table: BTreeMap<String, String> = [("TopicOrder".to_owned(), "broker-a:4;broker-b:4".to_owned())].into();
        assert_eq!(encode_kv_table(&table), br#"{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}"#);
        assert_eq!(encode_kv_table(&BTreeMap::new()), br#"{"table":{}}"#);
    }

    #[test]
    fn data_version_fields_are_alphabetical() {
        let v = DataVersion { counter: 5, state_version: -1, timestamp: 1_700_000_000_123 };
        assert_eq!(encode_data_version(&v), br#"{"counter":5,"stateVersion":-1,"timestamp":1700000000123}"#);
    }

    #[test]
    fn a_route_has_every_part_in_fastjson_order_in_both_styles() {
        let mut group = BrokerData::new("C", "b");
        group.broker_addrs.insert(0, "1.2.3.4:10911".into());
        let queue = QueueData { read_queue_nums: 4, write_queue_nums: 4, perm: 6, topic_sys_flag: 0 };
        let servers = vec!["f:1".to_owned()];
        let route = TopicRoute {
            broker_datas: vec![Cow::Owned(group)],
            filter_servers: vec![("1.2.3.4:10911", &servers)],
            order_topic_conf: Some("b:4"),
            queue_datas: vec![("b", &queue)],
            mappings: None,
        };
        let fast = String::from_utf8(encode_topic_route(&route, JsonStyle::Fastjson)).unwrap();
        assert_eq!(
            fast,
            r#"{"brokerDatas":[{"brokerAddrs":{0:"1.2.3.4:10911"},"brokerName":"b","cluster":"C","enableActingMaster":false}],"filterServerTable":{"1.2.3.4:10911":["f:1"]},"orderTopicConf":"b:4","queueDatas":[{"brokerName":"b","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#
        );
        let standard = String::from_utf8(encode_topic_route(&route, JsonStyle::Standard)).unwrap();
        assert!(standard.contains(r#"{"0":"1.2.3.4:10911"}"#), "{standard}");
    }
}
