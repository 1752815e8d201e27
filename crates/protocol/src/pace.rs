//! Cooperative pacing of long decodes: a decode run under [`paced`] gives up its core whenever
//! it has run a slice without doing so. A 1.8 MB register body takes milliseconds to parse; on
//! a blocking-pool thread the scheduler would let it keep a core that long while connection
//! threads queued behind it (on two cores every route query waits it out), so the decoder's
//! loops call [`topic_parsed`] after every topic.

use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    /// The slice of the decode running on this thread and when it last gave up its core.
    static SLICE: Cell<Option<(Duration, Instant)>> = const { Cell::new(None) };
}

/// Topics parsed between two looks at the clock in a paced decode (about 15 µs of work).
const EVERY_TOPICS: usize = 64;

/// Runs `work`, letting other threads have the core at least every `slice`.
pub fn paced<T>(slice: Duration, work: impl FnOnce() -> T) -> T {
    let previous = SLICE.with(|s| s.replace(Some((slice, Instant::now()))));
    let out = work();
    SLICE.with(|s| s.set(previous));
    out
}

/// Yields the core when the paced work on this thread has run a whole slice; outside
/// [`paced`] it does nothing (decodes on an event loop thread are small and never yield it).
pub fn pace() {
    SLICE.with(|s| {
        if let Some((slice, since)) = s.get() {
            if since.elapsed() >= slice {
                std::thread::yield_now();
                s.set(Some((slice, Instant::now())));
            }
        }
    });
}

/// Paces a decode that has just parsed its `parsed`-th topic: looks at the clock every
/// [`EVERY_TOPICS`] topics.
pub fn topic_parsed(parsed: usize) {
    if parsed % EVERY_TOPICS == 0 {
        pace();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice_started() -> Option<Instant> {
        SLICE.with(|s| s.get().map(|(_, since)| since))
    }

    #[test]
    fn a_slice_restarts_once_used_up_and_pacing_ends_with_the_work() {
        assert_eq!(slice_started(), None);
        pace();
        assert_eq!(slice_started(), None, "no pacing outside paced work");
        paced(Duration::from_millis(5), || {
            let first = slice_started().unwrap();
            pace();
            assert_eq!(slice_started(), Some(first), "the slice is not used up yet");
            std::thread::sleep(Duration::from_millis(6));
            pace();
            assert!(slice_started().unwrap() > first, "a used-up slice starts again after the yield");
            let inner = paced(Duration::from_secs(1), slice_started);
            assert!(inner.is_some());
            assert!(slice_started().unwrap() > first, "the outer slice is back after nested work");
        });
        assert_eq!(slice_started(), None);
    }

    #[test]
    fn a_decode_looks_at_the_clock_once_every_so_many_topics() {
        paced(Duration::ZERO, || {
            let first = slice_started().unwrap();
            std::thread::sleep(Duration::from_millis(1));
            topic_parsed(EVERY_TOPICS - 1);
            assert_eq!(slice_started(), Some(first), "no look between the counts");
            topic_parsed(EVERY_TOPICS);
            assert!(slice_started().unwrap() > first, "a used-up slice yields at the count");
        });
    }
}
