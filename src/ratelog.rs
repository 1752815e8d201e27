//! Warnings a peer can cause at will (refused credentials, failed TLS handshakes), and the
//! per-request and per-message debug lines, limited to a few lines per interval so that a flood
//! cannot fill the disk. The lines that were not written are counted and reported with the next
//! line that is.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Most per-request debug lines (target `namesrv::connection`) written per second, and as many
/// per-message lines (target `namesrv::mailbox`); the others are counted in the `suppressed`
/// field of the next line written.
pub const DEBUG_LINES_PER_SECOND: u32 = 100;

/// The limit of the per-request debug lines; consulted only while they are enabled.
pub fn request_lines() -> &'static RateLimit {
    static LIMIT: OnceLock<RateLimit> = OnceLock::new();
    LIMIT.get_or_init(|| RateLimit::new(DEBUG_LINES_PER_SECOND, Duration::from_secs(1)))
}

/// The limit of the per-message debug lines of the actors; consulted only while they are enabled.
pub fn actor_lines() -> &'static RateLimit {
    static LIMIT: OnceLock<RateLimit> = OnceLock::new();
    LIMIT.get_or_init(|| RateLimit::new(DEBUG_LINES_PER_SECOND, Duration::from_secs(1)))
}

/// At most `max` lines per `window`.
#[derive(Debug)]
pub struct RateLimit {
    max: u32,
    window: Duration,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// When the current window began.
    began: Instant,
    /// Lines written in the current window.
    written: u32,
    /// Lines not written since the last one that was.
    suppressed: u64,
}

impl RateLimit {
    /// A limit of `max` lines per `window`.
    pub fn new(max: u32, window: Duration) -> Self {
        RateLimit { max, window, state: Mutex::new(State { began: Instant::now(), written: 0, suppressed: 0 }) }
    }

    /// The usual limit for peer-caused warnings: 20 lines per 10 s.
    pub fn for_peers() -> Self {
        Self::new(20, Duration::from_secs(10))
    }

    /// `Some(suppressed)` when this line may be written, `suppressed` being the number of lines
    /// left out since the last one written; `None` when it must be left out (and is counted).
    pub fn admit(&self) -> Option<u64> {
        self.admit_at(Instant::now())
    }

    fn admit_at(&self, now: Instant) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if now.saturating_duration_since(state.began) >= self.window {
            state.began = now;
            state.written = 0;
        }
        if state.written >= self.max {
            state.suppressed += 1;
            return None;
        }
        state.written += 1;
        Some(std::mem::take(&mut state.suppressed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_max_lines_per_window_and_the_next_one_reports_what_was_left_out() {
        let limit = RateLimit::new(3, Duration::from_secs(10));
        let start = Instant::now();
        let admitted: Vec<Option<u64>> = (0..10).map(|_| limit.admit_at(start)).collect();
        assert_eq!(&admitted[..3], &[Some(0), Some(0), Some(0)]);
        assert!(admitted[3..].iter().all(Option::is_none));
        let later = start + Duration::from_secs(11);
        assert_eq!(limit.admit_at(later), Some(7), "the first line of the next window counts the 7 left out");
        assert_eq!(limit.admit_at(later), Some(0));
    }
}
