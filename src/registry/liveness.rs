//! Removing brokers: UNREGISTER_BROKER, connection close and expiry (Java's
//! `RouteInfoManager.unRegisterBroker`, `onChannelDestroy` and `scanNotActiveBroker`), the
//! consistency pass of the expiry tick, and the heartbeats that keep brokers (BROKER_HEARTBEAT,
//! QUERY_DATA_VERSION).
//!
//! One rule holds after every change: an address a group lists has a live registration, and a
//! live registration's address is listed by some group. Java keeps either half-gone after some
//! removals; here a removal takes the address out of every group that lists it.

use super::stall::{Stall, TickWatch};
use super::tables::RouteTables;
use crate::clock::Reading;
use crate::model::{DataVersion, MASTER_ID};
use crate::notifier::MinBrokerIdChange;
use crate::origin::ConnId;

/// Identifies one broker instance to remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerRef {
    pub cluster: String,
    pub addr: String,
    pub broker_name: String,
    pub broker_id: i64,
}

/// A broker removed because its connection closed or it went silent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The removed instance.
    pub broker: BrokerRef,
    /// The connection of its latest registration.
    pub conn: ConnId,
    /// When its last registration or heartbeat arrived (ms on the registry clock).
    pub last_update_ms: u64,
}

/// What one expiry tick did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiryTick {
    /// The stall of our own this tick detected, if it came late.
    pub stall: Option<Stall>,
    /// The step of the wall clock this tick saw, if any (ms; see `stall`).
    pub wall_step_ms: Option<i64>,
    /// Brokers whose silence the stall excused.
    pub excused: usize,
    /// Brokers removed, silent past their timeout.
    pub expired: Vec<Removed>,
    /// Brokers past their timeout the mass-expiry guard left for a later tick.
    pub deferred: usize,
}

/// Addresses of each kind one slice of the consistency pass checks (see `heal_slice`).
pub const HEAL_SLICE: usize = 2048;

/// What the consistency pass repaired: each a sign of a bug elsewhere, so each is logged.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Healed {
    /// (group, address) entries that had no live registration, removed.
    pub unlive_addrs: Vec<(String, String)>,
    /// Live registrations no group listed, dropped.
    pub unlisted_live: Vec<String>,
}

/// The answer to QUERY_DATA_VERSION about one broker address (on the wire: `changed` and the
/// stored version as the body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataVersionAnswer {
    /// Live with the asked version: not changed.
    Same(DataVersion),
    /// Live with another version than the asked one (or provisional, so it registers afresh).
    Changed(DataVersion),
    /// Not live at that address: changed, and no stored version.
    NotLive,
}

impl RouteTables {
    /// UNREGISTER_BROKER, as Java applies it whatever connection it comes over: the live entry
    /// of (cluster, addr) goes, and the address leaves the named group (any id). Then no group
    /// keeps the address without a live entry, and a live entry no group lists goes. Returns
    /// true if the instance was live or listed.
    pub(in crate::registry) fn unregister_broker(&mut self, b: &BrokerRef) -> bool {
        let was_live = self.take_live(&b.cluster, &b.addr).is_some();
        self.set_filter_servers(&b.cluster, &b.addr, None);
        let was_listed = self.leave_group(&b.broker_name, &b.cluster, &b.addr, Some(b.broker_id));
        self.settle_addr(&b.addr);
        was_live || was_listed
    }

    /// After a removal at `addr`: without a live entry, no group may list it; a live entry no
    /// group lists goes.
    pub(super) fn settle_addr(&mut self, addr: &str) {
        match self.live_at(addr) {
            None => {
                for name in self.groups_listing(addr) {
                    let cluster = self.group(&name).map(|g| g.cluster.clone()).unwrap_or_default();
                    self.set_filter_servers(&cluster, addr, None);
                    self.leave_group(&name, &cluster, addr, None);
                }
            }
            Some(live) if !self.is_listed(addr) => {
                let cluster = live.cluster.clone();
                self.take_live(&cluster, addr);
                self.set_filter_servers(&cluster, addr, None);
            }
            Some(_) => {}
        }
    }

    /// Takes `addr` out of group `name`; a group left empty goes, its name leaving `cluster`.
    /// `id` is the id the removal named (Java compares it with the group's lowest id to decide
    /// the notification); `None` takes the id the address has. Returns true if it was listed.
    fn leave_group(&mut self, name: &str, cluster: &str, addr: &str, id: Option<i64>) -> bool {
        let notify = self.options().routing.notify_min_broker_id_changed;
        let edited = self.edit_existing_group(name, |group| {
            let id = id.or_else(|| group.broker_addrs.iter().find(|(_, a)| *a == addr).map(|(id, _)| *id));
            let min_changed = id.is_some() && group.min_id() == id;
            let before = group.broker_addrs.len();
            group.broker_addrs.retain(|_, a| a != addr);
            let empty = group.broker_addrs.is_empty();
            let change = (notify && group.enable_acting_master && min_changed && !empty)
                .then(|| MinBrokerIdChange::for_group(group, false, Some(addr.to_owned()), None));
            (group.broker_addrs.len() != before, empty, change)
        });
        let (was_listed, group_empty, change) = edited.unwrap_or((false, false, None));
        if let Some(change) = change {
            self.notify(change);
        }
        if group_empty {
            self.remove_group(name, cluster);
        } else {
            self.wipe_write_if_master_gone(name);
        }
        was_listed
    }

    /// An acting-master group left without a master stops taking writes.
    fn wipe_write_if_master_gone(&mut self, broker: &str) {
        let Some(group) = self.group(broker) else {
            return;
        };
        let master_gone = group.min_id().is_none_or(|id| id > MASTER_ID);
        if group.enable_acting_master && master_gone {
            self.wipe_write_perm(broker);
        }
    }

    /// Removes the broker whose live entry is at `addr`, as its own unregister would.
    pub(super) fn remove_live(&mut self, addr: &str) -> Option<Removed> {
        let live = self.live_at(addr)?;
        let (conn, last_update_ms) = (live.conn, live.last_update_ms);
        let broker = BrokerRef {
            cluster: live.cluster.clone(),
            addr: addr.to_owned(),
            broker_name: live.broker_name.clone(),
            broker_id: live.broker_id,
        };
        self.unregister_broker(&broker);
        Some(Removed { broker, conn, last_update_ms })
    }

    /// Removes every broker whose latest registration came over `conn`, in address order
    /// (Java's `onChannelDestroy` removes the first it finds).
    #[cfg(test)]
    pub(in crate::registry) fn connection_closed(&mut self, conn: ConnId) -> Vec<Removed> {
        self.connection_closed_within(conn, usize::MAX).0
    }

    /// [`Self::connection_closed`], stopping once the brokers removed held `budget` topics
    /// between them (at least one is always removed), so that one message's work stays bounded
    /// when a connection carried many large groups. Returns them and whether `conn` still
    /// carries a live registration (the rest go in later turns).
    pub(in crate::registry) fn connection_closed_within(
        &mut self,
        conn: ConnId,
        budget: usize,
    ) -> (Vec<Removed>, bool) {
        let mut addrs: Vec<String> =
            self.live_entries().filter(|(_, l)| l.conn == conn).map(|(addr, _)| addr.to_owned()).collect();
        addrs.sort();
        let (mut removed, mut spent) = (Vec::new(), 0usize);
        for addr in &addrs {
            if spent >= budget {
                return (removed, true);
            }
            let topics = self.live_at(addr).and_then(|l| self.group_topics(&l.broker_name)).map_or(0, |t| t.len());
            if let Some(gone) = self.remove_live(addr) {
                removed.push(gone);
                spent = spent.saturating_add(topics.max(1));
            }
        }
        (removed, false)
    }

    /// Whether a live registration came over `conn`.
    pub fn carries_live(&self, conn: ConnId) -> bool {
        self.live_entries().any(|(_, l)| l.conn == conn)
    }

    /// Removes every broker silent past its timeout at `now_ms`, in address order, and decides
    /// to close their connections, as Java's `scanNotActiveBroker` does.
    pub fn expire(&mut self, now_ms: u64) -> Vec<Removed> {
        self.expire_at_most(now_ms, usize::MAX).0
    }

    /// [`Self::expire`], removing at most `max` brokers, the longest overdue first. Returns them
    /// and how many brokers past their timeout were left for a later tick.
    pub(in crate::registry) fn expire_at_most(&mut self, now_ms: u64, max: usize) -> (Vec<Removed>, usize) {
        let mut stale: Vec<(u64, String)> = self
            .live_entries()
            .map(|(addr, l)| (l.last_update_ms.saturating_add(l.timeout_ms), addr))
            .filter(|(due, _)| *due < now_ms)
            .map(|(due, addr)| (due, addr.to_owned()))
            .collect();
        let deferred = stale.len().saturating_sub(max);
        if deferred > 0 {
            stale.sort();
            stale.truncate(max);
        }
        let mut addrs: Vec<String> = stale.into_iter().map(|(_, addr)| addr).collect();
        addrs.sort();
        let removed: Vec<Removed> = addrs.iter().filter_map(|addr| self.remove_live(addr)).collect();
        for r in &removed {
            self.close_connection(r.conn);
        }
        (removed, deferred)
    }

    /// The expiry tick at these clock readings (ms; `mono_ms` is the table clock): after a stall
    /// of our own `watch` detects, every broker's silence is excused by the stall's length and
    /// nothing expires for one scan interval; otherwise [`Self::expire`], at most
    /// `expiry_guard_percent` of the live brokers per tick when that guard is on.
    pub(in crate::registry) fn expiry_tick(
        &mut self,
        watch: &mut TickWatch,
        mono_ms: u64,
        clocks: Reading,
    ) -> ExpiryTick {
        let plan = watch.tick(mono_ms, clocks);
        let excused = plan.stall.map_or(0, |s| self.excuse_silence(s.late_ms, mono_ms));
        let percent = self.options().routing.expiry_guard_percent as usize;
        let max = if percent == 0 { usize::MAX } else { (self.sizes().2 * percent / 100).max(1) };
        let (expired, deferred) = if plan.expire { self.expire_at_most(mono_ms, max) } else { (Vec::new(), 0) };
        ExpiryTick { stall: plan.stall, wall_step_ms: plan.wall_step_ms, excused, expired, deferred }
    }

    /// One slice of the consistency pass: of the addresses groups list and the live entries,
    /// those at positions `from..from + len` (in the maps' order) are checked; a listed address
    /// with no live registration and a live registration no group lists are removed. Nothing
    /// should ever be found; what is, is reported. Returns where the next slice starts: 0 once
    /// this one reached the end. Each expiry tick runs one slice, so a tick stays cheap however
    /// many brokers there are, and every address is checked within a few ticks.
    pub fn heal_slice(&mut self, from: usize, len: usize) -> (Healed, usize) {
        let mut healed = Healed::default();
        let unlive: Vec<String> =
            self.listed_addrs().skip(from).take(len).filter(|a| self.live_at(a).is_none()).map(str::to_owned).collect();
        for addr in unlive {
            healed.unlive_addrs.extend(self.groups_listing(&addr).into_iter().map(|name| (name, addr.clone())));
            self.settle_addr(&addr);
        }
        let unlisted: Vec<String> = self
            .live_entries()
            .skip(from)
            .take(len)
            .map(|(addr, _)| addr)
            .filter(|addr| !self.is_listed(addr))
            .map(str::to_owned)
            .collect();
        for addr in unlisted {
            self.settle_addr(&addr);
            healed.unlisted_live.push(addr);
        }
        let (listed, live) = self.addr_counts();
        let next = if from + len < listed.max(live) { from + len } else { 0 };
        (healed, next)
    }

    /// The whole consistency pass at once.
    pub fn heal(&mut self) -> Healed {
        let mut healed = Healed::default();
        let mut from = 0;
        loop {
            let (slice, next) = self.heal_slice(from, HEAL_SLICE);
            healed.unlive_addrs.extend(slice.unlive_addrs);
            healed.unlisted_live.extend(slice.unlisted_live);
            if next == 0 {
                return healed;
            }
            from = next;
        }
    }

    /// After a stall of our own (see `stall`): each broker's silence is excused by `stall_ms`,
    /// its last update moved that much later, never past `now_ms`. Returns how many brokers.
    pub(in crate::registry) fn excuse_silence(&mut self, stall_ms: u64, now_ms: u64) -> usize {
        let mut count = 0;
        for live in self.live_values_mut() {
            live.last_update_ms = live.last_update_ms.saturating_add(stall_ms).min(now_ms).max(live.last_update_ms);
            count += 1;
        }
        count
    }

    /// BROKER_HEARTBEAT: refreshes a live instance. Returns false for an unknown one.
    pub(in crate::registry) fn heartbeat(&mut self, cluster: &str, addr: &str, now_ms: u64) -> bool {
        match self.live_mut(cluster, addr) {
            Some(live) => {
                live.last_update_ms = now_ms;
                true
            }
            None => false,
        }
    }

    /// QUERY_DATA_VERSION: whether `version` differs from the stored one (a missing one counts
    /// as changed), refreshing the instance as a heartbeat.
    pub(in crate::registry) fn query_data_version(
        &mut self,
        cluster: &str,
        addr: &str,
        version: Option<&DataVersion>,
        now_ms: u64,
    ) -> DataVersionAnswer {
        match self.live_mut(cluster, addr) {
            Some(live) => {
                live.last_update_ms = now_ms;
                // A provisional broker is told its version changed, so it registers afresh.
                if live.is_provisional() || version != Some(&live.data_version) {
                    DataVersionAnswer::Changed(live.data_version)
                } else {
                    DataVersionAnswer::Same(live.data_version)
                }
            }
            None => DataVersionAnswer::NotLive,
        }
    }
}
