//! Consistency of the tables' own indexes, for tests.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::RouteTables;

impl RouteTables {
    /// Panics unless the broker→topics index matches the topic table and no topic is empty.
    pub fn assert_consistent(&self) {
        let mut index: HashMap<&str, HashSet<&str>> = HashMap::new();
        for (topic, queues) in &self.topic_queues {
            assert!(!queues.is_empty(), "topic {topic} kept with no queue data");
            for broker in queues.names() {
                index.entry(broker).or_default().insert(topic);
            }
        }
        let stored: HashMap<&str, HashSet<&str>> =
            self.broker_topics.iter().map(|(b, topics)| (&**b, topics.keys().map(|t| &**t).collect())).collect();
        assert_eq!(stored, index, "broker→topics index");
        let entries: usize = self.topic_queues.values().map(|q| q.len()).sum();
        assert_eq!(self.queue_entries, entries, "queue entries counted");
        for (broker, topics) in &self.broker_topics {
            for (topic, flag) in topics.iter() {
                let (key, queues) = self.topic_queues.get_key_value(topic).expect("indexed topic exists");
                assert!(std::sync::Arc::ptr_eq(key, topic), "topic {topic}: one name shared by the index");
                let (name, queue) = queues.entries().find(|(n, _)| **n == **broker).expect("indexed broker has queues");
                assert!(std::sync::Arc::ptr_eq(name, broker), "broker {broker}: one name shared by its topics");
                assert_eq!(*flag, queue.topic_sys_flag, "topic {topic} of {broker}: the indexed sys flag");
            }
        }
        assert!(self.clusters.values().all(|names| !names.is_empty()), "empty cluster kept");
        let mut addrs: HashMap<&str, BTreeSet<String>> = HashMap::new();
        for group in self.brokers.values() {
            for addr in group.broker_addrs.values() {
                addrs.entry(addr.as_str()).or_default().insert(group.broker_name.clone());
            }
        }
        let indexed: HashMap<&str, BTreeSet<String>> =
            self.addr_groups.iter().map(|(a, names)| (a.as_str(), names.clone())).collect();
        assert_eq!(indexed, addrs, "address index");
    }
}
