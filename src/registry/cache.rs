//! The per-topic cache of encoded route bodies, bounded in bytes.
//!
//! Building a route costs well under a microsecond per broker group, so the cache saves CPU on
//! hot topics but must not cost the memory of every topic's body: past its budget the oldest
//! entries go first (FIFO), one at a time, so no query ever waits for a mass eviction.
//!
//! Topics created cluster-wide on the same brokers with the same queues have byte-identical
//! routes (a route body does not name its topic), so equal bodies are stored once and counted
//! once against the budget; each topic's entry counts its own overhead.
//!
//! A lookup is the hot path of every route query, so the topic table is kept small: each entry is
//! the topic (inline up to 24 bytes) and two 4-byte body numbers, 32 bytes aligned to 32, so a
//! lookup touches one cache line of it; the bodies sit in a short list of distinct ones that
//! stays in cache.

use std::collections::VecDeque;
use std::hash::BuildHasher;

use bytes::Bytes;
use compact_str::CompactString;
use hashbrown::{DefaultHashBuilder, HashTable};

use crate::protocol::json::JsonStyle;

/// What one topic's entry costs besides its bodies (key, slots, map and queue slots).
const ENTRY_OVERHEAD_BYTES: usize = 128;

/// The body number of an empty slot.
const NO_BODY: u32 = u32::MAX;

/// The numbers of one topic's bodies in the [`Bodies`] list, one per JSON style once asked for.
#[derive(Debug, Clone, Copy)]
struct Slots([u32; 2]);

impl Default for Slots {
    fn default() -> Self {
        Self([NO_BODY; 2])
    }
}

impl Slots {
    fn number(self, style: JsonStyle) -> u32 {
        self.0[style_index(style)]
    }

    fn slot(&mut self, style: JsonStyle) -> &mut u32 {
        &mut self.0[style_index(style)]
    }

    fn taken(self) -> impl Iterator<Item = u32> {
        self.0.into_iter().filter(|&n| n != NO_BODY)
    }
}

fn style_index(style: JsonStyle) -> usize {
    match style {
        JsonStyle::Fastjson => 0,
        JsonStyle::Standard => 1,
    }
}

/// One distinct body held, with how many slots hold it.
#[derive(Debug)]
struct Held {
    body: Bytes,
    holders: usize,
}

/// The distinct bodies held, numbered; a number freed by its last holder is reused.
#[derive(Debug, Default)]
struct Bodies {
    list: Vec<Option<Held>>,
    free: Vec<u32>,
    numbers: hashbrown::HashMap<Bytes, u32>,
}

impl Bodies {
    fn get(&self, number: u32) -> Option<&Bytes> {
        self.list.get(number as usize)?.as_ref().map(|held| &held.body)
    }

    fn contains(&self, body: &Bytes) -> bool {
        self.numbers.contains_key(body)
    }

    /// The number of the stored body equal to `body`, counting one more holder, and the bytes
    /// stored for it now (its size if it is new, else 0).
    fn hold(&mut self, body: Bytes) -> (u32, usize) {
        if let Some(&number) = self.numbers.get(&body) {
            if let Some(held) = self.list[number as usize].as_mut() {
                held.holders += 1;
            }
            return (number, 0);
        }
        let size = body.len();
        let held = Some(Held { body: body.clone(), holders: 1 });
        let number = match self.free.pop() {
            Some(number) => {
                self.list[number as usize] = held;
                number
            }
            None => {
                self.list.push(held);
                (self.list.len() - 1) as u32
            }
        };
        self.numbers.insert(body, number);
        (number, size)
    }

    /// One holder of body `number` is gone; returns the body's size if it went with its last holder.
    fn release(&mut self, number: u32) -> Option<usize> {
        let slot = self.list.get_mut(number as usize)?;
        let held = slot.as_mut()?;
        held.holders -= 1;
        if held.holders > 0 {
            return None;
        }
        let held = slot.take()?;
        self.numbers.remove(&held.body);
        self.free.push(number);
        Some(held.body.len())
    }
}

/// One topic's entry: its name (inline up to 24 bytes, so a lookup compares it without another
/// cache miss) and its body numbers, aligned so that no entry straddles two cache lines.
#[derive(Debug)]
#[repr(C, align(32))]
struct Entry {
    topic: CompactString,
    slots: Slots,
}

/// Route bodies by topic, holding at most `max_bytes` of bodies and entries.
#[derive(Debug, Default)]
pub struct RouteCache {
    entries: HashTable<Entry>,
    hasher: DefaultHashBuilder,
    /// Topics in the order they were cached; may hold topics forgotten since (skipped).
    order: VecDeque<CompactString>,
    bodies: Bodies,
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
        let entry = self.entries.find(self.hash(topic), |e| e.topic == topic)?;
        self.bodies.get(entry.slots.number(style))
    }

    /// Caches a body, first evicting the earliest-cached topics until it fits the budget (a topic
    /// cached again after a change keeps its earlier place in line, so it may go a little early).
    pub fn put(&mut self, topic: &str, style: JsonStyle, body: Bytes) {
        let hash = self.hash(topic);
        let new_entry = self.entries.find(hash, |e| e.topic == topic).is_none();
        let cost = if self.bodies.contains(&body) { 0 } else { body.len() }
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
        let (number, stored) = self.bodies.hold(body);
        self.bytes += stored;
        let hasher = &self.hasher;
        let entry = match self.entries.entry(hash, |e| e.topic == topic, |e| hasher.hash_one(e.topic.as_str())) {
            hashbrown::hash_table::Entry::Occupied(found) => found.into_mut(),
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                let topic = CompactString::from(topic);
                self.bytes += ENTRY_OVERHEAD_BYTES + topic.len();
                self.order.push_back(topic.clone());
                vacant.insert(Entry { topic, slots: Slots::default() }).into_mut()
            }
        };
        let old = std::mem::replace(entry.slots.slot(style), number);
        if old != NO_BODY {
            self.release(old);
        }
    }

    fn release(&mut self, number: u32) {
        if let Some(size) = self.bodies.release(number) {
            self.bytes -= size;
        }
    }

    /// Drops the bodies of `topic` after a change.
    pub fn forget(&mut self, topic: &str) {
        if let Ok(found) = self.entries.find_entry(self.hash(topic), |e| e.topic == topic) {
            let (entry, _) = found.remove();
            self.bytes -= ENTRY_OVERHEAD_BYTES + topic.len();
            entry.slots.taken().for_each(|number| self.release(number));
        }
        // Forgotten topics stay in `order` until evicted; keep that list from outgrowing the map.
        if self.order.len() > 2 * self.entries.len() + 1024 {
            let (entries, hasher) = (&self.entries, &self.hasher);
            self.order.retain(|t| entries.find(hasher.hash_one(t.as_str()), |e| e.topic == t).is_some());
        }
    }

    fn hash(&self, topic: &str) -> u64 {
        self.hasher.hash_one(topic)
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

    #[test]
    fn a_freed_body_number_serves_the_next_body() {
        let mut cache = RouteCache::new(10 * E);
        cache.put("a", JsonStyle::Standard, Bytes::from_static(b"first"));
        cache.put("b", JsonStyle::Fastjson, Bytes::from_static(b"kept"));
        cache.forget("a");
        cache.put("c", JsonStyle::Standard, Bytes::from_static(b"second"));
        cache.put("d", JsonStyle::Standard, Bytes::from_static(b"third"));
        assert_eq!(cache.bodies.list.len(), 3, "the number freed by \"first\" was taken again");
        assert!(cache.get("a", JsonStyle::Standard).is_none());
        assert_eq!(cache.get("b", JsonStyle::Fastjson).as_deref(), Some(&b"kept"[..]));
        assert!(cache.get("b", JsonStyle::Standard).is_none(), "the other style's slot stays empty");
        assert_eq!(cache.get("c", JsonStyle::Standard).as_deref(), Some(&b"second"[..]));
        assert_eq!(cache.get("d", JsonStyle::Standard).as_deref(), Some(&b"third"[..]));
        assert_eq!(cache.bytes(), 3 * E + 4 + 6 + 5);
    }

    #[test]
    fn an_entry_fits_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
    }
}
