//! The `Notifier` actor: the server's outbound requests, NOTIFY_MIN_BROKER_ID_CHANGE (905,
//! oneway) and the controller's NOTIFY_BROKER_ROLE_CHANGED (1008, oneway), sent over
//! short-lived connections to broker addresses. Sending
//! happens in spawned tasks with a 300 ms budget, so nothing ever waits on a broker, and within
//! [`NotifyLimits`], so a peer churning a group's members cannot make the NameServer open
//! connections without bound.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use bytes::BytesMut;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tracing::{debug, info, warn};

use crate::mailbox::{Apply, Mailbox};
use crate::metrics::Metrics;
use crate::model::BrokerData;
use crate::origin::ConnId;
use crate::protocol::codec::encode_frame;
use crate::protocol::command::FLAG_ONEWAY;
use crate::protocol::controller::body::SyncStateSet;
use crate::protocol::controller::response::MasterFields;
use crate::protocol::controller::ControllerRequestCode;
use crate::protocol::{ExtFields, RemotingCommand, RequestCode};
use crate::ratelog::RateLimit;
use crate::{logged_handler, request};

/// Java's send timeout for NOTIFY_MIN_BROKER_ID_CHANGE.
const SEND_TIMEOUT: Duration = Duration::from_millis(300);

/// Java's send timeout for NOTIFY_BROKER_ROLE_CHANGED (`ControllerManager.NotifyService`).
const ROLE_CHANGE_TIMEOUT: Duration = Duration::from_secs(3);

/// A NOTIFY_MIN_BROKER_ID_CHANGE to send: the registry decides it, the notifier delivers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinBrokerIdChange {
    /// Addresses to send it to.
    pub targets: Vec<String>,
    /// The group's lowest broker id now.
    pub min_broker_id: i64,
    /// The address of that member.
    pub min_broker_addr: String,
    /// The member that went away, when one did.
    pub offline_broker_addr: Option<String>,
    /// The HA address of the member that joined, when one did.
    pub ha_broker_addr: Option<String>,
}

impl MinBrokerIdChange {
    /// The notification for `group`, whose lowest id just changed; with `others_only` the new
    /// minimum itself is left out of the targets (Java's `notifyMinBrokerIdChanged`).
    pub fn for_group(
        group: &BrokerData,
        others_only: bool,
        offline_broker_addr: Option<String>,
        ha_broker_addr: Option<String>,
    ) -> Self {
        let (min_broker_id, min_broker_addr) =
            group.broker_addrs.iter().next().map(|(id, addr)| (*id, addr.clone())).unwrap_or_default();
        let targets =
            group.broker_addrs.values().filter(|addr| !others_only || **addr != min_broker_addr).cloned().collect();
        Self { targets, min_broker_id, min_broker_addr, offline_broker_addr, ha_broker_addr }
    }
}

/// How much outbound work notifications may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotifyLimits {
    /// Notifications under way at once (each one connection).
    pub max_in_flight: usize,
    /// Notifications started per second.
    pub max_per_second: u32,
}

/// The budget notifications are sent within: a count of those under way and a rate.
struct Budget {
    limits: NotifyLimits,
    in_flight: Arc<AtomicUsize>,
    rate: RateLimit,
    /// One warning line per 10 s about dropped notifications.
    warn: RateLimit,
}

/// One notification under way; the count goes down when it is dropped.
struct Sending(Arc<AtomicUsize>);

impl Drop for Sending {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Budget {
    fn new(limits: NotifyLimits) -> Self {
        Budget {
            limits,
            in_flight: Arc::new(AtomicUsize::new(0)),
            rate: RateLimit::new(limits.max_per_second, Duration::from_secs(1)),
            warn: RateLimit::new(1, Duration::from_secs(10)),
        }
    }

    /// A place for one more notification, or `None` (and a rate-limited warning) when the
    /// limits are reached.
    fn start(&self, target: &str) -> Option<Sending> {
        if self.in_flight.load(Ordering::Relaxed) < self.limits.max_in_flight && self.rate.admit().is_some() {
            self.in_flight.fetch_add(1, Ordering::Relaxed);
            return Some(Sending(self.in_flight.clone()));
        }
        if let Some(suppressed) = self.warn.admit() {
            warn!(
                target = %target,
                max_in_flight = self.limits.max_in_flight,
                max_per_second = self.limits.max_per_second,
                suppressed,
                "min broker id change not sent: outbound notification limit reached"
            );
        }
        None
    }
}

/// The outbound notification actor.
pub struct Notifier {
    /// The opaque of the last notification sent.
    next_opaque: i32,
    /// The MQVersion stamped on notifications.
    version: i32,
    /// What may be under way and started per second.
    budget: Budget,
    /// The role change under way to each broker address, by master epoch: a newer one
    /// cancels it, an older one is not sent (Java's `NotifyService`).
    role_changes: HashMap<String, (i32, tokio::task::JoinHandle<()>)>,
}

/// The notifier's address, counting queued messages.
pub type NotifierHandle = Mailbox<Notifier>;

impl Notifier {
    /// Starts the notifier on the current arbiter; `version` is stamped on its requests, which
    /// are sent within `limits`.
    pub fn start(version: i32, limits: NotifyLimits, metrics: Arc<Metrics>) -> NotifierHandle {
        let notifier = Notifier { next_opaque: 0, version, budget: Budget::new(limits), role_changes: HashMap::new() };
        Mailbox::new(Actor::start(notifier), "notifier", metrics)
    }
}

impl Actor for Notifier {
    type Context = Context<Self>;
}

logged_handler!(Notifier);

/// Send one NOTIFY_MIN_BROKER_ID_CHANGE to each of its targets.
#[derive(Debug)]
pub struct SendMinBrokerIdChange {
    pub conn: ConnId,
    pub change: MinBrokerIdChange,
}
request!(SendMinBrokerIdChange, ());

impl Apply<Notifier> for SendMinBrokerIdChange {
    fn apply(self, notifier: &mut Notifier) {
        let c = self.change;
        let mut ext = ExtFields::new()
            .with("minBrokerId", itoa::Buffer::new().format(c.min_broker_id))
            .with("minBrokerAddr", c.min_broker_addr.clone());
        if let Some(offline) = &c.offline_broker_addr {
            ext.insert("offlineBrokerAddr", offline);
        }
        if let Some(ha) = &c.ha_broker_addr {
            ext.insert("haBrokerAddr", ha);
        }
        info!(min_broker_id = c.min_broker_id, min_broker_addr = %c.min_broker_addr, targets = ?c.targets, "notifying min broker id change");
        for target in c.targets {
            let Some(in_flight) = notifier.budget.start(&target) else {
                continue;
            };
            let request = RemotingCommand::request(RequestCode::NotifyMinBrokerIdChange as i32, Some(ext.clone()));
            notifier.send(target, request, in_flight, SEND_TIMEOUT, "min broker id change");
        }
    }
}

/// Send one NOTIFY_BROKER_ROLE_CHANGED to each of its targets (the alive members of a group
/// that just elected a master).
#[derive(Debug)]
pub struct SendRoleChanged {
    pub conn: ConnId,
    /// Broker addresses.
    pub targets: Vec<String>,
    /// The new master and its epochs.
    pub master: MasterFields,
    /// The group's in-sync set now.
    pub set: SyncStateSet,
}
request!(SendRoleChanged, ());

impl Apply<Notifier> for SendRoleChanged {
    fn apply(self, notifier: &mut Notifier) {
        let epoch = self.master.master_epoch.unwrap_or_default();
        info!(master = ?self.master.master_broker_id, epoch, targets = ?self.targets, "notifying broker role change");
        notifier.role_changes.retain(|_, (_, task)| !task.is_finished());
        let code = ControllerRequestCode::NotifyBrokerRoleChanged as i32;
        let body = self.set.encode();
        for target in self.targets {
            match notifier.role_changes.get(&target) {
                Some((sent, _)) if *sent >= epoch => continue,
                Some((_, older)) => older.abort(),
                None => {}
            }
            let Some(in_flight) = notifier.budget.start(&target) else { continue };
            let request = RemotingCommand::request(code, Some(self.master.notify_ext())).with_body(body.clone());
            if let Some(task) =
                notifier.send(target.clone(), request, in_flight, ROLE_CHANGE_TIMEOUT, "broker role change")
            {
                notifier.role_changes.insert(target, (epoch, task));
            }
        }
    }
}

impl Notifier {
    /// Sends `request` oneway to `target` over a connection of its own, within `timeout`.
    fn send(
        &mut self,
        target: String,
        mut request: RemotingCommand,
        in_flight: Sending,
        timeout: Duration,
        what: &'static str,
    ) -> Option<tokio::task::JoinHandle<()>> {
        self.next_opaque = self.next_opaque.wrapping_add(1);
        request.opaque = self.next_opaque;
        request.flag = FLAG_ONEWAY;
        request.version = self.version;
        let mut frame = BytesMut::new();
        encode_frame(&request, &mut frame).ok()?;
        Some(actix::spawn(async move {
            let _in_flight = in_flight;
            let send = async {
                let mut stream = TcpStream::connect(connect_target(&target)).await?;
                stream.write_all(&frame).await?;
                stream.shutdown().await
            };
            match tokio::time::timeout(timeout, send).await {
                Ok(Ok(())) => debug!(target = %target, what, "notification sent"),
                Ok(Err(error)) => info!(target = %target, %error, what, "notification not delivered"),
                Err(_) => info!(target = %target, what, "notification not delivered: timed out"),
            }
        }))
    }
}

/// A broker address as a connect target. Brokers with IPv6 addresses register them either
/// bracketed (`[fd00::5]:10911`) or, as Java's `brokerIP1 + ":" + port` gives, bare
/// (`fd00:0:0:0:0:0:0:5:10911`), which Java's `NetworkUtil.string2SocketAddress` splits at the
/// last colon; the bare form gets its brackets here.
fn connect_target(addr: &str) -> String {
    match addr.rsplit_once(':') {
        Some((host, port)) if host.contains(':') && !host.starts_with('[') => format!("[{host}]:{port}"),
        _ => addr.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_broker_addresses_are_connect_targets_bracketed_or_bare() {
        assert_eq!(connect_target("[fd00::5]:10911"), "[fd00::5]:10911");
        assert_eq!(connect_target("fd00:0:0:0:0:0:0:5:10911"), "[fd00:0:0:0:0:0:0:5]:10911");
        assert_eq!(connect_target("10.0.0.1:10911"), "10.0.0.1:10911");
        assert_eq!(connect_target("broker-0.broker:10911"), "broker-0.broker:10911");
    }
}
