//! What the controller tells [`crate::metrics::elections`]: how each election ended, how long
//! a failover took, and each broker group as the serving leader sees it (refreshed every sweep
//! and after every controller-triggered election; cleared on a peer that does not serve).

use std::time::Instant;

use super::messages::{ElectionCause, Failure, Outcome};
use super::Controller;
use crate::metrics::elections::GroupFigure;
use crate::protocol::controller::ControllerResponseCode as Code;
use namesrv_controller_core::decide::Answer;
use namesrv_controller_core::failover;

/// The `result` label of an election that ended with `outcome`.
pub(super) fn election_result(outcome: &Outcome) -> &'static str {
    match outcome {
        Ok(Answer::Elected { .. }) => "elected",
        Ok(_) => "master_kept",
        Err(Failure::Refused(r)) if matches!(r.code, Code::MasterNotAvailable | Code::ElectMasterFailed) => {
            "no_candidate"
        }
        Err(Failure::Refused(_)) => "refused",
        Err(_) => "failed",
    }
}

/// The `cause` label of an election a request asked for: an administrator's when it designates
/// a master or speaks for the controller (broker id -1), else the broker's own.
pub(super) fn request_cause(requester: i64, designate: bool) -> &'static str {
    if designate || requester == -1 {
        "admin"
    } else {
        "broker"
    }
}

impl Controller {
    /// Counts an election the controller started for `cause` at `since`, ended with `outcome`
    /// (the failover time too, when a new master was elected and told).
    pub(super) fn count_election(&self, cause: ElectionCause, since: Instant, outcome: &Outcome) {
        let figures = &self.metrics.controller.elections;
        let result = election_result(outcome);
        figures.election(cause.name(), result);
        if result == "elected" {
            figures.failover(cause.name(), self.now().saturating_duration_since(since).as_secs_f64());
        }
    }

    /// Exports whether this peer serves, and every broker group's figures when it does.
    pub(super) fn publish_groups(&self) {
        let now = self.now();
        if !self.serving(now) {
            self.metrics.controller.elections.set_groups(false, &[]);
            return;
        }
        let health = failover::group_health(&self.machine.lock().tables, &self.live.at(now));
        let figures: Vec<GroupFigure> = health
            .into_iter()
            .map(|h| GroupFigure {
                name: h.name,
                alive: h.alive,
                in_sync: h.in_sync,
                has_live_master: h.has_live_master,
            })
            .collect();
        self.metrics.controller.elections.set_groups(true, &figures);
    }
}
