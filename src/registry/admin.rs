//! Admin changes and topic queries on the tables (Java's `RouteInfoManager` wipe/add write
//! perm, deleteTopic, registerTopic and the topic lists).

use std::collections::BTreeMap;

use super::tables::RouteTables;
use crate::model::{QueueData, PERM_READ, PERM_WRITE};

/// Unit-topic flag bits of `topicSysFlag`.
pub(super) const FLAG_UNIT: i32 = 1;
pub(super) const FLAG_UNIT_SUB: i32 = 2;

/// Which unit-topic list to build (codes 311, 312, 313).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnitFilter {
    /// GET_UNIT_TOPIC_LIST: UNIT set.
    Unit,
    /// GET_HAS_UNIT_SUB_TOPIC_LIST: UNIT_SUB set.
    HasUnitSub,
    /// GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: UNIT_SUB set and UNIT not.
    HasUnitSubNotUnit,
}

impl RouteTables {
    /// WIPE_WRITE_PERM_OF_BROKER: clears the write bit of every topic of `broker`; returns how
    /// many topics it has (already read-only ones count too).
    pub(in crate::registry) fn wipe_write_perm(&mut self, broker: &str) -> usize {
        self.topics_of(broker).iter().filter(|t| self.update_perm(t, broker, |perm| perm & !PERM_WRITE)).count()
    }

    /// ADD_WRITE_PERM_OF_BROKER: sets the perm of every topic of `broker` to read|write
    /// (overwriting other bits, as Java does); returns how many topics it has.
    pub(in crate::registry) fn add_write_perm(&mut self, broker: &str) -> usize {
        self.topics_of(broker).iter().filter(|t| self.update_perm(t, broker, |_| PERM_READ | PERM_WRITE)).count()
    }

    /// DELETE_TOPIC_IN_NAMESRV: with a cluster, removes the topic's queues of that cluster's
    /// brokers; without, the whole topic. Static-topic mappings stay, as in Java.
    pub(in crate::registry) fn delete_topic(&mut self, topic: &str, cluster: Option<&str>) {
        let brokers: Vec<String> = match cluster {
            Some(cluster) => self.cluster(cluster).map(|names| names.iter().cloned().collect()).unwrap_or_default(),
            None => self.queues(topic).map(|q| q.names().map(str::to_owned).collect()).unwrap_or_default(),
        };
        for broker in brokers {
            self.remove_queue(topic, &broker);
        }
    }

    /// REGISTER_TOPIC_IN_NAMESRV, as Java's `registerTopic`: an existing topic takes each
    /// broker's queues up to the first broker the NameServer does not know (earlier ones stay);
    /// a new topic is created only when every broker is known. Returns how many were put.
    pub(in crate::registry) fn register_topic(&mut self, topic: &str, queues: &[(String, QueueData)]) -> usize {
        let known = queues.iter().take_while(|(broker, _)| self.group(broker).is_some()).count();
        if self.queues(topic).is_none() && known < queues.len() {
            return 0;
        }
        for (broker, queue) in &queues[..known] {
            self.put_queue(topic, broker, *queue);
        }
        known
    }

    /// Every topic, sorted (a scan of the tables: the listings' twin, for tests).
    #[cfg(test)]
    pub fn all_topics(&self) -> Vec<String> {
        let mut topics: Vec<String> = self.topic_names().map(str::to_owned).collect();
        topics.sort();
        topics
    }

    /// Topics with queues on any broker of `cluster`, sorted; empty for an unknown cluster (a
    /// scan of the tables: the listings' twin, for tests).
    #[cfg(test)]
    pub fn topics_by_cluster(&self, cluster: &str) -> Vec<String> {
        let Some(names) = self.cluster(cluster) else {
            return Vec::new();
        };
        let mut topics: Vec<String> =
            names.iter().flat_map(|name| self.topics_of(name)).map(|t| String::from(&*t)).collect();
        topics.sort();
        topics.dedup();
        topics
    }

    /// The system topic list, as Java's `getSystemTopicList`: every cluster name and the broker
    /// names the cluster table lists, plus the address of the first broker group (by name)
    /// that has members, at its lowest id.
    pub fn system_topics(&self) -> (Vec<String>, Option<String>) {
        let mut topics: Vec<String> = self
            .clusters()
            .flat_map(|(cluster, names)| std::iter::once(cluster).chain(names.iter().map(String::as_str)))
            .map(str::to_owned)
            .collect();
        topics.sort();
        topics.dedup();
        let addr = self.groups().find_map(|b| b.broker_addrs.values().next().cloned());
        (topics, addr)
    }

    /// Unit-topic lists, judged by each topic's first queue data (lowest broker name) (a scan
    /// of the tables: the listings' twin, for tests).
    #[cfg(test)]
    pub fn unit_topics(&self, filter: UnitFilter) -> Vec<String> {
        let mut topics: Vec<String> = self
            .topics()
            .filter(|(_, queues)| {
                queues.iter().next().is_some_and(|(_, q)| {
                    let flag = q.topic_sys_flag;
                    match filter {
                        UnitFilter::Unit => flag & FLAG_UNIT != 0,
                        UnitFilter::HasUnitSub => flag & FLAG_UNIT_SUB != 0,
                        UnitFilter::HasUnitSubNotUnit => flag & FLAG_UNIT_SUB != 0 && flag & FLAG_UNIT == 0,
                    }
                })
            })
            .map(|(topic, _)| topic.to_owned())
            .collect();
        topics.sort();
        topics
    }

    /// The addresses of group `broker`, empty when unknown (GET_BROKER_MEMBER_GROUP).
    pub fn member_addrs(&self, broker: &str) -> BTreeMap<i64, String> {
        self.group(broker).map(|b| b.broker_addrs.clone()).unwrap_or_default()
    }
}
