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
    let Some(g) = tables.group(name) else {
        return Decision::refuse(Code::AlterSyncStateSetFailed, "Broker metadata is not existed");
    };
    if set.ids == *g.sync_set() {
        return Decision::refuse(
            Code::AlterSyncStateSetFailed,
            "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet",
        );
    }
    if g.master() != Some(master_id) {
        let current = g.master().map_or_else(|| "null".to_owned(), |m| m.to_string());
        return Decision::refuse(
            Code::InvalidMaster,
            format!("{REJECT} the current leader is:{current}, not {master_id}"),
        );
    }
    if master_epoch != g.master_epoch() {
        let current = g.master_epoch();
        return Decision::refuse(
            Code::FencedMasterEpoch,
            format!("{REJECT} the current master epoch is:{current}, not {master_epoch}"),
        );
    }
    if set.epoch != g.sync_epoch() {
        let (current, asked) = (g.sync_epoch(), set.epoch);
        return Decision::refuse(
            Code::FencedSyncStateSetEpoch,
            format!("{REJECT} the current syncStateSet epoch is:{current}, not {asked}"),
        );
    }
    if let Some(refused) = unfit_member(g, name, &set.ids, live) {
        return refused;
    }
    if !set.ids.contains(&master_id) {
        return Decision::refuse(
            Code::AlterSyncStateSetFailed,
            format!("{REJECT} the newSyncStateSet don't contains origin leader {master_id}"),
        );
    }
    let Some(next) = g.sync_epoch().checked_add(1) else {
        return Decision::refuse(Code::AlterSyncStateSetFailed, "syncStateSet epoch exhausted");
    };
    let event = Event::AlterSyncStateSet {
        broker_name: name.to_owned(),
        new_set: set.ids.clone(),
        expect_master_epoch: g.master_epoch(),
        expect_sync_epoch: g.sync_epoch(),
    };
    Decision::commit(event, Answer::Altered(SyncStateSet { ids: set.ids.clone(), epoch: next }))
}

/// The refusal of the first id of `ids` (ascending) that is no registered replica of `g`
/// (2003) or not alive (2006).
fn unfit_member(g: &Group, name: &str, ids: &BTreeSet<i64>, live: &dyn LiveView) -> Option<Decision> {
    ids.iter().find_map(|id| {
        if !g.replicas().contains_key(id) {
            return Some(Decision::refuse(Code::InvalidReplicas, format!("{REJECT} the replicas {id} don't exist")));
        }
        let dead = live.live(g.cluster(), name, *id).is_none();
        dead.then(|| Decision::refuse(Code::BrokerNotAlive, format!("{REJECT} the replicas {id} don't alive")))
    })
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
