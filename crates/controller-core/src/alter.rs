//! Changes of a group's in-sync set (CONTROLLER_ALTER_SYNC_STATE_SET, every fence in Java's
//! order) and cleaning a group's data (CLEAN_BROKER_DATA).

use std::collections::BTreeSet;

use namesrv_protocol::controller::body::SyncStateSet;
use namesrv_protocol::controller::ControllerResponseCode as Code;

use crate::decision::{Answer, Decision, LiveView};
use crate::{Event, Group, ReplicaTables};

const REJECT: &str = "Rejecting alter syncStateSet request because";

pub(super) fn alter_sync_state_set(
    tables: &ReplicaTables,
    name: &str,
    master_id: i64,
    master_epoch: i32,
    set: &SyncStateSet,
    live: &dyn LiveView,
) -> Decision {
    let (g, next) = match pass_fences(tables, name, master_id, master_epoch, set, live) {
        Ok(passed) => passed,
        Err(fence) => return fence.refusal(),
    };
    let event = Event::AlterSyncStateSet {
        broker_name: name.to_owned(),
        new_set: set.ids.clone(),
        expect_master_epoch: g.master_epoch(),
        expect_sync_epoch: g.sync_epoch(),
    };
    Decision::commit(event, Answer::Altered(SyncStateSet { ids: set.ids.clone(), epoch: next }))
}

/// Java's fences of an in-sync set change, in Java's order; when all pass, the group and the
/// epoch of its new set.
fn pass_fences<'t>(
    tables: &'t ReplicaTables,
    name: &str,
    master_id: i64,
    master_epoch: i32,
    set: &SyncStateSet,
    live: &dyn LiveView,
) -> Result<(&'t Group, i32), Fence> {
    let g = tables.group(name).ok_or(Fence::UnknownGroup)?;
    if set.ids == *g.sync_set() {
        return Err(Fence::Unchanged);
    }
    if g.master() != Some(master_id) {
        return Err(Fence::NotMaster { current: g.master(), asked: master_id });
    }
    if master_epoch != g.master_epoch() {
        return Err(Fence::MasterEpoch { current: g.master_epoch(), asked: master_epoch });
    }
    if set.epoch != g.sync_epoch() {
        return Err(Fence::SyncStateSetEpoch { current: g.sync_epoch(), asked: set.epoch });
    }
    if let Some(unfit) = unfit_member(g, name, &set.ids, live) {
        return Err(unfit);
    }
    if !set.ids.contains(&master_id) {
        return Err(Fence::MasterLeftOut(master_id));
    }
    let next = g.sync_epoch().checked_add(1).ok_or(Fence::EpochExhausted)?;
    Ok((g, next))
}

/// The first id of `ids` (ascending) that is no registered replica of `g` or not alive.
fn unfit_member(g: &Group, name: &str, ids: &BTreeSet<i64>, live: &dyn LiveView) -> Option<Fence> {
    ids.iter().find_map(|&id| {
        if !g.replicas().contains_key(&id) {
            return Some(Fence::UnknownReplica(id));
        }
        let dead = live.live(g.cluster(), name, id).is_none();
        dead.then_some(Fence::DeadReplica(id))
    })
}

/// A fence an in-sync set change did not pass.
enum Fence {
    /// The group is not known.
    UnknownGroup,
    /// The new set is the current one.
    Unchanged,
    /// The requester is not the group's master.
    NotMaster { current: Option<i64>, asked: i64 },
    /// The requester's master epoch is not the group's.
    MasterEpoch { current: i32, asked: i32 },
    /// The new set's epoch is not the current set's.
    SyncStateSetEpoch { current: i32, asked: i32 },
    /// A member of the new set is no registered replica (2003).
    UnknownReplica(i64),
    /// A member of the new set is not alive (2006).
    DeadReplica(i64),
    /// The new set leaves out the master.
    MasterLeftOut(i64),
    /// The set's epoch cannot grow.
    EpochExhausted,
}

impl Fence {
    /// The refusal of the change at this fence, with Java's code and remark.
    fn refusal(&self) -> Decision {
        let (code, remark) = match *self {
            Fence::UnknownGroup => (Code::AlterSyncStateSetFailed, "Broker metadata is not existed".to_owned()),
            Fence::Unchanged => (
                Code::AlterSyncStateSetFailed,
                "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet".to_owned(),
            ),
            Fence::NotMaster { current, asked } => {
                let current = current.map_or_else(|| "null".to_owned(), |m| m.to_string());
                (Code::InvalidMaster, format!("{REJECT} the current leader is:{current}, not {asked}"))
            }
            Fence::MasterEpoch { current, asked } => {
                (Code::FencedMasterEpoch, format!("{REJECT} the current master epoch is:{current}, not {asked}"))
            }
            Fence::SyncStateSetEpoch { current, asked } => (
                Code::FencedSyncStateSetEpoch,
                format!("{REJECT} the current syncStateSet epoch is:{current}, not {asked}"),
            ),
            Fence::UnknownReplica(id) => (Code::InvalidReplicas, format!("{REJECT} the replicas {id} don't exist")),
            Fence::DeadReplica(id) => (Code::BrokerNotAlive, format!("{REJECT} the replicas {id} don't alive")),
            Fence::MasterLeftOut(id) => (
                Code::AlterSyncStateSetFailed,
                format!("{REJECT} the newSyncStateSet don't contains origin leader {id}"),
            ),
            Fence::EpochExhausted => (Code::AlterSyncStateSetFailed, "syncStateSet epoch exhausted".to_owned()),
        };
        Decision::refuse(code, remark)
    }
}

pub(super) fn clean_broker_data(
    tables: &ReplicaTables,
    cluster: Option<&str>,
    name: &str,
    ids: Option<&str>,
    clean_living: bool,
    live: &dyn LiveView,
) -> Decision {
    let ids = match ids.filter(|text| !text.trim().is_empty()).map(parse_ids).transpose() {
        Ok(ids) => ids,
        Err(NotAnId(item)) => {
            return Decision::refuse(
                Code::InvalidCleanBrokerMetadata,
                format!(
                    "Please set the option <brokerControllerIdsToClean> according to the format, exception: java.lang.NumberFormatException: For input string: \"{item}\""
                ),
            )
        }
    };
    let group = tables.group(name);
    if !clean_living {
        if ids.is_none() && group.is_some_and(|g| g.master().is_some()) {
            return Decision::refuse(
                Code::InvalidCleanBrokerMetadata,
                format!("Broker {name} is still alive, clean up failure"),
            );
        }
        let cluster = cluster.unwrap_or_default();
        if let Some(id) = ids.iter().flatten().find(|id| live.live(cluster, name, **id).is_some()) {
            return Decision::refuse(
                Code::InvalidCleanBrokerMetadata,
                format!("Broker [{name},  {id}] is still alive, clean up failure"),
            );
        }
    }
    if group.is_none() {
        return Decision::refuse(
            Code::InvalidCleanBrokerMetadata,
            format!("Broker {name} is not existed,clean broker data failure."),
        );
    }
    Decision::commit(Event::CleanBrokerData { broker_name: name.to_owned(), ids }, Answer::Cleaned)
}

/// An item of an id list that is no number.
struct NotAnId<'a>(&'a str);

/// `1;2` as ids, as Java's `split(";")` and `Long.valueOf` read it (trailing empty items
/// dropped, no trimming); the first item that is no number is the error.
fn parse_ids(text: &str) -> Result<BTreeSet<i64>, NotAnId<'_>> {
    let mut items: Vec<&str> = text.split(';').collect();
    while items.last() == Some(&"") {
        items.pop();
    }
    items.into_iter().map(|item| item.parse::<i64>().map_err(|_| NotAnId(item))).collect()
}
