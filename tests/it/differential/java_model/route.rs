//! GET_ROUTEINFO_BY_TOPIC: `RouteInfoManager.pickupTopicRouteData` (with the acting-master
//! rewrite), `ClientRequestProcessor.getRouteInfoByTopic` and `ZoneRouteRPCHook`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::answer::topic_not_exist_remark;
use super::register::{ORDER_TOPIC_CONFIG, PERM_WRITE};
use super::tables::{BrokerData, QueueData, Tables};
use super::{Answer, Body, Model};

/// Topics the acting-master rewrite leaves alone (`TopicValidator.SYNC_BROKER_MEMBER_GROUP_PREFIX`).
const SYNC_BROKER_MEMBER_PREFIX: &str = "rmq_sys_SYNC_BROKER_MEMBER_";

/// A route before encoding: `TopicRouteData`.
struct Route {
    queues: Vec<(String, QueueData)>,
    groups: Vec<BrokerData>,
    /// (group, brokerAddr, its filter-server list): one `filterServerMap.put` per address of
    /// each group, `None` when its (cluster, addr) has none. For an address several groups list,
    /// Java keeps the last put in hash order, so any of them.
    filters: Vec<(String, String, Option<Vec<String>>)>,
}

impl Model {
    /// The answer to GET_ROUTEINFO_BY_TOPIC, filtered to `zone` when the request asks for zone
    /// mode with a non-blank zone name.
    pub fn route(&self, topic: &str, zone: Option<&str>) -> Answer {
        let Some(mut route) = self.pickup(topic) else {
            return Answer::error(17, &topic_not_exist_remark(topic));
        };
        if let Some(zone) = zone {
            filter_by_zone(&mut route, zone, self.pending.zone_filter_keeps_shared_addresses);
        }
        let mut body = Map::new();
        body.insert("brokerDatas".into(), route.groups.iter().map(BrokerData::to_json).collect());
        body.insert("queueDatas".into(), route.queues.iter().map(|(n, q)| q.to_json(n)).collect());
        let order_conf = self.tables.kv.get(ORDER_TOPIC_CONFIG).and_then(|ns| ns.get(topic));
        if let Some(conf) = order_conf.filter(|_| self.config.order_message_enable) {
            body.insert("orderTopicConf".into(), json!(conf));
        }
        let mut by_addr: BTreeMap<String, Vec<Option<Value>>> = BTreeMap::new();
        for (_, addr, list) in route.filters {
            by_addr.entry(addr).or_default().push(list.map(|l| json!(l)));
        }
        let mut exact = Map::new();
        let mut choices = BTreeMap::new();
        for (addr, values) in by_addr {
            if values.iter().all(|v| *v == values[0]) {
                if let Some(v) = &values[0] {
                    exact.insert(addr, v.clone());
                }
            } else {
                choices.insert(addr, values);
            }
        }
        body.insert("filterServerTable".into(), Value::Object(exact));
        Answer { body: Body::Route { route: Value::Object(body), choices }, ..Answer::success() }
    }

    /// `pickupTopicRouteData`: every queue of the topic, copies of the groups that exist, their
    /// filter servers, then the acting-master rewrite. `None` is TOPIC_NOT_EXIST.
    fn pickup(&self, topic: &str) -> Option<Route> {
        let t = &self.tables;
        let queues = t.topics.get(topic)?;
        let groups: Vec<BrokerData> = queues.keys().filter_map(|name| t.brokers.get(name).cloned()).collect();
        if groups.is_empty() {
            return None;
        }
        let mut filters = Vec::new();
        if !t.filters.is_empty() {
            for group in &groups {
                for addr in group.addrs.values() {
                    // Looked up under the group's own cluster, not the registering one.
                    let list = t.filters.get(&Tables::key(&group.cluster, addr)).cloned();
                    filters.push((group.name.clone(), addr.clone(), list));
                }
            }
        }
        let mut route = Route { queues: queues.iter().map(|(n, q)| (n.clone(), *q)).collect(), groups, filters };
        if self.config.support_acting_master && !topic.starts_with(SYNC_BROKER_MEMBER_PREFIX) {
            rewrite_acting_masters(&mut route);
        }
        Some(route)
    }
}

/// A master-less acting-master group whose queues are read-only shows its lowest id as id 0,
/// when any returned group lacks a master.
fn rewrite_acting_masters(route: &mut Route) {
    let masterless = |g: &BrokerData| !g.addrs.is_empty() && !g.addrs.contains_key(&0);
    if !route.groups.iter().any(masterless) {
        return;
    }
    for group in route.groups.iter_mut() {
        if !masterless(group) || !group.acting_master {
            continue;
        }
        let perm = route.queues.iter().find(|(n, _)| *n == group.name).map(|(_, q)| q.perm);
        if perm.is_some_and(|p| p & PERM_WRITE == 0) {
            let min = group.min_id().expect("non-empty");
            let addr = group.addrs.remove(&min).expect("present");
            group.addrs.insert(0, addr);
        }
    }
}

/// `ZoneRouteRPCHook.filterByZoneName`: groups with a master outside `zone` (ignoring case)
/// leave with their queues and the filter servers of all their addresses.
fn filter_by_zone(route: &mut Route, zone: &str, keeps_shared_addresses: bool) {
    let keep =
        |g: &BrokerData| !g.addrs.contains_key(&0) || g.zone.as_deref().is_some_and(|z| z.eq_ignore_ascii_case(zone));
    let (kept, dropped): (Vec<BrokerData>, Vec<BrokerData>) = route.groups.drain(..).partition(keep);
    route.queues.retain(|(name, _)| !dropped.iter().any(|g| g.name == *name));
    if keeps_shared_addresses {
        route.filters.retain(|(group, _, _)| kept.iter().any(|g| g.name == *group));
    } else {
        route.filters.retain(|(_, addr, _)| !dropped.iter().any(|g| g.addrs.values().any(|a| a == addr)));
    }
    route.groups = kept;
}
