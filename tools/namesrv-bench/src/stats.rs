//! Latency samples and their percentiles.

use serde::Serialize;

/// Collected latencies (µs) and counts of one measured window.
#[derive(Default)]
pub struct Samples {
    latencies_us: Vec<u64>,
    pub errors: u64,
    pub bytes: u64,
}

/// The figures a run reports.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub requests: u64,
    pub errors: u64,
    pub seconds: f64,
    pub per_second: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    pub bytes_per_second: f64,
}

impl Samples {
    /// Records one answered request.
    pub fn record(&mut self, latency_us: u64, ok: bool, bytes: usize) {
        self.latencies_us.push(latency_us);
        self.bytes += bytes as u64;
        if !ok {
            self.errors += 1;
        }
    }

    /// Requests recorded.
    pub fn count(&self) -> usize {
        self.latencies_us.len()
    }

    /// Merges another window's samples.
    pub fn merge(&mut self, other: Samples) {
        self.latencies_us.extend(other.latencies_us);
        self.errors += other.errors;
        self.bytes += other.bytes;
    }

    /// Percentiles over `seconds` of measuring.
    pub fn summary(mut self, seconds: f64) -> Summary {
        self.latencies_us.sort_unstable();
        let n = self.latencies_us.len();
        let at = |q: f64| if n == 0 { 0 } else { self.latencies_us[((n as f64 * q) as usize).min(n - 1)] };
        Summary {
            requests: n as u64,
            errors: self.errors,
            seconds,
            per_second: n as f64 / seconds.max(1e-9),
            p50_us: at(0.50),
            p90_us: at(0.90),
            p99_us: at(0.99),
            p999_us: at(0.999),
            max_us: self.latencies_us.last().copied().unwrap_or(0),
            bytes_per_second: self.bytes as f64 / seconds.max(1e-9),
        }
    }
}

/// A small deterministic generator (xorshift64*), so runs are repeatable with a seed.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced).
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1) as u64) as usize
    }
}
