//! The replicated events (the Raft entry payload, a private format) and what applying one gave.
//! Every event carries the preconditions its decision was made on, so an event decided on a
//! state that changed before it committed applies as [`Applied::Stale`] and changes nothing.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The payload format written in every entry; a peer refuses entries of another.
pub const COMMAND_FORMAT: u8 = 1;

/// One committed request: the events one decision produced (Java's `ControllerResult` events).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    /// [`COMMAND_FORMAT`].
    pub format: u8,
    /// Applied in order.
    pub events: Vec<Event>,
}

impl Command {
    /// A command of one event.
    pub fn one(event: Event) -> Self {
        Command { format: COMMAND_FORMAT, events: vec![event] }
    }
}

/// A change of the replica tables (Java's five `EventMessage` kinds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// A broker takes an id in its group (`ApplyBrokerIdEvent`); the group is made on the first.
    ApplyBrokerId { cluster: String, broker_name: String, broker_id: i64, address: String, register_check_code: String },
    /// A registered broker moved (`UpdateBrokerAddressEvent`).
    UpdateBrokerAddress { broker_name: String, broker_id: i64, address: String },
    /// A new master, or none (`ElectMasterEvent`), decided at `expect_master_epoch`.
    ElectMaster { broker_name: String, new_master: Option<i64>, expect_master_epoch: i32 },
    /// A new in-sync set (`AlterSyncStateSetEvent`), decided at both epochs.
    AlterSyncStateSet { broker_name: String, new_set: BTreeSet<i64>, expect_master_epoch: i32, expect_sync_epoch: i32 },
    /// Forget some replicas of a group, or the whole group (`CleanBrokerDataEvent`).
    CleanBrokerData { broker_name: String, ids: Option<BTreeSet<i64>> },
}

impl Event {
    /// The group the event changes.
    pub fn broker_name(&self) -> &str {
        match self {
            Event::ApplyBrokerId { broker_name, .. }
            | Event::UpdateBrokerAddress { broker_name, .. }
            | Event::ElectMaster { broker_name, .. }
            | Event::AlterSyncStateSet { broker_name, .. }
            | Event::CleanBrokerData { broker_name, .. } => broker_name,
        }
    }
}

/// What applying one event gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Applied {
    /// Applied (or already in effect: a retried id application).
    Done,
    /// Its preconditions no longer hold; nothing changed.
    Stale,
    /// It would pass a bound (`crate::bounds`); nothing changed.
    Refused,
}
