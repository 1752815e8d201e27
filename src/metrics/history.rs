//! The last minutes of the server's pace: every few seconds a sample of request count, the
//! request-duration buckets, mailbox depth and connections, so the status page can chart them
//! and the minute summary can report a rate and a p99.
//!
//! Samples are ordered and rates computed on the boot clock, which is never stepped: a wall
//! clock set back would otherwise give an interval of a few milliseconds (a burst of thousands
//! of requests a second) and a time axis running backwards. Each point's wall-clock time is the
//! latest sample's wall clock less the boot-clock time since the point: one step of the wall
//! clock moves the whole axis, never the order of its points.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::clock::Reading;

use serde::Serialize;

use super::histogram::{quantile, BUCKETS};

/// Samples kept: ten minutes at one every five seconds.
const KEPT: usize = 120;

/// The raw counters at one instant.
#[derive(Debug, Clone, Copy)]
struct Raw {
    /// When, on the boot clock.
    boot_ms: u64,
    /// When, on the wall clock (only the latest sample's is shown).
    wall_ms: u64,
    requests: u64,
    buckets: [u64; BUCKETS.len() + 1],
    mailbox_depth: usize,
    connections: i64,
}

/// One point of a chart: what happened since the sample before.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    /// Milliseconds since the Unix epoch, by the wall clock of the latest sample: rising from
    /// one point to the next whatever the wall clock did.
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
    /// Records the counters at `now`; a sample not later than the previous on the boot clock is
    /// left out.
    pub fn sample(
        &self,
        now: Reading,
        requests: u64,
        buckets: [u64; BUCKETS.len() + 1],
        mailbox_depth: usize,
        connections: i64,
    ) {
        let mut raw = self.raw.lock().unwrap_or_else(|e| e.into_inner());
        if raw.back().is_some_and(|last| last.boot_ms >= now.boot_ms) {
            return;
        }
        let (boot_ms, wall_ms) = (now.boot_ms, now.wall_ms);
        raw.push_back(Raw { boot_ms, wall_ms, requests, buckets, mailbox_depth, connections });
        while raw.len() > KEPT + 1 {
            raw.pop_front();
        }
    }

    /// Every interval kept, oldest first.
    pub fn points(&self) -> Vec<Point> {
        let raw = self.raw.lock().unwrap_or_else(|e| e.into_inner());
        let Some(last) = raw.back() else {
            return Vec::new();
        };
        raw.iter().zip(raw.iter().skip(1)).map(|(a, b)| between(a, b, last)).collect()
    }

    /// The interval from the sample about `seconds` ago to the latest one.
    pub fn over_last(&self, seconds: u64) -> Option<Point> {
        let raw = self.raw.lock().unwrap_or_else(|e| e.into_inner());
        let last = raw.back()?;
        let first = raw.iter().find(|r| last.boot_ms.saturating_sub(r.boot_ms) <= seconds * 1000)?;
        (first.boot_ms < last.boot_ms).then(|| between(first, last, last))
    }
}

/// The point of the interval from `a` to `b`, timed by the wall clock of `latest`.
fn between(a: &Raw, b: &Raw, latest: &Raw) -> Point {
    let seconds = (b.boot_ms.saturating_sub(a.boot_ms)) as f64 / 1000.0;
    let delta: [u64; BUCKETS.len() + 1] = std::array::from_fn(|i| b.buckets[i].saturating_sub(a.buckets[i]));
    Point {
        at_ms: latest.wall_ms.saturating_sub(latest.boot_ms.saturating_sub(b.boot_ms)),
        requests_per_second: b.requests.saturating_sub(a.requests) as f64 / seconds.max(1e-3),
        p99_ms: quantile(&delta, 0.99) * 1000.0,
        mailbox_depth: b.mailbox_depth,
        connections: b.connections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_BUCKETS: [u64; BUCKETS.len() + 1] = [0; BUCKETS.len() + 1];

    #[test]
    fn a_wall_clock_set_back_or_ahead_draws_no_burst_and_no_backward_axis() {
        let history = History::default();
        let wall0 = 1_700_000_000_000;
        // Every 5 s on the boot clock, 100 requests more; the wall clock set back an hour after
        // the second sample and ahead two hours after the fourth.
        let walls =
            [wall0, wall0 + 5_000, wall0 + 10_000 - 3_600_000, wall0 + 15_000 - 3_600_000, wall0 + 20_000 + 3_600_000];
        for (i, wall_ms) in walls.into_iter().enumerate() {
            let now = Reading { boot_ms: 9_000 + 5_000 * i as u64, wall_ms };
            history.sample(now, 100 * i as u64, NO_BUCKETS, 0, 1);
        }
        history.sample(Reading { boot_ms: 29_000, wall_ms: wall0 }, 10_000, NO_BUCKETS, 0, 1);
        let points = history.points();
        assert_eq!(points.len(), 4, "the sample not later on the boot clock is left out: {points:?}");
        assert!(points.iter().all(|p| p.requests_per_second == 20.0), "{points:?}");
        let times: Vec<u64> = points.iter().map(|p| p.at_ms).collect();
        let latest = wall0 + 20_000 + 3_600_000;
        assert_eq!(times, [latest - 15_000, latest - 10_000, latest - 5_000, latest], "5 s apart, ending now");
        let minute = history.over_last(60).unwrap();
        assert_eq!((minute.requests_per_second, minute.at_ms), (20.0, latest));
    }
}
