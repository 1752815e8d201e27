//! The leader gate: what Raft says about this node (forwarded from openraft's metrics), when it
//! may serve (leader, first commit of its term applied, a quorum heard from within the lease),
//! and who leads as CONTROLLER_GET_METADATA_INFO answers it on every node.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use openraft::ServerState;
use tracing::{info, warn};

use super::messages::{Failure, GetMetadata, Retire};
use super::raft::{Peer, Raft};
use super::Controller;
use crate::clock::Clock;
use crate::mailbox::Apply;
use crate::metrics::controller::RaftSample;
use crate::metrics::Metrics;
use crate::protocol::controller::response::MetadataResponse;

/// What Raft last said about this node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RaftView {
    /// Leader, follower, candidate...
    pub state: Option<ServerState>,
    /// The current term.
    pub term: u64,
    /// The leader's node id, when known.
    pub leader: Option<u64>,
    /// When a quorum last acknowledged this node as leader (leaders only).
    pub quorum_acked_at: Option<Instant>,
    /// The index of the last applied entry.
    pub last_applied: Option<u64>,
}

/// Raft's metrics changed (forwarded by the task [`watch_metrics`] starts).
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct RaftChanged(RaftView);

/// The first commit of `term` is applied on this leader.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct LeaderReady {
    term: u64,
    ok: bool,
}

/// Forwards every change of `raft`'s metrics to the controller (no guard held across an await).
/// Exports each change in `figures` ([`crate::metrics::controller`]) as well, the lags named
/// by the peer ids of `peers`.
pub(super) fn watch_metrics(
    raft: &Raft,
    controller: Addr<Controller>,
    (figures, peers): (Arc<Metrics>, BTreeMap<u64, Peer>),
    clock: Arc<dyn Clock>,
) {
    let mut metrics = raft.metrics();
    figures.controller.enable();
    actix::spawn(async move {
        let mut before = RaftSample::default();
        loop {
            let (view, lags) = {
                let m = metrics.borrow();
                let now = clock.instant();
                let view = RaftView {
                    state: Some(m.state),
                    term: m.current_term,
                    leader: m.current_leader,
                    quorum_acked_at: m.millis_since_quorum_ack.map(|ms| now - Duration::from_millis(ms)),
                    last_applied: m.last_applied.map(|l| l.index),
                };
                (view, replication_lags(&m, &peers))
            };
            let now =
                RaftSample { leader: view.state == Some(ServerState::Leader), leader_id: view.leader, term: view.term };
            figures.controller.observe(before, now);
            figures.controller.lags(&lags);
            before = now;
            if controller.try_send(RaftChanged(view)).is_err() || metrics.changed().await.is_err() {
                return;
            }
        }
    });
}

/// On the leader, how many entries each other peer lacks, by peer id; empty elsewhere.
fn replication_lags(m: &openraft::RaftMetrics<u64, Peer>, peers: &BTreeMap<u64, Peer>) -> Vec<(String, u64)> {
    let (Some(replication), Some(last)) = (&m.replication, m.last_log_index) else { return Vec::new() };
    replication
        .iter()
        .filter(|(id, _)| **id != m.id)
        .filter_map(|(id, matched)| {
            let name = peers.get(id)?.name.clone();
            Some((name, last.saturating_sub(matched.map_or(0, |l| l.index))))
        })
        .collect()
}

impl Controller {
    /// Whether this node serves requests now: the leader whose first commit of its term is
    /// applied, acknowledged by a quorum within the lease, and not retiring.
    pub(super) fn serving(&self, now: Instant) -> bool {
        !self.retiring
            && self.role.state == Some(ServerState::Leader)
            && self.ready_term == Some(self.role.term)
            && self.role.quorum_acked_at.is_some_and(|at| now.saturating_duration_since(at) < self.options.leader_lease)
    }

    /// The metadata answer: the leader's id and controller address when one is known (this
    /// node only while it serves), and whether this node is it.
    pub(super) fn metadata(&self, now: Instant) -> MetadataResponse {
        let me = self.options.self_id();
        let serving = self.serving(now);
        let leader = match self.role.leader {
            Some(id) if id == me && !serving => None,
            other => other,
        };
        let peer = leader.and_then(|id| self.options.peer(id));
        MetadataResponse {
            group: self.options.group.clone(),
            controller_leader_id: peer.map(|p| p.name.clone()),
            controller_leader_address: peer.map(|p| p.addr.clone()),
            is_leader: serving,
            peers: self.options.peers_text(),
        }
    }

    fn on_raft_changed(&mut self, view: RaftView, ctx: &mut Context<Self>) {
        let was = (self.role.state, self.role.term, self.role.leader);
        self.role = view;
        let now = (self.role.state, self.role.term, self.role.leader);
        if was != now {
            info!(state = ?self.role.state, term = self.role.term, leader = ?self.role.leader, "controller raft role");
        }
        if self.role.state != Some(ServerState::Leader) {
            if self.ready_term.take().is_some() {
                warn!(term = self.role.term, "controller no longer leads: requests answered not-leader");
            }
            self.readying = None;
            self.fail_queued(Failure::NotLeader);
            return;
        }
        let term = self.role.term;
        if self.ready_term == Some(term) || self.readying == Some(term) {
            return;
        }
        let Some(raft) = self.raft.clone() else { return };
        self.readying = Some(term);
        let ready = async move { raft.ensure_linearizable().await.is_ok() };
        ctx.spawn(ready.into_actor(self).map(move |ok, _, ctx| ctx.notify(LeaderReady { term, ok })));
    }
}

impl Handler<RaftChanged> for Controller {
    type Result = ();

    fn handle(&mut self, msg: RaftChanged, ctx: &mut Context<Self>) {
        let served = self.serving(self.now());
        self.on_raft_changed(msg.0, ctx);
        if self.serving(self.now()) != served {
            self.publish_groups();
        }
        self.process_queue();
    }
}

impl Handler<LeaderReady> for Controller {
    type Result = ();

    fn handle(&mut self, msg: LeaderReady, _: &mut Context<Self>) {
        if self.readying == Some(msg.term) {
            self.readying = None;
        }
        if !msg.ok || self.role.state != Some(ServerState::Leader) || self.role.term != msg.term {
            return;
        }
        info!(term = msg.term, "controller leader ready: first commit of its term applied");
        self.ready_term = Some(msg.term);
        self.process_queue();
        self.sweep();
    }
}

impl Apply<Controller> for Retire {
    fn apply(self, controller: &mut Controller) -> Option<Raft> {
        let leading = controller.serving(controller.now());
        controller.retiring = true;
        info!(leading, "controller stopping: no election from here on; leadership passes to another peer");
        controller.process_queue();
        controller.raft.clone()
    }
}

impl Apply<Controller> for GetMetadata {
    fn apply(self, controller: &mut Controller) -> MetadataResponse {
        controller.metadata(controller.now())
    }
}
