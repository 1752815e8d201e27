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
use super::messages::{ElectionCause, Failure, Outcome, Speaker, Submit};
use super::Controller;
use crate::mailbox::Apply;
use namesrv_controller_core::decide::{decide, Answer, DecideOptions, Decision, Op, Refusal};
use namesrv_controller_core::ownership;
use namesrv_controller_core::{Applied, Command};
use namesrv_protocol::controller::ControllerResponseCode as Code;

/// Something waiting for its turn.
pub(super) enum Pending {
    /// A request from `from`, answered through `reply`.
    Request { op: Op, reply: oneshot::Sender<Outcome>, from: Speaker },
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
        let max = controller.options.max_pending_writes;
        let theirs = controller.pending_from.get(&self.from.source).copied().unwrap_or(0);
        if waiting >= max {
            let _ = reply.send(Err(Failure::Busy(waiting)));
        } else if theirs >= controller.options.source_share(max) {
            // One source's share of the queue: a source pipelining requests waits on its own.
            let _ = reply.send(Err(Failure::Busy(theirs)));
        } else {
            *controller.pending_from.entry(self.from.source).or_default() += 1;
            controller.queue.push_back(Pending::Request { op: self.op, reply, from: self.from });
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
            let decided = {
                let applied = self.machine.lock();
                let speaker = match &pending {
                    Pending::Request { from, .. } => {
                        ownership::check(&applied.tables, &self.owners, &op, from.conn, now)
                    }
                    Pending::Elect { .. } => Ok(()),
                };
                speaker.map(|()| decide(&applied.tables, &op, &self.live.at(now), options))
            };
            let Decision { event, answer } = match decided {
                Ok(decision) => decision,
                Err(not_owner) => {
                    self.refused_speaker(&not_owner);
                    let refusal = Refusal { code: Code::InvalidRequest, remark: not_owner.to_string() };
                    finish(pending, Err(Failure::Refused(refusal)), self);
                    continue;
                }
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

/// Answers `pending` with `outcome`; for the controller's own elections, what follows. A
/// request answered speaks for its replica: its connection owns it from now on.
fn finish(pending: Pending, outcome: Outcome, controller: &mut Controller) {
    match pending {
        Pending::Request { op, reply, from } => {
            controller.settle_speaker(&from, &op, &outcome);
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
