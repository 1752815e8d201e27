//! Which brokers are alive, as one controller peer sees it (Java's
//! `DefaultBrokerHeartbeatManager`, kept per peer as with DLedger: brokers heartbeat every
//! controller). Pure, takes `now`: a broker is alive until its own `heartbeatTimeoutMills` passes
//! without a heartbeat, or at once not when the channel it heartbeats over closes. Deadlines sit
//! in a heap, so the caller wakes when the next one falls due instead of scanning. The table is
//! bounded. A channel is whatever the caller names its connections by (`C`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

use crate::decision::{LiveFacts, LiveView};

/// Java's `controllerHeartBeatTimeoutMills` default, for heartbeats that carry none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// One broker replica: (cluster, broker name, broker id).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LiveKey {
    pub cluster: String,
    pub name: String,
    pub id: i64,
}

/// A heartbeat (BROKER_HEARTBEAT's fields, defaults filled in as Java does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beat {
    pub key: LiveKey,
    pub addr: String,
    pub epoch: i32,
    pub max_offset: i64,
    pub confirm_offset: i64,
    pub timeout: Duration,
    pub priority: i32,
}

/// What the table knows of one alive broker, whose heartbeats come over channels named `C`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveEntry<C> {
    /// Its address, from its last heartbeat.
    pub addr: String,
    /// The channel its last heartbeat came over.
    pub conn: C,
    /// When its last heartbeat came.
    pub last: Instant,
    /// How long it stays alive after a heartbeat.
    pub timeout: Duration,
    /// The facts elections order candidates by.
    pub facts: LiveFacts,
    /// Its confirm offset (shown, not used).
    pub confirm_offset: i64,
    /// Bumped by every heartbeat, so an older deadline of the entry is recognised as such.
    generation: u64,
}

/// Why a broker stopped being alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inactivity {
    /// The channel its heartbeats came over closed.
    ConnectionClosed,
    /// Its heartbeat timeout passed (a dead or hung broker, apache/rocketmq#10416).
    HeartbeatTimeout,
}

impl Inactivity {
    /// The cause as logs and metrics name it.
    pub fn name(self) -> &'static str {
        match self {
            Inactivity::ConnectionClosed => "connection_closed",
            Inactivity::HeartbeatTimeout => "heartbeat_timeout",
        }
    }
}

/// A heartbeat for a new broker the table has no room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full {
    /// The bound.
    pub max: usize,
}

/// A broker that stopped being alive, with what the table knew of it.
pub type Gone<C> = (LiveKey, LiveEntry<C>);

/// The alive brokers and their deadlines.
#[derive(Debug)]
pub struct LiveTable<C> {
    entries: HashMap<LiveKey, LiveEntry<C>>,
    deadlines: BinaryHeap<Reverse<(Instant, LiveKey, u64)>>,
    max_entries: usize,
    next_generation: u64,
}

impl<C: Copy + Eq> LiveTable<C> {
    /// An empty table holding at most `max_entries` brokers.
    pub fn new(max_entries: usize) -> Self {
        LiveTable { entries: HashMap::new(), deadlines: BinaryHeap::new(), max_entries, next_generation: 0 }
    }

    /// Records a heartbeat that came over `conn` at `now`. The connection is always the latest
    /// (Java keeps the first, so a stale close would evict a healthy broker: apache/rocketmq#11045);
    /// epoch and offsets only move forward (Java's rule: a higher epoch, or the same with a
    /// higher max offset).
    pub fn heartbeat(&mut self, beat: Beat, conn: C, now: Instant) -> Result<(), Full> {
        if !self.entries.contains_key(&beat.key) && self.entries.len() >= self.max_entries {
            return Err(Full { max: self.max_entries });
        }
        self.next_generation += 1;
        let generation = self.next_generation;
        let facts = LiveFacts { epoch: beat.epoch, max_offset: beat.max_offset, priority: beat.priority };
        let entry = self.entries.entry(beat.key.clone()).or_insert_with(|| LiveEntry {
            addr: String::new(),
            conn,
            last: now,
            timeout: beat.timeout,
            facts: LiveFacts { epoch: -1, max_offset: -1, priority: beat.priority },
            confirm_offset: -1,
            generation,
        });
        let old = entry.facts;
        if facts.epoch > old.epoch || (facts.epoch == old.epoch && facts.max_offset > old.max_offset) {
            entry.facts.epoch = facts.epoch;
            entry.facts.max_offset = facts.max_offset;
            entry.confirm_offset = beat.confirm_offset;
        }
        entry.facts.priority = beat.priority;
        (entry.addr, entry.conn, entry.last, entry.timeout, entry.generation) =
            (beat.addr, conn, now, beat.timeout, generation);
        self.deadlines.push(Reverse((now + beat.timeout, beat.key, generation)));
        if self.deadlines.len() > 4 * self.entries.len() + 64 {
            self.rebuild_deadlines();
        }
        Ok(())
    }

    /// Forgets every broker whose last heartbeat came over `conn`, and says which.
    pub fn connection_closed(&mut self, conn: C) -> Vec<Gone<C>> {
        let keys: Vec<LiveKey> = self.entries.iter().filter(|(_, e)| e.conn == conn).map(|(k, _)| k.clone()).collect();
        keys.into_iter().filter_map(|k| self.entries.remove(&k).map(|e| (k, e))).collect()
    }

    /// Forgets every broker whose deadline passed by `now`, and says which.
    pub fn expire(&mut self, now: Instant) -> Vec<Gone<C>> {
        let mut gone = Vec::new();
        while let Some(Reverse((deadline, _, _))) = self.deadlines.peek() {
            if *deadline > now {
                break;
            }
            let Some(Reverse((_, key, generation))) = self.deadlines.pop() else { break };
            if self.entries.get(&key).is_some_and(|e| e.generation == generation) {
                if let Some(entry) = self.entries.remove(&key) {
                    gone.push((key, entry));
                }
            }
        }
        gone
    }

    /// When the next deadline falls due, if any broker is alive.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.peek().map(|Reverse((at, _, _))| *at)
    }

    /// The entry of `key`, if that broker is alive at `now`.
    pub fn get(&self, key: &LiveKey, now: Instant) -> Option<&LiveEntry<C>> {
        self.entries.get(key).filter(|e| e.last + e.timeout >= now)
    }

    /// Every entry, whether or not its deadline has been acted on yet.
    pub fn entries(&self) -> impl Iterator<Item = (&LiveKey, &LiveEntry<C>)> {
        self.entries.iter()
    }

    /// How many brokers are held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no broker is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The longest heartbeat timeout among the alive brokers.
    pub fn longest_timeout(&self) -> Option<Duration> {
        self.entries.values().map(|e| e.timeout).max()
    }

    /// The table as elections see it at `now`.
    pub fn at(&self, now: Instant) -> LiveAt<'_, C> {
        LiveAt { table: self, now }
    }

    fn rebuild_deadlines(&mut self) {
        self.deadlines =
            self.entries.iter().map(|(k, e)| Reverse((e.last + e.timeout, k.clone(), e.generation))).collect();
    }
}

/// The table at one instant: what decisions are made with.
pub struct LiveAt<'a, C> {
    table: &'a LiveTable<C>,
    now: Instant,
}

impl<C: Copy + Eq> LiveView for LiveAt<'_, C> {
    fn live(&self, cluster: &str, name: &str, id: i64) -> Option<LiveFacts> {
        let key = LiveKey { cluster: cluster.to_owned(), name: name.to_owned(), id };
        self.table.get(&key, self.now).map(|e| e.facts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A channel, as the tests name them.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Ch(u64);

    fn beat(id: i64, epoch: i32, max_offset: i64, timeout_ms: u64) -> Beat {
        Beat {
            key: LiveKey { cluster: "c".into(), name: "cb".into(), id },
            addr: format!("a:{id}"),
            epoch,
            max_offset,
            confirm_offset: 0,
            timeout: Duration::from_millis(timeout_ms),
            priority: i32::MAX,
        }
    }

    #[test]
    fn epochs_and_offsets_only_move_forward() {
        let (mut t, now) = (LiveTable::<Ch>::new(10), Instant::now());
        t.heartbeat(beat(1, 2, 50, 100), Ch(1), now).unwrap();
        t.heartbeat(beat(1, 1, 99, 100), Ch(1), now).unwrap();
        assert_eq!(t.at(now).live("c", "cb", 1).map(|f| (f.epoch, f.max_offset)), Some((2, 50)));
        t.heartbeat(beat(1, 2, 60, 100), Ch(1), now).unwrap();
        assert_eq!(t.at(now).live("c", "cb", 1).map(|f| f.max_offset), Some(60));
        assert_eq!(t.at(now).live("x", "cb", 1), None);
    }

    #[test]
    fn a_deadline_fires_once_and_only_for_the_last_heartbeat() {
        let (mut t, start) = (LiveTable::<Ch>::new(10), Instant::now());
        t.heartbeat(beat(1, 0, 0, 100), Ch(1), start).unwrap();
        t.heartbeat(beat(1, 0, 0, 100), Ch(1), start + Duration::from_millis(80)).unwrap();
        assert!(t.expire(start + Duration::from_millis(150)).is_empty(), "renewed at 80 ms");
        assert!(t.at(start + Duration::from_millis(150)).live("c", "cb", 1).is_some());
        assert_eq!(t.next_deadline(), Some(start + Duration::from_millis(180)));
        let gone = t.expire(start + Duration::from_millis(181));
        assert_eq!(gone.len(), 1);
        assert!(t.expire(start + Duration::from_secs(9)).is_empty(), "exactly once");
        assert!(t.is_empty());
    }

    #[test]
    fn a_close_removes_only_brokers_whose_last_heartbeat_came_over_it() {
        let (mut t, now) = (LiveTable::<Ch>::new(10), Instant::now());
        t.heartbeat(beat(1, 0, 0, 100), Ch(1), now).unwrap();
        t.heartbeat(beat(2, 0, 0, 100), Ch(2), now).unwrap();
        t.heartbeat(beat(1, 0, 0, 100), Ch(3), now).unwrap();
        assert!(t.connection_closed(Ch(1)).is_empty(), "broker 1 moved to connection 3 (#11045)");
        let gone = t.connection_closed(Ch(2));
        assert_eq!(gone.iter().map(|(k, _)| k.id).collect::<Vec<_>>(), [2]);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn the_table_is_bounded_and_its_heap_stays_small() {
        let (mut t, now) = (LiveTable::<Ch>::new(2), Instant::now());
        t.heartbeat(beat(1, 0, 0, 100), Ch(1), now).unwrap();
        t.heartbeat(beat(2, 0, 0, 100), Ch(1), now).unwrap();
        assert_eq!(t.heartbeat(beat(3, 0, 0, 100), Ch(1), now), Err(Full { max: 2 }));
        for _ in 0..1000 {
            t.heartbeat(beat(1, 0, 0, 100), Ch(1), now).unwrap();
        }
        assert!(t.deadlines.len() <= 4 * 2 + 64 + 1, "{}", t.deadlines.len());
        assert_eq!(t.longest_timeout(), Some(Duration::from_millis(100)));
    }
}
