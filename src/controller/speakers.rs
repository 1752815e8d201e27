//! Who speaks for which replica, on this peer (`namesrv_controller_core::ownership`): a request
//! answered for a replica makes its connection the replica's owner, a closed connection frees
//! what it owned, a cleaned replica is forgotten; what is refused for speaking for another's
//! replica is counted and logged (rate-limited). And each source's place in the write queue.

use std::time::Duration;

use namesrv_controller_core::decide::Op;
use namesrv_controller_core::ownership::{self, NotOwner, CLAIM_TIMEOUT};
use tracing::warn;

use super::messages::{Outcome, Speaker};
use super::Controller;
use crate::origin::ConnId;
use crate::ratelog::RateLimit;

/// One warning per 10 s about refused speakers.
fn refusal_warnings() -> &'static RateLimit {
    static LIMIT: std::sync::OnceLock<RateLimit> = std::sync::OnceLock::new();
    LIMIT.get_or_init(|| RateLimit::new(1, Duration::from_secs(10)))
}

impl Controller {
    /// A request from `from` ended with `outcome`: its source's place in the queue is free; one
    /// answered for a replica (an id applied, a registration, an election it asked for) makes
    /// `from` the replica's owner, and cleaning forgets the owners of what it removed.
    pub(super) fn settle_speaker(&mut self, from: &Speaker, op: &Op, outcome: &Outcome) {
        if let Some(waiting) = self.pending_from.get_mut(&from.source) {
            *waiting -= 1;
            if *waiting == 0 {
                self.pending_from.remove(&from.source);
            }
        }
        if outcome.is_err() || from.conn == ConnId::SERVER {
            return;
        }
        let now = self.now();
        let applied = self.machine.lock();
        if let Op::CleanBrokerData { .. } = op {
            self.owners.retain_known(&applied.tables);
        } else if let Some((key, _)) = ownership::speaks_for(&applied.tables, op) {
            let _ = self.owners.claim(&key, from.conn, from.account.as_deref(), (now, CLAIM_TIMEOUT));
        }
    }

    /// Counts and logs (rate-limited) a request or heartbeat refused for speaking for a replica
    /// it does not own.
    pub(super) fn refused_speaker(&self, not_owner: &NotOwner) {
        let reason = match not_owner {
            NotOwner::BoundElsewhere { .. } => "bound_elsewhere",
            NotOwner::NotHeard { .. } => "not_heard",
            NotOwner::Unknown { .. } => "unknown_replica",
        };
        self.metrics.controller.refused(reason);
        if let Some(suppressed) = refusal_warnings().admit() {
            warn!(reason, suppressed, error = %not_owner, "controller refused a request or heartbeat");
        }
    }
}
