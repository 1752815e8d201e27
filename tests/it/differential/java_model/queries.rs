//! Read-only answers: GET_BROKER_CLUSTER_INFO (106), the topic lists (206, 224, 304, 311-313),
//! GET_BROKER_MEMBER_GROUP (901) and QUERY_DATA_VERSION (322).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::tables::addrs_json;
use super::unregister::BrokerIdentity;
use super::{Answer, Body, Model};

/// `TopicSysFlag` bits.
const FLAG_UNIT: i32 = 1;
const FLAG_UNIT_SUB: i32 = 2;

/// Which unit-topic list (`getUnitTopics`, `getHasUnitSubTopicList`, `getHasUnitSubUnUnitTopicList`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitList {
    /// 311: UNIT set.
    Unit,
    /// 312: UNIT_SUB set.
    HasUnitSub,
    /// 313: UNIT_SUB set, UNIT not.
    HasUnitSubNotUnit,
}

impl UnitList {
    /// Whether a topic whose first queue data has `flag` is listed.
    fn lists(self, flag: i32) -> bool {
        match self {
            Self::Unit => flag & FLAG_UNIT != 0,
            Self::HasUnitSub => flag & FLAG_UNIT_SUB != 0,
            Self::HasUnitSubNotUnit => flag & FLAG_UNIT_SUB != 0 && flag & FLAG_UNIT == 0,
        }
    }
}

/// A `TopicList` answer of exactly `names`.
fn topics(names: impl IntoIterator<Item = String>, broker_addr: Option<String>) -> Answer {
    let must = names.into_iter().collect();
    Answer { body: Body::Topics { must, may: BTreeSet::new(), broker_addr }, ..Answer::success() }
}

impl Model {
    /// GET_BROKER_CLUSTER_INFO: the raw group and cluster tables.
    pub fn cluster_info(&self) -> Answer {
        let groups: serde_json::Map<String, Value> =
            self.tables.brokers.iter().map(|(name, g)| (name.clone(), g.to_json())).collect();
        let clusters: serde_json::Map<String, Value> =
            self.tables.clusters.iter().map(|(c, names)| (c.clone(), json!(names))).collect();
        Answer::json(json!({ "brokerAddrTable": groups, "clusterAddrTable": clusters }))
    }

    /// GET_ALL_TOPIC_LIST_FROM_NAMESERVER: every key of `topicQueueTable`.
    pub fn all_topics(&self) -> Answer {
        topics(self.tables.topics.keys().cloned(), None)
    }

    /// GET_TOPICS_BY_CLUSTER: topics with queues of any name in the cluster's set; an unknown
    /// cluster throws inside `getTopicsByCluster` and answers an empty list.
    pub fn topics_by_cluster(&self, cluster: &str) -> Answer {
        let names = self.tables.clusters.get(cluster).cloned().unwrap_or_default();
        let listed = self.tables.topics.iter().filter(|(_, q)| q.keys().any(|n| names.contains(n)));
        topics(listed.map(|(t, _)| t.clone()), None)
    }

    /// GET_SYSTEM_TOPIC_LIST_FROM_NS: cluster names and the broker names of the cluster sets,
    /// and one broker address (exception `system_topic_broker_addr`).
    pub fn system_topics(&self) -> Answer {
        let t = &self.tables;
        let mut names: BTreeSet<String> = t.clusters.keys().cloned().collect();
        if self.pending.system_topics_from_groups {
            names.extend(t.brokers.keys().cloned());
        } else {
            names.extend(t.clusters.values().flatten().cloned());
        }
        topics(names, self.exception_system_topic_broker_addr())
    }

    /// Exception `system_topic_broker_addr`: Java takes the first group in hash order with any
    /// address; the namesrv takes the first by broker name, at its lowest id.
    fn exception_system_topic_broker_addr(&self) -> Option<String> {
        self.tables.brokers.values().find_map(|g| g.addrs.values().next().cloned())
    }

    /// 311-313: judged by each topic's first queue data in Java's hash order, so a topic whose
    /// queue data disagree may be listed or not.
    pub fn unit_topics(&self, list: UnitList) -> Answer {
        let mut must = BTreeSet::new();
        let mut may = BTreeSet::new();
        for (topic, queues) in &self.tables.topics {
            let verdicts: BTreeSet<bool> = queues.values().map(|q| list.lists(q.sys_flag)).collect();
            match (verdicts.contains(&true), verdicts.contains(&false)) {
                (true, false) => must.insert(topic.clone()),
                (true, true) => may.insert(topic.clone()),
                _ => false,
            };
        }
        Answer { body: Body::Topics { must, may, broker_addr: None }, ..Answer::success() }
    }

    /// GET_BROKER_MEMBER_GROUP: the group's addresses under the requested cluster name.
    pub fn member_group(&self, cluster: &str, name: &str) -> Answer {
        let addrs = self.tables.brokers.get(name).map(|g| g.addrs.clone()).unwrap_or_default();
        let group = json!({ "brokerAddrs": addrs_json(&addrs), "brokerName": name, "cluster": cluster });
        Answer::json(json!({ "brokerMemberGroup": group }))
    }

    /// QUERY_DATA_VERSION: `changed` unless the stored version equals the body's, and the stored
    /// version as the body. Refreshing the timestamp changes nothing observable here.
    pub fn query_data_version(&self, b: &BrokerIdentity, version: Option<super::Dv>) -> Answer {
        let stored = self.tables.live.get(&(b.cluster.clone(), b.addr.clone())).map(|l| l.dv);
        let changed = stored.is_none() || version.is_none() || stored != version;
        let mut answer = Answer::with_ext(&[("changed", changed.to_string())]);
        if let Some(dv) = stored {
            answer.body = Body::Json(dv.to_json());
        }
        answer
    }
}
