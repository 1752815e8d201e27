//! Liveness and the elections it starts: heartbeats and connection closes update this node's
//! table; a timer wakes at the next heartbeat deadline; when the serving leader finds a master
//! gone (its connection closed, its heartbeats stopped while connected — apache/rocketmq#10416 —
//! or a sweep finds it dead) it elects a new one, retrying a write that failed, and tells the
//! group's alive members with NOTIFY_BROKER_ROLE_CHANGED.

use std::time::{Duration, Instant};

use actix::prelude::*;
use tracing::{debug, info, warn};

use super::messages::{BrokerHeartbeat, ChannelClosed, ElectionCause, Failure, Outcome};
use super::writes::Pending;
use super::Controller;
use crate::mailbox::Apply;
use crate::notifier::SendRoleChanged;
use crate::origin::ConnId;
use crate::protocol::controller::body::{ElectMasterResponseBody, SyncStateSet};
use crate::protocol::controller::response::MasterFields;
use crate::ratelog::RateLimit;
use namesrv_controller_core::decide::Answer;
use namesrv_controller_core::failover;
use namesrv_controller_core::liveness::Gone;
use namesrv_controller_core::liveness::Inactivity;
use namesrv_controller_core::ownership;

/// The next liveness deadline fell due.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Wake;

/// Try a controller-triggered election of group `name` again.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct RetryElection {
    name: String,
    attempt: u32,
    cause: ElectionCause,
    since: Instant,
}

/// One warning per 10 s about heartbeats the full table drops.
fn full_warnings() -> &'static RateLimit {
    static LIMIT: std::sync::OnceLock<RateLimit> = std::sync::OnceLock::new();
    LIMIT.get_or_init(|| RateLimit::new(1, Duration::from_secs(10)))
}

impl Apply<Controller> for BrokerHeartbeat {
    fn apply(mut self, controller: &mut Controller) {
        let now = controller.now();
        let (least, most) = controller.options.heartbeat_timeouts;
        self.beat.timeout = self.beat.timeout.clamp(least, most);
        let admitted = {
            let applied = controller.machine.lock();
            ownership::admit_beat(&applied.tables, &controller.owners, &self.beat, self.conn, now)
        };
        if let Err(not_owner) = admitted {
            return controller.refused_speaker(&not_owner);
        }
        let (key, timeout, account) = (&self.beat.key, self.beat.timeout, self.account.as_deref());
        let _ = controller.owners.claim(key, self.conn, account, (now, timeout));
        if let Err(full) = controller.live.heartbeat(self.beat, self.conn, now) {
            if let Some(suppressed) = full_warnings().admit() {
                warn!(max = full.max, suppressed, "controller liveness table full: heartbeat of a new broker dropped");
            }
            return;
        }
        controller.schedule_wake();
    }
}

impl Apply<Controller> for ChannelClosed {
    fn apply(self, controller: &mut Controller) {
        controller.owners.release(self.conn);
        let gone = controller.live.connection_closed(self.conn);
        controller.inactive(gone, Inactivity::ConnectionClosed);
    }
}

impl Handler<Wake> for Controller {
    type Result = ();

    fn handle(&mut self, _: Wake, _: &mut Context<Self>) {
        self.wake = None;
        let gone = self.live.expire(self.now());
        self.inactive(gone, Inactivity::HeartbeatTimeout);
        self.schedule_wake();
    }
}

impl Handler<RetryElection> for Controller {
    type Result = ();

    fn handle(&mut self, msg: RetryElection, _: &mut Context<Self>) {
        let (name, attempt, cause, since) = (msg.name, msg.attempt, msg.cause, msg.since);
        self.queue.push_back(Pending::Elect { name, attempt, cause, since });
        self.process_queue();
    }
}

impl Controller {
    /// Sets the wake timer to the next deadline, unless it is set for that time or earlier.
    fn schedule_wake(&mut self) {
        let Some(next) = self.live.next_deadline() else { return };
        if self.wake.as_ref().is_some_and(|(at, _)| *at <= next) {
            return;
        }
        let Some(me) = self.me.clone() else { return };
        if let Some((_, old)) = self.wake.take() {
            old.abort();
        }
        // A millisecond late, so the deadline has passed when the table is asked.
        let at = next + Duration::from_millis(1);
        let timer = actix::spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            me.do_send(Wake);
        });
        self.wake = Some((at, timer));
    }

    /// Brokers that stopped being alive: an election for each group whose master it was. One
    /// broker is logged on its own; more (a connection that carried many) as one summary, each
    /// at DEBUG. A retiring peer's own closes are nobody's loss.
    fn inactive(&mut self, gone: Vec<Gone<ConnId>>, cause: Inactivity) {
        if self.retiring || gone.is_empty() {
            return;
        }
        let now = self.now();
        let summarise = gone.len() > 1;
        let mut masters = 0;
        for (key, entry) in &gone {
            let silent_ms = now.saturating_duration_since(entry.last).as_millis() as u64;
            if summarise {
                debug!(cluster = %key.cluster, broker = %key.name, id = key.id, addr = %entry.addr, cause = cause.name(), silent_ms, "controller: broker inactive");
            } else {
                info!(cluster = %key.cluster, broker = %key.name, id = key.id, addr = %entry.addr, cause = cause.name(), silent_ms, "controller: broker inactive");
            }
            let is_master = failover::is_master(&self.machine.lock().tables, key);
            masters += usize::from(is_master);
            if is_master && self.serving(now) {
                // Kept for the election that follows, now or (still warming up) at a sweep.
                self.lost.insert(key.name.clone(), (ElectionCause::Inactive(cause), now));
                self.trigger_election(&key.name, ElectionCause::Inactive(cause));
            }
        }
        if summarise {
            info!(brokers = gone.len(), masters, cause = cause.name(), "controller: brokers inactive");
        }
    }

    /// Every sweep period: groups whose master is dead while a replica lives get an election.
    pub(super) fn sweep(&mut self) {
        self.publish_groups();
        let now = self.now();
        if !self.serving(now) {
            return;
        }
        let names = failover::orphaned_groups(&self.machine.lock().tables, &self.live.at(now));
        for name in names {
            self.trigger_election(&name, ElectionCause::Sweep);
        }
    }

    /// Queues an election of group `name` by the controller, once per group at a time, on the
    /// serving leader that has had time to hear every broker's heartbeat. Its cause and start
    /// are the master's loss when this node saw it.
    fn trigger_election(&mut self, name: &str, cause: ElectionCause) {
        let now = self.now();
        let (cause, since) = self.lost.get(name).copied().unwrap_or((cause, now));
        let ready = self.serving(now) && failover::warmed_up(self.started_at, now, self.options.election_warm_up);
        if !ready || !self.electing.insert(name.to_owned()) {
            return;
        }
        info!(broker = %name, cause = ?cause, "controller: electing a new master");
        self.queue.push_back(Pending::Elect { name: name.to_owned(), attempt: 0, cause, since });
        self.process_queue();
    }

    /// A controller-triggered election (of a master lost at `since`) ended with `outcome`; a
    /// write that failed is tried again, and only the last try is counted.
    pub(super) fn election_done(
        &mut self,
        name: String,
        attempt: u32,
        cause: ElectionCause,
        since: Instant,
        outcome: Outcome,
    ) {
        match &outcome {
            Ok(Answer::Elected { master, body }) => {
                info!(broker = %name, master = ?master.master_broker_id, epoch = ?master.master_epoch, cause = ?cause, "controller: new master elected");
                self.notify_role_change(&name, master, body);
            }
            Ok(_) => info!(broker = %name, "controller: master kept"),
            Err(Failure::Refused(refusal)) => {
                info!(broker = %name, remark = %refusal.remark, "controller: no new master")
            }
            Err(failure) if attempt + 1 < self.options.elect_max_retries.max(1) => {
                let backoff = Duration::from_millis(100 << attempt.min(6));
                warn!(broker = %name, error = %failure, attempt, "controller: election failed; retrying");
                if let Some(me) = self.me.clone() {
                    let retry = RetryElection { name, attempt: attempt + 1, cause, since };
                    actix::spawn(async move {
                        tokio::time::sleep(backoff).await;
                        me.do_send(retry);
                    });
                }
                return;
            }
            Err(failure) => warn!(broker = %name, error = %failure, "controller: election failed; giving up"),
        }
        self.count_election(cause, since, &outcome);
        self.lost.remove(&name);
        self.electing.remove(&name);
        self.publish_groups();
    }

    /// NOTIFY_BROKER_ROLE_CHANGED to every alive member of the group (Java's `NotifyService`).
    pub(super) fn notify_role_change(&self, name: &str, master: &MasterFields, body: &ElectMasterResponseBody) {
        let Some(group) = body.member_group.as_ref().filter(|_| self.options.notify_broker_role_changed) else {
            return;
        };
        let targets = failover::alive_members(group, name, &self.live.at(self.now()));
        let set =
            SyncStateSet { ids: body.sync_state_set.clone(), epoch: master.sync_state_set_epoch.unwrap_or_default() };
        self.notifier.tell(SendRoleChanged { conn: ConnId::SERVER, targets, master: master.clone(), set });
    }
}
