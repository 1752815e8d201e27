//! Applying a REGISTER_BROKER to the tables: Java's `RouteInfoManager.registerBroker`.

use std::collections::HashSet;

use super::live::LiveBroker;
use super::liveness::Removed;
use super::tables::RouteTables;
use crate::limits::BrokerNames;
use crate::model::{MASTER_ID, PERM_WRITE};
use crate::notifier::MinBrokerIdChange;
use crate::origin::ConnId;
use crate::protocol::body::RegisterBody;

/// Mixed into the applied fingerprint of a registration whose queues were stored with write
/// permission wiped.
const WIPED_WRITE_SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// One broker registration, header and decoded body.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The connection it came over; a later close of that connection removes the broker.
    pub conn: ConnId,
    /// The MQVersion ordinal the broker's request carried.
    pub version: i32,
    pub cluster: String,
    pub addr: String,
    pub broker_name: String,
    pub broker_id: i64,
    pub ha_server_addr: String,
    pub zone_name: Option<String>,
    /// `heartbeatTimeoutMillis`; `None` takes the configured default.
    pub timeout_ms: Option<u64>,
    /// `enableActingMaster`; `None` marks a 4.x ("old version") broker.
    pub enable_acting_master: Option<bool>,
    /// The body, with its topic table's fingerprint.
    pub body: FingerprintedBody,
    /// The access key that signed it, when access control checked it: the broker is bound to
    /// it while live (see `binding`).
    pub access_key: Option<String>,
}

impl Registration {
    /// The names it asks the server to keep.
    pub fn names(&self) -> BrokerNames<'_> {
        BrokerNames {
            broker_name: &self.broker_name,
            cluster: &self.cluster,
            addr: &self.addr,
            ha_server_addr: &self.ha_server_addr,
            zone_name: self.zone_name.as_deref(),
        }
    }
}

/// A register body with its topic table's fingerprint, which only [`FingerprintedBody::new`]
/// computes, so the two always agree. The decoder makes it where it decodes (off the event
/// loop for large bodies), so the registry never hashes a topic table; it reads the body
/// through `Deref` and never changes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FingerprintedBody {
    body: RegisterBody,
    fingerprint: u64,
}

impl FingerprintedBody {
    /// `body` with its fingerprint computed.
    pub fn new(body: RegisterBody) -> Self {
        let fingerprint = body.topics_fingerprint();
        FingerprintedBody { body, fingerprint }
    }

    /// The fingerprint of the topic table (`RegisterBody::topics_fingerprint`).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The body alone (to change it, then fingerprint it anew).
    pub fn into_body(self) -> RegisterBody {
        self.body
    }
}

impl std::ops::Deref for FingerprintedBody {
    type Target = RegisterBody;

    fn deref(&self) -> &RegisterBody {
        &self.body
    }
}

/// What a successful registration tells the broker, and what the log says about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegisterOutcome {
    /// The group master's address, for a slave whose master is alive.
    pub master_addr: Option<String>,
    /// The master's HA address, likewise.
    pub ha_server_addr: Option<String>,
    /// True when the instance was not live before (first registration or after removal).
    pub newly_live: bool,
    /// The ORDER_TOPIC_CONFIG KVTable body, when configured to return it and it exists.
    pub order_topic_config: Option<bytes::Bytes>,
    /// Another broker whose live registration held this address, removed first.
    pub replaced: Option<Removed>,
}

/// What a broker registration that passed the checks came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registered {
    /// Taken (or, with an older stateVersion than the live holder of its id, answered as if
    /// taken): what the broker is told.
    Accepted(RegisterOutcome),
    /// Rejected as Java rejects it (Java's null result): a first registration carrying a single
    /// topic. Earlier steps (joining the cluster, replacing another owner) took effect.
    FirstWithSingleTopic,
}

/// How a registration joined its broker group.
enum Joined {
    /// An older stateVersion than the live broker holding this id; nothing more happens.
    Stale,
    /// The broker is a member now, in this role.
    Member(Role),
}

/// A member's role in its group, which decides whether its topics shape routes.
struct Role {
    /// The address that held this id before, now out of the group.
    displaced: Option<String>,
    register_first: bool,
    is_master: bool,
    is_prime_slave: bool,
    acting_master: bool,
}

impl RouteTables {
    /// Registers a broker (see [`Registered`] for what it may come to).
    ///
    /// An address serves one broker: a live registration of another broker (or of this one in
    /// another cluster) at the address is removed first, as its unregister would.
    pub fn register_broker(&mut self, reg: Registration, now_ms: u64) -> Registered {
        let replaced = self.replace_other_owner(&reg);
        let newly_live = self.live(&reg.cluster, &reg.addr).is_none();
        let role = match self.join_group(&reg) {
            Some(Joined::Member(role)) => role,
            Some(Joined::Stale) => {
                self.take_live(&reg.cluster, &reg.addr);
                self.close_replaced(&replaced, &reg);
                return Registered::Accepted(RegisterOutcome { replaced, ..RegisterOutcome::default() });
            }
            None => {
                self.settle_after_rejection(&reg.addr);
                self.close_replaced(&replaced, &reg);
                return Registered::FirstWithSingleTopic;
            }
        };

        // Topics, from the master or the prime slave only.
        let applied_topics = (role.is_master || role.is_prime_slave).then(|| {
            self.apply_topics(&reg, role.register_first, role.is_prime_slave && role.acting_master);
            reg.body.fingerprint()
        });

        // Liveness follows the latest registration and its connection.
        let live = LiveBroker {
            cluster: reg.cluster.clone(),
            broker_name: reg.broker_name.clone(),
            broker_id: reg.broker_id,
            version: reg.version,
            last_update_ms: now_ms,
            timeout_ms: self.timeout_of(&reg),
            data_version: reg.body.data_version,
            conn: reg.conn,
            ha_server_addr: reg.ha_server_addr.clone(),
            applied_topics,
            access_key: reg.access_key.clone(),
            provisional: None,
        };
        self.set_live(&reg.addr, live);
        if let Some(list) = &reg.body.filter_servers {
            // Legacy filter servers: absent leaves them, empty removes, a list replaces.
            let servers = Some(list.clone()).filter(|l| !l.is_empty());
            self.set_filter_servers(&reg.cluster, &reg.addr, servers);
        }
        if let Some(displaced) = &role.displaced {
            // Java keeps the displaced instance's live entry although no group lists it.
            self.settle_addr(displaced);
        }
        self.close_replaced(&replaced, &reg);
        Registered::Accepted(RegisterOutcome { newly_live, replaced, ..self.master_of(&reg) })
    }

    /// Removes the live registration at `reg.addr` when it belongs to another broker name or
    /// cluster (a restarted pod on an address a gone one had).
    fn replace_other_owner(&mut self, reg: &Registration) -> Option<Removed> {
        let owner = self.live_at(&reg.addr)?;
        if owner.cluster == reg.cluster && owner.broker_name == reg.broker_name {
            return None;
        }
        self.remove_live(&reg.addr)
    }

    /// The replaced broker's process is gone, so once the registration is done its connection
    /// is closed too, unless a live registration is left on it or it is this one's.
    fn close_replaced(&mut self, replaced: &Option<Removed>, reg: &Registration) {
        if let Some(old) = replaced.as_ref().filter(|old| old.conn != reg.conn && !self.carries_live(old.conn)) {
            self.close_connection(old.conn);
        }
    }

    /// A refused registration may have taken its address out of its group (an id change):
    /// a live entry no group lists any more goes, with its filter servers.
    fn settle_after_rejection(&mut self, addr: &str) {
        self.settle_addr(addr);
    }

    /// Cluster and group membership. `None` rejects a first registration carrying a single
    /// topic, after the earlier steps took effect, as in Java.
    fn join_group(&mut self, reg: &Registration) -> Option<Joined> {
        self.join_cluster(&reg.cluster, &reg.broker_name);
        // A live broker holding this id at another address with a newer stateVersion wins.
        let holder = self.group(&reg.broker_name).and_then(|g| g.broker_addrs.get(&reg.broker_id));
        let stale =
            holder.filter(|old| **old != reg.addr).and_then(|old| self.live(&reg.cluster, old)).is_some_and(|live| {
                !live.is_provisional() && live.data_version.state_version > reg.body.data_version.state_version
            });
        let notify = self.options().routing.notify_min_broker_id_changed;
        let ((role, notification), created) = self.edit_group(&reg.broker_name, &reg.cluster, |group| {
            let old_version_broker = reg.enable_acting_master.is_none();
            group.enable_acting_master = reg.enable_acting_master == Some(true);
            group.zone_name = reg.zone_name.clone();
            let min_id_changed = reg.broker_id < group.min_id().unwrap_or(MASTER_ID);
            // An address re-registering under a new id (slave to master) leaves its old id.
            group.broker_addrs.retain(|id, addr| *addr != reg.addr || *id == reg.broker_id);
            let single_topic_first = !group.broker_addrs.contains_key(&reg.broker_id) && reg.body.topics.len() == 1;
            if stale || single_topic_first {
                return (None, None);
            }
            let old_addr = group.broker_addrs.insert(reg.broker_id, reg.addr.clone());
            let is_master = reg.broker_id == MASTER_ID;
            let role = Role {
                register_first: old_addr.as_ref().is_none_or(|a| a.is_empty()),
                displaced: old_addr.filter(|a| !a.is_empty() && *a != reg.addr),
                is_master,
                is_prime_slave: !old_version_broker && !is_master && group.min_id() == Some(reg.broker_id),
                acting_master: group.enable_acting_master,
            };
            let notification = (min_id_changed && notify).then(|| {
                let others_only = group.broker_addrs.len() > 1;
                MinBrokerIdChange::for_group(group, others_only, None, Some(reg.ha_server_addr.clone()))
            });
            (Some(role), notification)
        });
        if let Some(change) = notification {
            self.notify(change);
        }
        if stale {
            return Some(Joined::Stale);
        }
        role.map(|role| Joined::Member(Role { register_first: role.register_first || created, ..role }))
    }

    /// A slave learns its group master's addresses, once the master is live.
    fn master_of(&self, reg: &Registration) -> RegisterOutcome {
        let master = (reg.broker_id != MASTER_ID)
            .then(|| self.group(&reg.broker_name).and_then(|g| g.broker_addrs.get(&MASTER_ID)))
            .flatten();
        match master.and_then(|m| self.live(&reg.cluster, m).map(|live| (m, live))) {
            Some((master, live)) => RegisterOutcome {
                master_addr: Some(master.clone()),
                ha_server_addr: Some(live.ha_server_addr.clone()),
                ..RegisterOutcome::default()
            },
            None => RegisterOutcome::default(),
        }
    }

    /// Topics of a master or prime slave.
    ///
    /// Java re-applies every topic when the dataVersion changed, and otherwise only topics that
    /// lack this group's queue data. A re-registration with an unchanged dataVersion and the same
    /// topic names as the last applied one (the 30 s heartbeat) can lack none, unless the group
    /// lost queue data since, so it skips the per-topic check and costs O(1) here. A changed
    /// dataVersion whose topic table is the one the group's queue data was last applied from,
    /// unchanged since, would change nothing either (applying is idempotent), so it is skipped
    /// too: a broker bumping its version with the same topics costs no per-topic work.
    fn apply_topics(&mut self, reg: &Registration, register_first: bool, wipe_write: bool) {
        let previous = self.live(&reg.cluster, &reg.addr);
        let version_changed = previous.is_none_or(|l| l.data_version != reg.body.data_version);
        let full = register_first || version_changed;
        let same_topics = previous.and_then(|l| l.applied_topics) == Some(reg.body.fingerprint());
        let check_each = !full && (self.is_pruned(&reg.broker_name) || !same_topics);
        // Wiped write permission changes what is stored, so it is part of what was applied.
        let applied = reg.body.fingerprint() ^ if wipe_write { WIPED_WRITE_SALT } else { 0 };
        let unchanged = reg.body.mappings.is_empty() && self.applied_fingerprint(&reg.broker_name) == Some(applied);
        if full && unchanged && !self.is_pruned(&reg.broker_name) {
            return;
        }

        if self.options().routing.delete_topic_with_broker_registration && reg.body.mappings.is_empty() {
            let listed: HashSet<&str> = reg.body.topics.iter().map(|t| t.key).collect();
            for topic in self.topics_of(&reg.broker_name) {
                if !listed.contains(&*topic) {
                    self.remove_queue(&topic, &reg.broker_name);
                }
            }
        }

        if full || check_each {
            for topic in reg.body.topics.iter() {
                let mut queue = topic.queue;
                if wipe_write {
                    queue.perm &= !PERM_WRITE;
                }
                if full {
                    self.put_queue(topic.name, &reg.broker_name, queue);
                } else {
                    self.put_queue_if_absent(topic.name, &reg.broker_name, queue);
                }
            }
            self.clear_pruned(&reg.broker_name);
            if full && reg.body.mappings.is_empty() {
                self.set_applied(&reg.broker_name, applied);
            }
        }

        if full {
            for (topic, info) in &reg.body.mappings {
                self.put_mapping(topic, info.clone());
            }
        }
    }
}

/// The shortest `heartbeatTimeoutMillis` a broker may ask for.
pub const MIN_HEARTBEAT_TIMEOUT_MS: u64 = 1_000;

impl RouteTables {
    /// The timeout a registration's broker gets: its own `heartbeatTimeoutMillis` clamped into
    /// [`MIN_HEARTBEAT_TIMEOUT_MS`]..=`max_heartbeat_timeout_ms` (a broker asking for i64::MAX
    /// must not stay routed for ever), or the configured default.
    fn timeout_of(&self, reg: &Registration) -> u64 {
        let routing = &self.options().routing;
        let max = routing.max_heartbeat_timeout_ms.max(MIN_HEARTBEAT_TIMEOUT_MS);
        reg.timeout_ms.map_or(routing.broker_timeout_ms, |asked| asked.clamp(MIN_HEARTBEAT_TIMEOUT_MS, max))
    }
}
