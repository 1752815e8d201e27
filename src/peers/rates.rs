//! A rate of costly requests per source address: one pipelining them waits on its own
//! connection, while other addresses keep their rate.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::PeerKey;

/// Addresses tracked at most; past it, those whose debt is paid are forgotten (an address
/// forgotten starts afresh, which gives it nothing it could not have had).
const MAX_TRACKED: usize = 65_536;

/// A rate per source address, with a burst: each request takes the next slot of its address
/// (the generic cell rate algorithm), and one past the burst waits until its slot comes. A peer
/// that pipelines costly requests therefore waits on its own connection, while other addresses
/// keep their rate.
#[derive(Debug)]
pub struct PeerRates {
    /// Time between two slots; zero: no limit.
    every: Duration,
    /// How far ahead of now slots may be taken without waiting.
    burst: Duration,
    /// Per address, when its next slot starts.
    next: Mutex<HashMap<PeerKey, Instant>>,
}

impl PeerRates {
    /// `per_second` requests a second per address, `burst` at once; 0: no limit.
    pub fn new(per_second: u32, burst: u32) -> Self {
        let every = if per_second == 0 { Duration::ZERO } else { Duration::from_secs(1) / per_second };
        PeerRates { every, burst: every * burst.saturating_sub(1), next: Mutex::new(HashMap::new()) }
    }

    /// Takes a slot for a request from `peer` at `now`: how long the request must wait first.
    pub fn take(&self, peer: IpAddr, now: Instant) -> Duration {
        if self.every.is_zero() {
            return Duration::ZERO;
        }
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if next.len() >= MAX_TRACKED {
            next.retain(|_, at| *at > now);
        }
        let slot = next.entry(PeerKey::from(peer)).or_insert(now);
        let start = (*slot).max(now);
        *slot = start + self.every;
        start.saturating_duration_since(now + self.burst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_requests_wait_their_slot_and_other_addresses_keep_their_rate() {
        let rates = PeerRates::new(10, 3);
        let now = Instant::now();
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let waits: Vec<u128> = (0..5).map(|_| rates.take(a, now).as_millis()).collect();
        assert_eq!(waits, [0, 0, 0, 100, 200], "three at once, then one per 100 ms");
        assert_eq!(rates.take(b, now), Duration::ZERO, "another address is not held up");
        assert_eq!(rates.take(a, now + Duration::from_secs(2)), Duration::ZERO, "the debt is paid by waiting");
        assert_eq!(PeerRates::new(0, 1).take(a, now), Duration::ZERO, "0: no limit");
    }
}
