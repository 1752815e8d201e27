//! Response bodies built from the tables: TopicRouteData (spec §3.3, §5.9) and ClusterInfo (§3.5).
//!
//! Fields come out in fastjson's alphabetical order and maps sorted by key, so both styles are
//! deterministic; the route lists are sorted by broker name.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::tables::RouteTables;
use crate::model::{BrokerData, QueueData, TopicQueueMappingInfo, MASTER_ID, PERM_WRITE};
use crate::protocol::json::{
    push_bool, push_decimal, push_field, push_int, push_int_key, push_str, push_str_array, JsonStyle,
};

/// Topics exempt from the acting-master rewrite (the brokers' own member-sync topics).
const SYNC_BROKER_MEMBER_PREFIX: &str = "rmq_sys_SYNC_BROKER_MEMBER_";

/// Encodes the route of `topic`; `None` when the topic has no queues or no known broker group.
///
/// With a `zone`, groups that have a master in another zone are left out with their queues
/// and filter servers (Java's `ZoneRouteRPCHook`); the requested JSON style is kept.
pub fn encode_route(tables: &RouteTables, topic: &str, style: JsonStyle, zone: Option<&str>) -> Option<Vec<u8>> {
    let all_queues = tables.topic_queues.get(topic)?;
    let mut groups: Vec<Cow<BrokerData>> =
        all_queues.keys().filter_map(|name| tables.brokers.get(name).map(Cow::Borrowed)).collect();
    if groups.is_empty() {
        return None;
    }
    if tables.options.support_acting_master && !topic.starts_with(SYNC_BROKER_MEMBER_PREFIX) {
        rewrite_acting_masters(&mut groups, |name| all_queues.get(name).map(|q| q.perm));
    }
    let mut queues: Vec<(&String, &QueueData)> = all_queues.iter().collect();
    if let Some(zone) = zone {
        let in_zone = |g: &BrokerData| {
            !g.broker_addrs.contains_key(&MASTER_ID)
                || g.zone_name.as_deref().is_some_and(|z| z.eq_ignore_ascii_case(zone))
        };
        let dropped: Vec<String> = groups.iter().filter(|g| !in_zone(g)).map(|g| g.broker_name.clone()).collect();
        groups.retain(|g| in_zone(g));
        queues.retain(|(name, _)| !dropped.contains(name));
    }

    let mut out = Vec::with_capacity(96 + groups.len() * 160 + queues.len() * 110);
    out.extend_from_slice(b"{\"brokerDatas\":[");
    for (i, group) in groups.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_broker_data(&mut out, group, style);
    }
    out.extend_from_slice(b"],\"filterServerTable\":{");
    let mut first = true;
    // Filter servers are a 4.x legacy: skip the lookups when no broker reported any.
    for group in groups.iter().filter(|_| !tables.filter_servers.is_empty()) {
        for addr in group.broker_addrs.values() {
            if let Some(servers) = tables.filter_servers.get(&(group.cluster.clone(), addr.clone())) {
                if !std::mem::take(&mut first) {
                    out.push(b',');
                }
                push_str(&mut out, addr, style);
                out.push(b':');
                push_str_array(&mut out, servers.iter().map(String::as_str), style);
            }
        }
    }
    out.push(b'}');
    if tables.options.order_message_enable {
        if let Some(conf) = tables.order_topics.get(topic) {
            out.extend_from_slice(b",\"orderTopicConf\":");
            push_str(&mut out, conf, style);
        }
    }
    out.extend_from_slice(b",\"queueDatas\":[");
    for (i, (name, queue)) in queues.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"brokerName\":");
        push_str(&mut out, name, style);
        for (field, value) in [
            (&b",\"perm\":"[..], queue.perm),
            (b",\"readQueueNums\":", queue.read_queue_nums),
            (b",\"topicSysFlag\":", queue.topic_sys_flag),
            (b",\"writeQueueNums\":", queue.write_queue_nums),
        ] {
            out.extend_from_slice(field);
            push_decimal(&mut out, i64::from(value));
        }
        out.push(b'}');
    }
    out.push(b']');
    if let Some(mappings) = tables.queue_mappings.get(topic) {
        out.extend_from_slice(b",\"topicQueueMappingByBroker\":{");
        for (i, (bname, info)) in mappings.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_str(&mut out, bname, style);
            out.push(b':');
            push_mapping_info(&mut out, info, style);
        }
        out.push(b'}');
    }
    out.push(b'}');
    Some(out)
}

/// Spec §5.9 step 6: a master-less acting-master group whose queues are read-only shows its
/// lowest-id member as id 0, so clients can keep reading from it.
/// Only the rewritten groups are copied; the others stay borrowed from the tables.
fn rewrite_acting_masters(groups: &mut [Cow<BrokerData>], perm_of: impl Fn(&str) -> Option<i32>) {
    let masterless = |g: &BrokerData| !g.broker_addrs.is_empty() && !g.broker_addrs.contains_key(&MASTER_ID);
    if !groups.iter().any(|g| masterless(g)) {
        return;
    }
    for group in groups.iter_mut().filter(|g| masterless(g) && g.enable_acting_master) {
        let read_only = perm_of(&group.broker_name).is_some_and(|perm| perm & PERM_WRITE == 0);
        if read_only {
            let addrs = &mut group.to_mut().broker_addrs;
            if let Some((_, addr)) = addrs.pop_first() {
                addrs.insert(MASTER_ID, addr);
            }
        }
    }
}

/// Encodes ClusterInfo, always with bare numeric keys as Java does.
pub fn encode_cluster_info(tables: &RouteTables) -> Vec<u8> {
    let style = JsonStyle::Fastjson;
    let mut out = Vec::with_capacity(256 + tables.brokers.len() * 160);
    out.extend_from_slice(b"{\"brokerAddrTable\":{");
    for (i, (name, group)) in tables.brokers.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_str(&mut out, name, style);
        out.push(b':');
        push_broker_data(&mut out, group, style);
    }
    out.extend_from_slice(b"},\"clusterAddrTable\":{");
    for (i, (cluster, names)) in tables.clusters.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_str(&mut out, cluster, style);
        out.push(b':');
        push_str_array(&mut out, names.iter().map(String::as_str), style);
    }
    out.extend_from_slice(b"}}");
    out
}

/// One BrokerData object.
pub fn push_broker_data(out: &mut Vec<u8>, group: &BrokerData, style: JsonStyle) {
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

/// A broker-id → address map.
pub fn push_addr_map(out: &mut Vec<u8>, addrs: &BTreeMap<i64, String>, style: JsonStyle) {
    out.push(b'{');
    for (i, (id, addr)) in addrs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_int_key(out, *id, style);
        push_str(out, addr, style);
    }
    out.push(b'}');
}

fn push_mapping_info(out: &mut Vec<u8>, info: &TopicQueueMappingInfo, style: JsonStyle) {
    out.extend_from_slice(b"{\"bname\":");
    push_str(out, &info.bname, style);
    out.extend_from_slice(b",\"currIdMap\":{");
    for (i, (global, local)) in info.curr_id_map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_int_key(out, *global, style);
        push_int(out, *local, style);
    }
    out.extend_from_slice(b"},\"dirty\":");
    push_bool(out, info.dirty);
    out.push(b',');
    push_field(out, "epoch");
    push_int(out, info.epoch, style);
    out.extend_from_slice(b",\"scope\":");
    push_str(out, &info.scope, style);
    out.extend_from_slice(b",\"topic\":");
    push_str(out, &info.topic, style);
    out.extend_from_slice(format!(",\"totalQueues\":{}}}", info.total_queues).as_bytes());
}

/// A TopicList body (spec §3.6); `broker_addr` only for the system topic list.
pub fn encode_topic_list(topics: &[String], broker_addr: Option<&str>) -> Vec<u8> {
    let style = JsonStyle::Fastjson;
    let mut out = Vec::with_capacity(32 + topics.iter().map(|t| t.len() + 3).sum::<usize>());
    out.push(b'{');
    if let Some(addr) = broker_addr {
        out.extend_from_slice(b"\"brokerAddr\":");
        push_str(&mut out, addr, style);
        out.push(b',');
    }
    out.extend_from_slice(b"\"topicList\":");
    push_str_array(&mut out, topics.iter().map(String::as_str), style);
    out.push(b'}');
    out
}

/// A GetBrokerMemberGroupResponseBody (spec §3.8), always with bare numeric keys.
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
