//! The per-topic cache of encoded route bodies, bounded in bytes.
//!
//! Building a route costs well under a microsecond per broker group, so the cache saves CPU on
//! hot topics but must not cost the memory of every topic's body: past its budget the oldest
//! entries go first (FIFO), one at a time, so no query ever waits for a mass eviction.
//!
//! Topics created cluster-wide on the same brokers with the same queues have byte-identical
//! routes (a route body does not name its topic), so equal bodies are stored once and counted
//! once against the budget; each topic's entry counts its own overhead.

use std::collections::VecDeque;

use bytes::Bytes;
use compact_str::CompactString;

use crate::protocol::json::JsonStyle;

/// What one topic's entry costs besides its bodies (key, slots, map and queue slots).
const ENTRY_OVERHEAD_BYTES: usize = 128;

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
}

/// Route bodies by topic, holding at most `max_bytes` of bodies and entries.
#[derive(Debug, Default)]
pub struct RouteCache {
    /// Keys up to 24 bytes are held inline: a lookup compares them without another cache miss.
    entries: hashbrown::HashMap<CompactString, Entry>,
    /// Topics in the order they were cached; may hold topics forgotten since (skipped).
    order: VecDeque<CompactString>,
    /// Each distinct body held, with how many slots hold it.
    bodies: hashbrown::HashMap<Bytes, usize>,
    bytes: usize,
    max_bytes: usize,
}

impl RouteCache {
    /// An empty cache holding at most `max_bytes` (0 disables it).
    pub fn new(max_bytes: usize) -> Self {
        Self { max_bytes, ..Self::default() }
    }

    /// The cached body of `topic` in `style`.
    pub fn get(&self, topic: &str, style: JsonStyle) -> Option<Bytes> {
        self.find(topic, style).cloned()
    }

    /// The cached body of `topic` in `style`, in place.
    pub fn find(&self, topic: &str, style: JsonStyle) -> Option<&Bytes> {
        let entry = self.entries.get(topic)?;
        match style {
            JsonStyle::Fastjson => entry.fastjson.as_ref(),
            JsonStyle::Standard => entry.standard.as_ref(),
        }
    }

    /// Caches a body, first evicting the earliest-cached topics until it fits the budget (a topic
    /// cached again after a change keeps its earlier place in line, so it may go a little early).
    pub fn put(&mut self, topic: &str, style: JsonStyle, body: Bytes) {
        let new_entry = !self.entries.contains_key(topic);
        let cost = if self.bodies.contains_key(&body) { 0 } else { body.len() }
            + if new_entry { ENTRY_OVERHEAD_BYTES + topic.len() } else { 0 };
        if cost > self.max_bytes {
            return;
        }
        while self.bytes + cost > self.max_bytes {
            match self.order.pop_front() {
                Some(oldest) if &*oldest != topic => self.forget(&oldest),
                Some(_) => {}
                None => break,
            }
        }
        let body = self.hold(body);
        let entry = match self.entries.get_mut(topic) {
            Some(e) => e,
            None => {
                let key = CompactString::from(topic);
                self.bytes += ENTRY_OVERHEAD_BYTES + topic.len();
                self.order.push_back(key.clone());
                self.entries.entry(key).or_default()
            }
        };
        if let Some(old) = entry.slot(style).replace(body) {
            self.release(old);
        }
    }

    /// The stored body equal to `body` (stored now if new), counting one more holder.
    fn hold(&mut self, body: Bytes) -> Bytes {
        if let Some((stored, holders)) = self.bodies.get_key_value_mut(&body) {
            *holders += 1;
            return stored.clone();
        }
        self.bytes += body.len();
        self.bodies.insert(body.clone(), 1);
        body
    }

    /// One holder of `body` is gone; the body goes with its last holder.
    fn release(&mut self, body: Bytes) {
        if let Some(holders) = self.bodies.get_mut(&body) {
            *holders -= 1;
            if *holders == 0 {
                self.bodies.remove(&body);
                self.bytes -= body.len();
            }
        }
    }

    /// Drops the bodies of `topic` after a change.
    pub fn forget(&mut self, topic: &str) {
        if let Some(entry) = self.entries.remove(topic) {
            self.bytes -= ENTRY_OVERHEAD_BYTES + topic.len();
            for body in [entry.fastjson, entry.standard].into_iter().flatten() {
                self.release(body);
            }
        }
        // Forgotten topics stay in `order` until evicted; keep that list from outgrowing the map.
        if self.order.len() > 2 * self.entries.len() + 1024 {
            let entries = &self.entries;
            self.order.retain(|t| entries.contains_key(t));
        }
    }

    /// Bytes of bodies and entries held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: usize = ENTRY_OVERHEAD_BYTES + 1;

    #[test]
    fn keeps_within_its_budget_and_forgets_on_change() {
        let mut cache = RouteCache::new(E + 10);
        cache.put("a", JsonStyle::Standard, Bytes::from_static(b"12345"));
        cache.put("a", JsonStyle::Fastjson, Bytes::from_static(b"1234"));
        assert_eq!(cache.bytes(), E + 9);
        assert_eq!(cache.get("a", JsonStyle::Fastjson).as_deref(), Some(&b"1234"[..]));
        cache.put("b", JsonStyle::Standard, Bytes::from_static(b"123"));
        assert_eq!(cache.bytes(), E + 3, "over budget: the oldest topic went");
        assert!(cache.get("a", JsonStyle::Standard).is_none());
        cache.put("b", JsonStyle::Fastjson, Bytes::from_static(b"1234567"));
        assert_eq!(cache.bytes(), E + 10);
        cache.forget("b");
        assert_eq!(cache.bytes(), 0);
        cache.put("big", JsonStyle::Standard, Bytes::from(vec![0; E + 10]));
        assert!(cache.get("big", JsonStyle::Standard).is_none(), "larger than the whole budget");
    }

    #[test]
    fn equal_bodies_are_held_and_counted_once() {
        let mut cache = RouteCache::new(10 * E);
        let body = || Bytes::from(vec![7u8; 500]);
        for topic in ["a", "b", "c"] {
            cache.put(topic, JsonStyle::Standard, body());
        }
        assert_eq!(cache.bytes(), 3 * E + 500, "one body for three topics");
        let a = cache.get("a", JsonStyle::Standard).expect("cached");
        let c = cache.get("c", JsonStyle::Standard).expect("cached");
        assert_eq!(a.as_ptr(), c.as_ptr(), "the same bytes, shared");
        cache.forget("a");
        cache.forget("b");
        assert_eq!(cache.bytes(), E + 500, "still held by c");
        cache.put("c", JsonStyle::Standard, Bytes::from_static(b"other"));
        assert_eq!(cache.bytes(), E + 5, "the shared body went with its last holder");
    }
}
