//! The last minutes of the server's pace: every few seconds a sample of request count, the
//! request-duration buckets, mailbox depth and connections, so the status page can chart them
//! and the minute summary can report a rate and a p99.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::histogram::{quantile, BUCKETS};

/// Samples kept: ten minutes at one every five seconds.
const KEPT: usize = 120;

/// The raw counters at one instant.
#[derive(Debug, Clone, Copy)]
struct Raw {
    at_ms: u64,
    requests: u64,
    buckets: [u64; BUCKETS.len() + 1],
    mailbox_depth: usize,
    connections: i64,
}

/// One point of a chart: what happened since the sample before.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Requests per second over the interval.
    pub requests_per_second: f64,
    /// p99 of request handling time over the interval, in milliseconds (bucket upper bound).
    pub p99_ms: f64,
    /// The registry's mailbox depth at the sample.
    pub mailbox_depth: usize,
    /// Open connections at the sample.
    pub connections: i64,
}

/// The kept samples.
#[derive(Debug, Default)]
pub struct History {
    raw: Mutex<VecDeque<Raw>>,
}

impl History {
    /// Records the counters now.
    pub fn sample(&self, requests: u64, buckets: [u64; BUCKETS.len() + 1], mailbox_depth: usize, connections: i64) {
        let at_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let mut raw = self.raw.lock().unwrap_or_else(|e| e.into_inner());
        raw.push_back(Raw { at_ms, requests, buckets, mailbox_depth, connections });
        while raw.len() > KEPT + 1 {
            raw.pop_front();
        }
    }

    /// Every interval kept, oldest first.
    pub fn points(&self) -> Vec<Point> {
        let raw = self.raw.lock().unwrap_or_else(|e| e.into_inner());
        raw.iter().zip(raw.iter().skip(1)).map(|(a, b)| between(a, b)).collect()
    }

    /// The interval from the sample about `seconds` ago to the latest one.
    pub fn over_last(&self, seconds: u64) -> Option<Point> {
        let raw = self.raw.lock().unwrap_or_else(|e| e.into_inner());
        let last = raw.back()?;
        let first = raw.iter().find(|r| last.at_ms.saturating_sub(r.at_ms) <= seconds * 1000)?;
        (first.at_ms < last.at_ms).then(|| between(first, last))
    }
}

fn between(a: &Raw, b: &Raw) -> Point {
    let seconds = (b.at_ms.saturating_sub(a.at_ms)) as f64 / 1000.0;
    let delta: [u64; BUCKETS.len() + 1] = std::array::from_fn(|i| b.buckets[i].saturating_sub(a.buckets[i]));
    Point {
        at_ms: b.at_ms,
        requests_per_second: b.requests.saturating_sub(a.requests) as f64 / seconds.max(1e-3),
        p99_ms: quantile(&delta, 0.99) * 1000.0,
        mailbox_depth: b.mailbox_depth,
        connections: b.connections,
    }
}
