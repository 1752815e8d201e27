//! One topic's queue data by broker group, stored compactly: broker names are shared (`Arc<str>`,
//! one allocation per name for the whole table) and a topic served by one group keeps its only
//! entry inline, so such a topic costs no allocation besides its name.

use std::sync::Arc;

use smallvec::SmallVec;

use crate::model::QueueData;

/// A broker group's name, shared by every topic it serves.
pub type BrokerName = Arc<str>;

/// A topic's queue data by broker name, sorted by name (the order route bodies list them in).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TopicQueues {
    entries: SmallVec<[(BrokerName, QueueData); 1]>,
}

impl TopicQueues {
    fn position(&self, broker: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(name, _)| (**name).cmp(broker))
    }

    /// The queue data of `broker`.
    pub fn get(&self, broker: &str) -> Option<&QueueData> {
        self.position(broker).ok().map(|i| &self.entries[i].1)
    }

    /// The queue data of `broker`, to change it.
    pub(in crate::registry) fn get_mut(&mut self, broker: &str) -> Option<&mut QueueData> {
        self.position(broker).ok().map(|i| &mut self.entries[i].1)
    }

    /// Whether `broker` has queue data here.
    pub fn contains(&self, broker: &str) -> bool {
        self.position(broker).is_ok()
    }

    /// Sets the queue data of `broker`; returns what it replaced.
    pub(in crate::registry) fn insert(&mut self, broker: &BrokerName, queue: QueueData) -> Option<QueueData> {
        match self.position(broker) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, queue)),
            Err(i) => {
                self.entries.insert(i, (broker.clone(), queue));
                None
            }
        }
    }

    /// Removes the queue data of `broker`; returns it.
    pub(in crate::registry) fn remove(&mut self, broker: &str) -> Option<QueueData> {
        let i = self.position(broker).ok()?;
        let (_, queue) = self.entries.remove(i);
        if self.entries.len() <= 1 {
            self.entries.shrink_to_fit();
        }
        Some(queue)
    }

    /// Whether no broker has queue data here.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many brokers have queue data here.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The broker names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(name, _)| &**name)
    }

    /// The shared names with their queue data, for consistency checks.
    #[cfg(test)]
    pub fn entries(&self) -> impl Iterator<Item = &(BrokerName, QueueData)> {
        self.entries.iter()
    }

    /// Each broker's queue data, sorted by broker name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &QueueData)> {
        self.entries.iter().map(|(name, queue)| (&**name, queue))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(n: i32) -> QueueData {
        QueueData { read_queue_nums: n, write_queue_nums: n, perm: 6, topic_sys_flag: 0 }
    }

    #[test]
    fn keeps_brokers_sorted_and_replaces_in_place() {
        let (a, b, c): (BrokerName, BrokerName, BrokerName) = ("a".into(), "b".into(), "c".into());
        let mut queues = TopicQueues::default();
        assert_eq!(queues.insert(&c, queue(1)), None);
        assert_eq!(queues.insert(&a, queue(2)), None);
        assert_eq!(queues.insert(&b, queue(3)), None);
        assert_eq!(queues.names().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(queues.insert(&b, queue(4)), Some(queue(3)));
        assert_eq!(queues.get("b"), Some(&queue(4)));
        queues.get_mut("a").expect("a is there").perm = 2;
        assert_eq!(queues.get("a").map(|q| q.perm), Some(2));
        assert_eq!(queues.remove("a"), Some(queue(2)).map(|q| QueueData { perm: 2, ..q }));
        assert_eq!(queues.remove("a"), None);
        assert!(!queues.contains("a") && queues.contains("c"));
        assert_eq!(queues.len(), 2);
        queues.remove("b");
        queues.remove("c");
        assert!(queues.is_empty());
    }

    #[test]
    fn one_broker_is_held_inline() {
        let name: BrokerName = "broker-a".into();
        let mut queues = TopicQueues::default();
        queues.insert(&name, queue(8));
        assert!(!queues.entries.spilled(), "a single entry needs no allocation");
        assert_eq!(Arc::strong_count(&name), 2, "the name is shared, not copied");
    }
}
