//! Why a connection closes on its own: a frame it cannot take, silence past the idle timeout,
//! or no progress where it holds something: no first byte after its accept (a connection
//! slot), no byte in the middle of a frame or a frame not completed in time (frame budget), no
//! byte written of the replies waiting for it (reply budget).

use actix::prelude::*;
use tracing::{debug, warn};

use super::frames::FrameError;
use super::Connection;
use crate::service::Service;

impl<S: Service> Connection<S> {
    /// Closes the connection over a frame it cannot take.
    pub(super) fn on_frame_error(&mut self, error: FrameError, ctx: &mut Context<Self>) {
        let _entered = self.span.clone().entered();
        match error {
            FrameError::BudgetExhausted { .. } => {
                // Never unbounded growth: a large frame over its share closes its connection.
                warn!("closing connection: {error}");
                ctx.stop();
            }
            FrameError::Foreign(foreign) => {
                warn!("closing connection: {foreign}");
                ctx.stop();
            }
            FrameError::Codec(error) => {
                // A frame we cannot delimit or parse leaves the stream unusable: close only this one.
                warn!(%error, "closing connection: malformed frame");
                ctx.stop();
            }
            FrameError::Io(error) => {
                debug!(%error, "closing connection: read failed");
                ctx.stop();
            }
        }
    }

    /// Closes a connection idle too long, or one that holds something without progress.
    pub(super) fn check_timeouts(&mut self, ctx: &mut Context<Self>) {
        let context = &self.context;
        let idle_timeout = context.idle_timeout;
        if self.flow.in_flight() == 0 && self.last_activity.elapsed() >= idle_timeout {
            let _entered = self.span.clone().entered();
            debug!(idle_secs = idle_timeout.as_secs(), "closing idle connection");
            return ctx.stop();
        }
        let Some(why) = self.no_progress() else {
            return;
        };
        let _entered = self.span.clone().entered();
        warn!("closing connection: {why}");
        ctx.stop();
    }

    /// What this connection holds without progress, past its deadline.
    fn no_progress(&self) -> Option<NoProgress> {
        let context = &self.context;
        let last_byte = self.last_byte.get();
        if last_byte.is_none() && self.opened_at.elapsed() >= context.first_byte_timeout {
            return Some(NoProgress::NoFirstByte { ms: context.first_byte_timeout.as_millis() });
        }
        if let Some(since) = self.receiving_since.get() {
            if since.elapsed() >= context.frame_timeout {
                return Some(NoProgress::FrameNotComplete { ms: since.elapsed().as_millis() });
            }
            if last_byte.is_some_and(|at| at.elapsed() >= context.frame_progress_timeout) {
                return Some(NoProgress::FrameStalled { ms: context.frame_progress_timeout.as_millis() });
            }
        }
        let stalled = self.flow.write_stalled_for();
        (stalled >= context.reply_drain_timeout)
            .then(|| NoProgress::RepliesUnread { bytes: self.flow.queued_bytes(), ms: stalled.as_millis() })
    }
}

/// What a connection held without progress when it was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum NoProgress {
    /// No byte since its accept.
    #[error("no byte within {ms} ms of its accept (first_byte_timeout_ms)")]
    NoFirstByte { ms: u128 },
    /// A frame not complete in time.
    #[error("frame not complete within the receive deadline (started {ms} ms ago)")]
    FrameNotComplete { ms: u128 },
    /// No byte in the middle of a frame.
    #[error("no byte for {ms} ms in the middle of a frame (frame_progress_timeout_ms)")]
    FrameStalled { ms: u128 },
    /// Replies waiting and none of their bytes written.
    #[error(
        "{bytes} reply bytes waiting and none written for {ms} ms: the peer does not read (reply_drain_timeout_ms)"
    )]
    RepliesUnread { bytes: usize, ms: u128 },
}
