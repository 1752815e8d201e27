//! Cooperative pacing of long decodes: a [`Pacer`] carried through a decode gives up its core
//! whenever the decode has run a slice without doing so. A 1.8 MB register body takes
//! milliseconds to parse; on a blocking-pool thread the scheduler would let it keep a core that
//! long while connection threads queued behind it (on two cores every route query waits it
//! out), so the decoder's loops tell the pacer after every topic.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Topics parsed between two looks at the clock in a paced decode (about 15 µs of work).
const EVERY_TOPICS: usize = 64;

/// The pacing of one decode: off, or a slice after which the decode yields its core. Made
/// where the decode starts and handed to it, so no decode reads another's pacing.
#[derive(Debug)]
pub struct Pacer {
    /// The slice and when the decode last gave up its core; `None`: never yields.
    slice: Option<(Duration, Cell<Instant>)>,
}

impl Pacer {
    /// A pacer that never yields: decodes on an event loop thread are small.
    pub fn off() -> Self {
        Pacer { slice: None }
    }

    /// A pacer that yields the core once every `slice` of work, the first slice starting now.
    pub fn every(slice: Duration) -> Self {
        Pacer { slice: Some((slice, Cell::new(Instant::now()))) }
    }

    /// Yields the core when the decode has run a whole slice since it last did.
    pub fn pace(&self) {
        if let Some((slice, since)) = &self.slice {
            if since.get().elapsed() >= *slice {
                std::thread::yield_now();
                since.set(Instant::now());
            }
        }
    }

    /// Paces a decode that has just parsed its `parsed`-th topic: looks at the clock every
    /// [`EVERY_TOPICS`] topics.
    pub fn topic_parsed(&self, parsed: usize) {
        if parsed % EVERY_TOPICS == 0 {
            self.pace();
        }
    }

    /// When the current slice started (`None` when pacing is off).
    #[cfg(test)]
    fn slice_started(&self) -> Option<Instant> {
        self.slice.as_ref().map(|(_, since)| since.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_restarts_once_used_up_and_an_off_pacer_never_looks() {
        let off = Pacer::off();
        off.pace();
        assert_eq!(off.slice_started(), None, "no pacing when it is off");
        let pacer = Pacer::every(Duration::from_millis(5));
        let first = pacer.slice_started().unwrap();
        pacer.pace();
        assert_eq!(pacer.slice_started(), Some(first), "the slice is not used up yet");
        std::thread::sleep(Duration::from_millis(6));
        pacer.pace();
        assert!(pacer.slice_started().unwrap() > first, "a used-up slice starts again after the yield");
    }

    #[test]
    fn a_decode_looks_at_the_clock_once_every_so_many_topics() {
        let pacer = Pacer::every(Duration::ZERO);
        let first = pacer.slice_started().unwrap();
        std::thread::sleep(Duration::from_millis(1));
        pacer.topic_parsed(EVERY_TOPICS - 1);
        assert_eq!(pacer.slice_started(), Some(first), "no look between the counts");
        pacer.topic_parsed(EVERY_TOPICS);
        assert!(pacer.slice_started().unwrap() > first, "a used-up slice yields at the count");
    }
}
