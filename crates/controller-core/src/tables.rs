//! The replicated tables: per broker group its replicas and who masters it at which epochs
//! (Java's `BrokerReplicaInfo` and `SyncStateInfo`, kept as one [`Group`] so the two can never
//! disagree). Only [`ReplicaTables::apply`] changes them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use thiserror::Error;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
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

/// Every broker group by name: the replicated state machine of the controller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaTables {
    groups: BTreeMap<String, Group>,
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

    /// [`Group::check`] of every group, naming the first that fails.
    pub fn check(&self) -> Result<(), BrokenGroup> {
        self.groups
            .iter()
            .try_for_each(|(name, g)| g.check().map_err(|broken| BrokenGroup { name: name.clone(), broken }))
    }

    /// Applies one committed event (Java's `ReplicasInfoManager.applyEvent`); an event whose
    /// preconditions no longer hold changes nothing and says so.
    pub fn apply(&mut self, event: &Event) -> Applied {
        let done = match event {
            Event::ApplyBrokerId { cluster, broker_name, broker_id, address, register_check_code } => {
                self.apply_broker_id(cluster, broker_name, *broker_id, address, register_check_code)
            }
            Event::UpdateBrokerAddress { broker_name, broker_id, address } => self
                .groups
                .get_mut(broker_name)
                .and_then(|g| g.replicas.get_mut(broker_id))
                .map(|r| r.address.clone_from(address))
                .is_some(),
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
        if id < FIRST_BROKER_ID || id == i64::MAX {
            return false;
        }
        let group = self.groups.entry(name.to_owned()).or_insert_with(|| Group::new(cluster));
        match group.replicas.get(&id) {
            Some(replica) => replica.register_check_code == code,
            None => {
                let replica = Replica { address: address.to_owned(), register_check_code: code.to_owned() };
                group.replicas.insert(id, replica);
                // Java adds one to the next id whatever id was taken; an id above it would then
                // be offered again later (a broker looping on BROKER_ID_INVALID): never below it.
                group.next_broker_id = group.next_broker_id.saturating_add(1).max(id + 1);
                true
            }
        }
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
            self.groups.remove(name);
            return true;
        };
        let master_gone = group.master.is_some_and(|m| ids.contains(&m));
        let set_shrinks = group.sync_set.iter().any(|id| ids.contains(id));
        let master_epoch = if master_gone { group.master_epoch.checked_add(1) } else { Some(group.master_epoch) };
        let sync_epoch = if set_shrinks { group.sync_epoch.checked_add(1) } else { Some(group.sync_epoch) };
        let (Some(master_epoch), Some(sync_epoch)) = (master_epoch, sync_epoch) else { return false };
        group.replicas.retain(|id, _| !ids.contains(id));
        group.sync_set.retain(|id| !ids.contains(id));
        if master_gone {
            group.master = None;
        }
        (group.master_epoch, group.sync_epoch) = (master_epoch, sync_epoch);
        if group.replicas.is_empty() {
            self.groups.remove(name);
        }
        true
    }
}
