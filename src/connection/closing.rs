//! Why a connection closes on its own: a frame it cannot take, a frame not completed in time,
//! or silence past the idle timeout.

use actix::prelude::*;
use tracing::{debug, warn};

use super::frames::FrameError;
use super::Connection;

impl Connection {
    /// Closes the connection over a frame it cannot take.
    pub(super) fn on_frame_error(&mut self, error: FrameError, ctx: &mut Context<Self>) {
        let _entered = self.span.clone().entered();
        match error {
            FrameError::BudgetExhausted { frame, held, max } => {
                // Never unbounded growth: a large frame that does not fit closes its connection.
                warn!(frame, held, max, "closing connection: frame budget exhausted");
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

    /// Closes a connection idle too long, or whose frame is not complete in time.
    pub(super) fn check_timeouts(&mut self, ctx: &mut Context<Self>) {
        let idle_timeout = self.context.idle_timeout;
        if self.flow.in_flight() == 0 && self.last_activity.elapsed() >= idle_timeout {
            let _entered = self.span.clone().entered();
            debug!(idle_secs = idle_timeout.as_secs(), "closing idle connection");
            ctx.stop();
        } else if let Some(since) = self.receiving_since.get().filter(|s| s.elapsed() >= self.context.frame_timeout) {
            let _entered = self.span.clone().entered();
            let waited_ms = since.elapsed().as_millis() as u64;
            warn!(waited_ms, "closing connection: frame not complete within the receive deadline");
            ctx.stop();
        }
    }
}
