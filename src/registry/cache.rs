//! The per-topic cache of encoded route bodies, bounded in bytes.
//!
//! Building a route costs well under a microsecond per broker group, so the cache saves CPU on
//! hot topics but must not cost the memory of every topic's body: past its budget the oldest
//! entries go first (FIFO), one at a time, so no query ever waits for a mass eviction.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;

use crate::protocol::json::JsonStyle;

/// Encoded route bodies of one topic, one per JSON style once asked for.
#[derive(Debug, Default)]
struct Entry {
    fastjson: Option<Bytes>,
    standard: Option<Bytes>,
}

impl Entry {
    fn slot(&mut self, style: JsonStyle) -> &mut Option<Bytes> {
        match style {
            JsonStyle::Fastjson => &mut self.fastjson,
            JsonStyle::Standard => &mut self.standard,
        }
    }

    fn bytes(&self) -> usize {
        self.fastjson.as_ref().map_or(0, Bytes::len) + self.standard.as_ref().map_or(0, Bytes::len)
    }
}

/// Route bodies by topic, holding at most `max_bytes` of bodies.
#[derive(Debug, Default)]
pub struct RouteCache {
    entries: HashMap<String, Entry>,
    /// Topics in the order they were cached; may hold topics forgotten since (skipped).
    order: VecDeque<String>,
    bytes: usize,
    max_bytes: usize,
}

impl RouteCache {
    /// An empty cache holding at most `max_bytes` of bodies (0 disables it).
    pub fn new(max_bytes: usize) -> Self {
        Self { max_bytes, ..Self::default() }
    }

    /// The cached body of `topic` in `style`.
    pub fn get(&mut self, topic: &str, style: JsonStyle) -> Option<Bytes> {
        self.entries.get_mut(topic).and_then(|e| e.slot(style).clone())
    }

    /// Caches a body, first evicting the earliest-cached topics until it fits the budget (a topic
    /// cached again after a change keeps its earlier place in line, so it may go a little early).
    pub fn put(&mut self, topic: &str, style: JsonStyle, body: Bytes) {
        if body.len() > self.max_bytes {
            return;
        }
        while self.bytes + body.len() > self.max_bytes {
            match self.order.pop_front() {
                Some(oldest) => self.forget(&oldest),
                None => break,
            }
        }
        self.bytes += body.len();
        let entry = match self.entries.get_mut(topic) {
            Some(e) => e,
            None => {
                self.order.push_back(topic.to_owned());
                self.entries.entry(topic.to_owned()).or_default()
            }
        };
        if let Some(old) = entry.slot(style).replace(body) {
            self.bytes -= old.len();
        }
    }

    /// Drops the bodies of `topic` after a change.
    pub fn forget(&mut self, topic: &str) {
        if let Some(entry) = self.entries.remove(topic) {
            self.bytes -= entry.bytes();
        }
        // Forgotten topics stay in `order` until evicted; keep that list from outgrowing the map.
        if self.order.len() > 2 * self.entries.len() + 1024 {
            let entries = &self.entries;
            self.order.retain(|t| entries.contains_key(t));
        }
    }

    /// Bytes of bodies held.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_within_its_budget_and_forgets_on_change() {
        let mut cache = RouteCache::new(10);
        cache.put("a", JsonStyle::Standard, Bytes::from_static(b"12345"));
        cache.put("a", JsonStyle::Fastjson, Bytes::from_static(b"1234"));
        assert_eq!(cache.bytes(), 9);
        assert_eq!(cache.get("a", JsonStyle::Fastjson).as_deref(), Some(&b"1234"[..]));
        cache.put("b", JsonStyle::Standard, Bytes::from_static(b"123"));
        assert_eq!(cache.bytes(), 3, "over budget: the oldest topic went");
        assert!(cache.get("a", JsonStyle::Standard).is_none());
        cache.put("c", JsonStyle::Standard, Bytes::from_static(b"1234567"));
        assert_eq!(cache.bytes(), 10);
        assert!(cache.get("b", JsonStyle::Standard).is_some());
        cache.forget("b");
        cache.forget("c");
        assert_eq!(cache.bytes(), 0);
        cache.put("big", JsonStyle::Standard, Bytes::from(vec![0; 11]));
        assert!(cache.get("big", JsonStyle::Standard).is_none());
    }
}
