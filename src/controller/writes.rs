//! Requests in turn: each is decided on the applied tables and this node's liveness when its
//! turn comes, answered at once when it changes nothing, else committed as one Raft entry
//! (within the write timeout) and answered after it applied. One write is in flight at a time,
//! so every decision sees every earlier write; events still carry epoch preconditions, so one
//! decided by a deposed leader cannot apply. Elections the controller itself starts take turns
//! here too.

use std::time::Instant;

use actix::prelude::*;
use openraft::error::{ClientWriteError, RaftError};
use tokio::sync::oneshot;
use tracing::{debug, warn};

use super::figures::{election_result, request_cause};
use super::messages::{ElectionCause, Failure, Outcome, Submit};
use super::Controller;
use crate::mailbox::Apply;
use namesrv_controller_core::decide::{decide, Answer, DecideOptions, Decision, Op};
use namesrv_controller_core::{Applied, Command};

/// Something waiting for its turn.
pub(super) enum Pending {
    /// A request from a connection, answered through `reply`.
    Request { op: Op, reply: oneshot::Sender<Outcome> },
    /// An election the controller starts for a group whose master went away (at `since`).
    Elect { name: String, attempt: u32, cause: ElectionCause, since: Instant },
}

/// The write being committed: what waits for it, and the answer it gives once applied.
pub(super) struct Committing {
    pending: Pending,
    answer: Result<Answer, Failure>,
}

/// The write of the head of the queue committed (or not).
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct WriteDone(Result<Vec<Applied>, Failure>);

impl Apply<Controller> for Submit {
    fn apply(self, controller: &mut Controller) -> oneshot::Receiver<Outcome> {
        let (reply, answer) = oneshot::channel();
        let waiting = controller.queue.len() + usize::from(controller.in_flight.is_some());
        if waiting >= controller.options.max_pending_writes {
            let _ = reply.send(Err(Failure::Busy(waiting)));
        } else {
            controller.queue.push_back(Pending::Request { op: self.op, reply });
            controller.process_queue();
        }
        answer
    }
}

impl Controller {
    /// Takes requests in turn until one needs a commit (or none is left).
    pub(super) fn process_queue(&mut self) {
        while self.in_flight.is_none() {
            let Some(pending) = self.queue.pop_front() else { return };
            let now = self.now();
            if !self.serving(now) {
                finish(pending, Err(Failure::NotLeader), self);
                continue;
            }
            let op = match &pending {
                Pending::Request { op, .. } => op.clone(),
                Pending::Elect { name, .. } => Op::ElectMaster { name: name.clone(), requester: -1, designate: false },
            };
            let options = DecideOptions { elect_unclean: self.options.elect_unclean_master };
            let Decision { event, answer } = {
                let applied = self.machine.lock();
                decide(&applied.tables, &op, &self.live.at(now), options)
            };
            let answer = answer.map_err(Failure::Refused);
            let Some(event) = event else {
                finish(pending, answer, self);
                continue;
            };
            let (Some(raft), Some(me)) = (self.raft.clone(), self.me.clone()) else {
                finish(pending, Err(Failure::NotLeader), self);
                continue;
            };
            debug!(group = %event.broker_name(), "committing controller event");
            self.in_flight = Some(Committing { pending, answer });
            let wait = self.options.write_timeout;
            let (leader, term) = (self.options.self_name.clone(), self.role.term);
            actix::spawn(async move {
                let result = match tokio::time::timeout(wait, raft.client_write(Command::one(event))).await {
                    Ok(Ok(written)) => Ok(written.data),
                    Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(_)))) => Err(Failure::NotLeader),
                    Ok(Err(e)) => Err(Failure::Unavailable(Box::new(e).into())),
                    Err(_) => Err(Failure::NotCommitted { waited: wait, leader, term }),
                };
                me.do_send(WriteDone(result));
            });
        }
    }

    /// Answers everything waiting with `failure` (leadership lost).
    pub(super) fn fail_queued(&mut self, failure: Failure) {
        while let Some(pending) = self.queue.pop_front() {
            finish(pending, Err(failure.clone()), self);
        }
    }
}

/// Answers `pending` with `outcome`; for the controller's own elections, what follows.
fn finish(pending: Pending, outcome: Outcome, controller: &mut Controller) {
    match pending {
        Pending::Request { op, reply } => {
            if let Op::ElectMaster { name, requester, designate } = &op {
                if let Ok(Answer::Elected { master, body }) = &outcome {
                    controller.notify_role_change(name, master, body);
                    controller.lost.remove(name);
                }
                if outcome != Err(Failure::NotLeader) {
                    let figures = &controller.metrics.controller.elections;
                    figures.election(request_cause(*requester, *designate), election_result(&outcome));
                }
            }
            let _ = reply.send(outcome);
        }
        Pending::Elect { name, attempt, cause, since } => {
            controller.election_done(name, attempt, cause, since, outcome)
        }
    }
}

impl Handler<WriteDone> for Controller {
    type Result = ();

    fn handle(&mut self, msg: WriteDone, _: &mut Context<Self>) {
        let Some(Committing { pending, answer }) = self.in_flight.take() else { return };
        let outcome = match msg.0 {
            Ok(applied) if applied.iter().all(|a| *a == Applied::Done) => answer,
            Ok(_) => {
                warn!("controller event stale at apply: answered with an error");
                Err(Failure::Stale)
            }
            Err(failure) => {
                warn!(error = %failure, "controller write failed");
                Err(failure)
            }
        };
        finish(pending, outcome, self);
        self.process_queue();
    }
}
