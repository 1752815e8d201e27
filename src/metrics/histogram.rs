//! A histogram of seconds that observes with three atomic additions and no lock, so it can sit
//! on the request path of every connection (prometheus-client's own takes a lock per
//! observation). Encoded as a Prometheus histogram.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::{MetricType, TypedMetric};

/// Upper bounds, in seconds: 10 µs to 10 s.
pub const BUCKETS: [f64; 16] =
    [1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 1.0, 10.0];

/// [`BUCKETS`] in nanoseconds: an observation finds its bucket without a float in sight.
const BUCKET_NANOS: [u64; BUCKETS.len()] = {
    let mut nanos = [0; BUCKETS.len()];
    let mut i = 0;
    while i < BUCKETS.len() {
        nanos[i] = (BUCKETS[i] * 1e9 + 0.5) as u64;
        i += 1;
    }
    nanos
};

/// Counts of observations per bucket (the last one unbounded), their count and their sum.
#[derive(Debug, Default)]
struct Inner {
    buckets: [AtomicU64; BUCKETS.len() + 1],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

/// A lock-free histogram of durations in seconds. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct SecondsHistogram {
    inner: Arc<Inner>,
}

/// The bucket a duration of `nanos` falls in.
fn bucket_of(nanos: u64) -> usize {
    BUCKET_NANOS.iter().position(|upper| nanos <= *upper).unwrap_or(BUCKETS.len())
}

/// Durations gathered on one thread without atomics, added to a [`SecondsHistogram`] at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalHistogram {
    buckets: [u64; BUCKETS.len() + 1],
    count: u64,
    sum_nanos: u64,
}

impl LocalHistogram {
    /// Records one duration.
    pub fn observe_nanos(&mut self, nanos: u64) {
        self.buckets[bucket_of(nanos)] += 1;
        self.count += 1;
        self.sum_nanos += nanos;
    }
}

impl SecondsHistogram {
    /// Records one duration.
    pub fn observe_nanos(&self, nanos: u64) {
        self.inner.buckets[bucket_of(nanos)].fetch_add(1, Ordering::Relaxed);
        self.inner.count.fetch_add(1, Ordering::Relaxed);
        self.inner.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Records the durations of `local`: one atomic addition per bucket it touched.
    pub fn add(&self, local: &LocalHistogram) {
        if local.count == 0 {
            return;
        }
        for (bucket, n) in self.inner.buckets.iter().zip(local.buckets).filter(|(_, n)| *n > 0) {
            bucket.fetch_add(n, Ordering::Relaxed);
        }
        self.inner.count.fetch_add(local.count, Ordering::Relaxed);
        self.inner.sum_nanos.fetch_add(local.sum_nanos, Ordering::Relaxed);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.inner.count.load(Ordering::Relaxed)
    }

    /// The count in each bucket (not cumulative), the last one unbounded.
    pub fn bucket_counts(&self) -> [u64; BUCKETS.len() + 1] {
        std::array::from_fn(|i| self.inner.buckets[i].load(Ordering::Relaxed))
    }
}

/// The `q` quantile (0..1) estimated from non-cumulative bucket counts, in seconds, as
/// Prometheus' `histogram_quantile` estimates it: linear interpolation within the bucket the
/// rank `q × total` falls in (from 0 for the first bucket), and the largest finite bound when
/// it falls in the unbounded last one. 0 when there is no observation.
pub fn quantile(counts: &[u64; BUCKETS.len() + 1], q: f64) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let rank = total as f64 * q.clamp(0.0, 1.0);
    let mut below = 0u64;
    for (i, &count) in counts.iter().enumerate() {
        if (below + count) as f64 >= rank && count > 0 {
            let Some(&upper) = BUCKETS.get(i) else { break };
            let lower = if i == 0 { 0.0 } else { BUCKETS[i - 1] };
            return lower + (upper - lower) * (rank - below as f64) / count as f64;
        }
        below += count;
    }
    BUCKETS[BUCKETS.len() - 1]
}

impl TypedMetric for SecondsHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for SecondsHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        // prometheus-client adds the buckets up as it writes them: it is handed each one's own
        // count, and `_count` is their total so that it always equals the `+Inf` bucket.
        let counts = self.bucket_counts();
        let buckets: Vec<(f64, u64)> =
            counts.iter().enumerate().map(|(i, count)| (BUCKETS.get(i).copied().unwrap_or(f64::MAX), *count)).collect();
        let sum = self.inner.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        encoder.encode_histogram::<NoLabelSet>(sum, counts.iter().sum(), &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_their_buckets_and_quantiles_read_back() {
        let h = SecondsHistogram::default();
        for _ in 0..98 {
            h.observe_nanos(20_000);
        }
        h.observe_nanos(3_000_000);
        h.observe_nanos(20_000_000_000);
        let counts = h.bucket_counts();
        assert_eq!((counts[1], counts[8], counts[16], h.count()), (98, 1, 1, 100));
        assert!((quantile(&counts, 0.5) - (1e-5 + 1.5e-5 * 50.0 / 98.0)).abs() < 1e-12);
        assert!((quantile(&counts, 0.99) - 5e-3).abs() < 1e-12, "the rank ends the 2.5–5 ms bucket");
        assert_eq!(quantile(&counts, 1.0), 10.0, "in the unbounded bucket: the largest finite bound");
    }

    #[test]
    fn each_bound_is_the_last_duration_of_its_bucket() {
        for (i, seconds) in BUCKETS.iter().enumerate() {
            let h = SecondsHistogram::default();
            let nanos = (seconds * 1e9).round() as u64;
            h.observe_nanos(nanos);
            h.observe_nanos(nanos + 1);
            let counts = h.bucket_counts();
            assert_eq!((counts[i], counts[i + 1]), (1, 1), "{seconds} s");
        }
    }

    #[test]
    fn quantiles_interpolate_within_their_bucket_as_histogram_quantile_does() {
        let h = SecondsHistogram::default();
        for _ in 0..100 {
            h.observe_nanos(400_000_000); // all in (0.25 s, 1 s]
        }
        let counts = h.bucket_counts();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(quantile(&counts, 0.5), 0.625), "{}", quantile(&counts, 0.5));
        assert!(close(quantile(&counts, 0.99), 0.25 + 0.75 * 0.99), "{}", quantile(&counts, 0.99));
        let mut first = [0u64; BUCKETS.len() + 1];
        first[0] = 4;
        assert!(close(quantile(&first, 0.5), 0.5e-5), "the first bucket starts at 0");
        assert_eq!(quantile(&[0; BUCKETS.len() + 1], 0.99), 0.0);
    }

    #[test]
    fn the_exposition_has_cumulative_buckets_ending_at_the_count() {
        let h = SecondsHistogram::default();
        for nanos in [20_000, 20_000, 3_000_000, 20_000_000_000] {
            h.observe_nanos(nanos);
        }
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register("d_seconds", "D", h);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        let bucket = |le: &str| {
            let line = format!("d_seconds_bucket{{le=\"{le}\"}} ");
            text.lines().find_map(|l| l.strip_prefix(line.as_str())).unwrap_or_else(|| panic!("no {le} in\n{text}"))
        };
        assert_eq!((bucket("0.00001"), bucket("0.000025"), bucket("0.0025")), ("0", "2", "2"));
        assert_eq!((bucket("0.005"), bucket("10.0"), bucket("+Inf")), ("3", "3", "4"));
        assert!(text.contains("d_seconds_count 4\n"), "{text}");
    }
}
