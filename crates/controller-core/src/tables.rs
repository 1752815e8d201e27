//! The replicated tables: per broker group its replicas and who masters it at which epochs
//! (Java's `BrokerReplicaInfo` and `SyncStateInfo`, kept as one [`Group`] so the two can never
//! disagree). Only [`ReplicaTables::apply`] changes them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::bounds::{self, check_text, group_bytes, replica_bytes, OverBound};
use crate::event::{Applied, Event};

/// Java's `MixAll.FIRST_BROKER_CONTROLLER_ID`: the id the first broker of a group takes.
pub const FIRST_BROKER_ID: i64 = 1;

/// One replica of a group: where it listens, and the check code it took its id with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replica {
    /// The broker's address (`ip:port`).
    pub address: String,
    /// `address;millis` of the id application, so a retry by the same broker is recognised.
    pub register_check_code: String,
}

/// One broker group (brokerName): its replicas and its master.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    cluster: String,
    next_broker_id: i64,
    replicas: BTreeMap<i64, Replica>,
    master: Option<i64>,
    master_epoch: i32,
    sync_set: BTreeSet<i64>,
    sync_epoch: i32,
}

impl Group {
    fn new(cluster: &str) -> Self {
        Group {
            cluster: cluster.to_owned(),
            next_broker_id: FIRST_BROKER_ID,
            replicas: BTreeMap::new(),
            master: None,
            master_epoch: 0,
            sync_set: BTreeSet::new(),
            sync_epoch: 0,
        }
    }

    /// The cluster the group's first broker named.
    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    /// The id the next broker of the group is offered.
    pub fn next_broker_id(&self) -> i64 {
        self.next_broker_id
    }

    /// Every registered replica by id.
    pub fn replicas(&self) -> &BTreeMap<i64, Replica> {
        &self.replicas
    }

    /// The master's id, when there is one.
    pub fn master(&self) -> Option<i64> {
        self.master
    }

    /// The master's address, when there is a master.
    pub fn master_address(&self) -> Option<&str> {
        self.master.and_then(|m| self.address(m))
    }

    /// The address of replica `id`.
    pub fn address(&self, id: i64) -> Option<&str> {
        self.replicas.get(&id).map(|r| r.address.as_str())
    }

    /// Bumped on every master change, "no master" included; 0: never elected.
    pub fn master_epoch(&self) -> i32 {
        self.master_epoch
    }

    /// The in-sync replicas.
    pub fn sync_set(&self) -> &BTreeSet<i64> {
        &self.sync_set
    }

    /// Bumped on every change of the in-sync set.
    pub fn sync_epoch(&self) -> i32 {
        self.sync_epoch
    }

    /// What must hold of every group, whatever was applied: the master is an in-sync replica,
    /// the in-sync set holds registered replicas only, epochs are not negative, ids are at
    /// least 1 and below the next id offered. Checked on snapshots loaded from disk or a peer.
    pub fn check(&self) -> Result<(), Broken> {
        if self.master_epoch < 0 || self.sync_epoch < 0 {
            return Err(Broken::NegativeEpoch { master: self.master_epoch, sync: self.sync_epoch });
        }
        if let Some(m) = self.master.filter(|m| !self.sync_set.contains(m)) {
            return Err(Broken::MasterNotInSync(m));
        }
        if let Some(id) = self.sync_set.iter().find(|id| !self.replicas.contains_key(id)) {
            return Err(Broken::InSyncNotReplica(*id));
        }
        match (self.replicas.keys().next(), self.replicas.keys().next_back()) {
            (Some(min), Some(max)) if *min < FIRST_BROKER_ID || *max >= self.next_broker_id => {
                Err(Broken::IdsOutOfRange { next: self.next_broker_id })
            }
            _ => Ok(()),
        }
    }
}

/// What is wrong with a group that no sequence of applied events can produce (a snapshot from
/// disk or a peer that is damaged or forged).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Broken {
    /// An epoch below zero.
    #[error("negative epoch ({master}, {sync})")]
    NegativeEpoch { master: i32, sync: i32 },
    /// The master is not in the in-sync set.
    #[error("master {0} not in the sync state set")]
    MasterNotInSync(i64),
    /// An in-sync id that is no replica.
    #[error("in-sync id {0} is no replica")]
    InSyncNotReplica(i64),
    /// A replica id below 1 or not below the next id offered.
    #[error("replica ids out of range 1..{next}")]
    IdsOutOfRange { next: i64 },
    /// More than the bounds let the tables hold.
    #[error(transparent)]
    OverBound(#[from] OverBound),
}

/// A broken group, by name: what [`ReplicaTables::check`] finds first.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("group {name}: {broken}")]
pub struct BrokenGroup {
    /// The group's broker name.
    pub name: String,
    /// What is wrong with it.
    pub broken: Broken,
}

/// Every broker group by name: the replicated state machine of the controller, within the
/// bounds of [`crate::bounds`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredTables")]
pub struct ReplicaTables {
    groups: BTreeMap<String, Group>,
    /// What the groups count against [`bounds::MAX_TABLE_BYTES`] (counted again when read).
    #[serde(skip)]
    bytes: usize,
}

/// The tables as written: the groups; what they count is counted again when read.
#[derive(Deserialize)]
struct StoredTables {
    groups: BTreeMap<String, Group>,
}

impl From<StoredTables> for ReplicaTables {
    fn from(stored: StoredTables) -> Self {
        let bytes = stored.groups.iter().map(|(name, g)| g.bytes(name)).sum();
        ReplicaTables { groups: stored.groups, bytes }
    }
}

impl Group {
    /// What the group counts against [`bounds::MAX_TABLE_BYTES`].
    fn bytes(&self, name: &str) -> usize {
        let replicas: usize = self.replicas.values().map(|r| replica_bytes(&r.address, &r.register_check_code)).sum();
        group_bytes(name, &self.cluster) + replicas
    }
}

impl ReplicaTables {
    /// The group named `name`.
    pub fn group(&self, name: &str) -> Option<&Group> {
        self.groups.get(name)
    }

    /// Every group by name.
    pub fn groups(&self) -> impl Iterator<Item = (&str, &Group)> {
        self.groups.iter().map(|(name, group)| (name.as_str(), group))
    }

    /// How many groups there are.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether there is no group.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// What the tables count against [`bounds::MAX_TABLE_BYTES`].
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// [`Group::check`] of every group, and the bounds, naming the first group that fails.
    pub fn check(&self) -> Result<(), BrokenGroup> {
        let over = |broken: OverBound| BrokenGroup { name: String::new(), broken: broken.into() };
        if self.groups.len() > bounds::MAX_GROUPS {
            return Err(over(OverBound::Groups));
        }
        if self.bytes > bounds::MAX_TABLE_BYTES {
            return Err(over(OverBound::Bytes));
        }
        self.groups.iter().try_for_each(|(name, g)| {
            let broken = |broken| BrokenGroup { name: name.clone(), broken };
            g.check().map_err(broken)?;
            if g.replicas.len() > bounds::MAX_REPLICAS {
                return Err(broken(OverBound::Replicas.into()));
            }
            Ok(())
        })
    }

    /// Whether `event` fits the bounds: a new group or replica within the counts and bytes,
    /// every name, address and check code it brings printable and not too long. What a decision
    /// refuses before committing, and what applying refuses after, alike on every peer.
    pub fn admits(&self, event: &Event) -> Result<(), OverBound> {
        use bounds::{MAX_CHECK_CODE_BYTES as CODE, MAX_NAME_BYTES as NAME};
        match event {
            Event::ApplyBrokerId { cluster, broker_name, address, register_check_code, broker_id } => {
                check_text("clusterName", cluster, NAME)?;
                check_text("brokerName", broker_name, NAME)?;
                check_text("brokerAddress", address, NAME)?;
                check_text("registerCheckCode", register_check_code, CODE)?;
                let added = replica_bytes(address, register_check_code);
                match self.groups.get(broker_name.as_str()) {
                    Some(g) if g.replicas.contains_key(broker_id) => Ok(()),
                    Some(g) if g.replicas.len() >= bounds::MAX_REPLICAS => Err(OverBound::Replicas),
                    Some(_) => self.fits(added),
                    None if self.groups.len() >= bounds::MAX_GROUPS => Err(OverBound::Groups),
                    None => self.fits(added + group_bytes(broker_name, cluster)),
                }
            }
            Event::UpdateBrokerAddress { broker_name, broker_id, address } => {
                check_text("brokerAddress", address, NAME)?;
                let old = self.groups.get(broker_name.as_str()).and_then(|g| g.replicas.get(broker_id));
                self.fits(address.len().saturating_sub(old.map_or(0, |r| r.address.len())))
            }
            Event::ElectMaster { .. } | Event::AlterSyncStateSet { .. } | Event::CleanBrokerData { .. } => Ok(()),
        }
    }

    /// Whether `more` bytes fit.
    fn fits(&self, more: usize) -> Result<(), OverBound> {
        match self.bytes.checked_add(more) {
            Some(total) if total <= bounds::MAX_TABLE_BYTES => Ok(()),
            _ => Err(OverBound::Bytes),
        }
    }

    /// Applies one committed event (Java's `ReplicasInfoManager.applyEvent`); an event whose
    /// preconditions no longer hold changes nothing and says so, and so does one past a bound.
    pub fn apply(&mut self, event: &Event) -> Applied {
        if self.admits(event).is_err() {
            return Applied::Refused;
        }
        let done = match event {
            Event::ApplyBrokerId { cluster, broker_name, broker_id, address, register_check_code } => {
                self.apply_broker_id(cluster, broker_name, *broker_id, address, register_check_code)
            }
            Event::UpdateBrokerAddress { broker_name, broker_id, address } => {
                self.update_address(broker_name, *broker_id, address)
            }
            Event::ElectMaster { broker_name, new_master, expect_master_epoch } => {
                self.elect(broker_name, *new_master, *expect_master_epoch)
            }
            Event::AlterSyncStateSet { broker_name, new_set, expect_master_epoch, expect_sync_epoch } => {
                self.alter(broker_name, new_set, *expect_master_epoch, *expect_sync_epoch)
            }
            Event::CleanBrokerData { broker_name, ids } => self.clean(broker_name, ids.as_ref()),
        };
        if done {
            Applied::Done
        } else {
            Applied::Stale
        }
    }

    fn apply_broker_id(&mut self, cluster: &str, name: &str, id: i64, address: &str, code: &str) -> bool {
        let next = self.groups.get(name).map_or(FIRST_BROKER_ID, |g| g.next_broker_id);
        if let Some(replica) = self.groups.get(name).and_then(|g| g.replicas.get(&id)) {
            return replica.register_check_code == code;
        }
        // Only the id the group offers next (Java takes any free id, and one far above the next
        // could leave the group no id it can ever apply).
        if id != next || id == i64::MAX {
            return false;
        }
        if !self.groups.contains_key(name) {
            self.bytes += group_bytes(name, cluster);
            self.groups.insert(name.to_owned(), Group::new(cluster));
        }
        let Some(group) = self.groups.get_mut(name) else { return false };
        self.bytes += replica_bytes(address, code);
        let replica = Replica { address: address.to_owned(), register_check_code: code.to_owned() };
        group.replicas.insert(id, replica);
        group.next_broker_id = id + 1;
        true
    }

    fn update_address(&mut self, name: &str, id: i64, address: &str) -> bool {
        let Some(replica) = self.groups.get_mut(name).and_then(|g| g.replicas.get_mut(&id)) else { return false };
        self.bytes = self.bytes + address.len() - replica.address.len();
        replica.address = address.to_owned();
        true
    }

    fn elect(&mut self, name: &str, new_master: Option<i64>, expect: i32) -> bool {
        let Some(group) = self.groups.get_mut(name) else { return false };
        let Some(master_epoch) = group.master_epoch.checked_add(1).filter(|_| group.master_epoch == expect) else {
            return false;
        };
        if let Some(m) = new_master {
            let Some(sync_epoch) = group.sync_epoch.checked_add(1) else { return false };
            if !group.replicas.contains_key(&m) {
                return false;
            }
            group.sync_set = BTreeSet::from([m]);
            group.sync_epoch = sync_epoch;
        }
        group.master = new_master;
        group.master_epoch = master_epoch;
        true
    }

    fn alter(&mut self, name: &str, new_set: &BTreeSet<i64>, master_epoch: i32, sync_epoch: i32) -> bool {
        let Some(group) = self.groups.get_mut(name) else { return false };
        let fits = group.master_epoch == master_epoch
            && group.sync_epoch == sync_epoch
            && group.master.is_some_and(|m| new_set.contains(&m))
            && new_set.iter().all(|id| group.replicas.contains_key(id));
        let Some(next) = group.sync_epoch.checked_add(1).filter(|_| fits) else { return false };
        group.sync_set.clone_from(new_set);
        group.sync_epoch = next;
        true
    }

    fn clean(&mut self, name: &str, ids: Option<&BTreeSet<i64>>) -> bool {
        let Some(group) = self.groups.get_mut(name) else { return false };
        let Some(ids) = ids else {
            let gone = group.bytes(name);
            self.groups.remove(name);
            self.bytes -= gone;
            return true;
        };
        let master_gone = group.master.is_some_and(|m| ids.contains(&m));
        let set_shrinks = group.sync_set.iter().any(|id| ids.contains(id));
        let master_epoch = if master_gone { group.master_epoch.checked_add(1) } else { Some(group.master_epoch) };
        let sync_epoch = if set_shrinks { group.sync_epoch.checked_add(1) } else { Some(group.sync_epoch) };
        let (Some(master_epoch), Some(sync_epoch)) = (master_epoch, sync_epoch) else { return false };
        let before = group.bytes(name);
        group.replicas.retain(|id, _| !ids.contains(id));
        self.bytes = self.bytes - before + group.bytes(name);
        group.sync_set.retain(|id| !ids.contains(id));
        if master_gone {
            group.master = None;
        }
        (group.master_epoch, group.sync_epoch) = (master_epoch, sync_epoch);
        if group.replicas.is_empty() {
            self.bytes -= group_bytes(name, &group.cluster);
            self.groups.remove(name);
        }
        true
    }
}
