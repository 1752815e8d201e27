//! What a request decides on the applied tables and this node's liveness view (Java's
//! `ReplicasInfoManager` request methods): an answer, and the event to commit first when it
//! changes anything. Remarks are Java's, as brokers and operators read them.

use namesrv_protocol::controller::body::{BrokerReplicasInfo, ReplicaIdentity, ReplicasInfo, SyncStateSet};
use namesrv_protocol::controller::response::MasterFields;
use namesrv_protocol::controller::ControllerResponseCode as Code;

use crate::alter::{alter_sync_state_set, clean_broker_data};
pub use crate::decision::{Answer, DecideOptions, Decision, LiveFacts, LiveView, Refusal};
use crate::elect::elect_master;
use crate::{Event, Group, ReplicaTables, FIRST_BROKER_ID};

/// A request to the controller's state, as a domain value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// CONTROLLER_GET_NEXT_BROKER_ID.
    GetNextBrokerId { cluster: String, name: String },
    /// CONTROLLER_APPLY_BROKER_ID.
    ApplyBrokerId { cluster: String, name: String, id: i64, check_code: String },
    /// CONTROLLER_REGISTER_BROKER.
    Register { cluster: String, name: String, id: i64, address: String },
    /// CONTROLLER_GET_REPLICA_INFO.
    GetReplicaInfo { name: String },
    /// CONTROLLER_ELECT_MASTER; `requester` -1 is the controller itself.
    ElectMaster { name: String, requester: i64, designate: bool },
    /// CONTROLLER_ALTER_SYNC_STATE_SET.
    AlterSyncStateSet { name: String, master_id: i64, master_epoch: i32, set: SyncStateSet },
    /// CONTROLLER_GET_SYNC_STATE_DATA.
    GetSyncStateData { names: Vec<String> },
    /// CLEAN_BROKER_DATA.
    CleanBrokerData { cluster: Option<String>, name: String, ids: Option<String>, clean_living: bool },
}

impl Op {
    /// Whether the request can never change the tables.
    pub fn is_read(&self) -> bool {
        matches!(self, Op::GetNextBrokerId { .. } | Op::GetReplicaInfo { .. } | Op::GetSyncStateData { .. })
    }

    /// The group the request is about (the first for a list).
    pub fn broker_name(&self) -> &str {
        match self {
            Op::GetNextBrokerId { name, .. }
            | Op::ApplyBrokerId { name, .. }
            | Op::Register { name, .. }
            | Op::GetReplicaInfo { name }
            | Op::ElectMaster { name, .. }
            | Op::AlterSyncStateSet { name, .. }
            | Op::CleanBrokerData { name, .. } => name,
            Op::GetSyncStateData { names } => names.first().map_or("", String::as_str),
        }
    }
}

/// Decides `op` on `tables` as this node's liveness `live` sees the brokers.
pub fn decide(tables: &ReplicaTables, op: &Op, live: &dyn LiveView, options: DecideOptions) -> Decision {
    match op {
        Op::GetNextBrokerId { cluster, name } => Decision::answer(Answer::NextBrokerId {
            cluster: cluster.clone(),
            name: name.clone(),
            next: tables.group(name).map_or(FIRST_BROKER_ID, Group::next_broker_id),
        }),
        Op::ApplyBrokerId { cluster, name, id, check_code } => apply_broker_id(tables, cluster, name, *id, check_code),
        Op::Register { cluster, name, id, address } => register(tables, cluster, name, *id, address, live),
        Op::GetReplicaInfo { name } => match tables.group(name) {
            None => Decision::refuse(Code::BrokerMetadataNotExist, "Broker metadata is not existed"),
            Some(g) => {
                let master = MasterFields {
                    master_broker_id: g.master(),
                    master_address: g.master_address().map(str::to_owned),
                    master_epoch: Some(g.master_epoch()),
                    sync_state_set_epoch: None,
                };
                Decision::answer(Answer::ReplicaInfo { master, set: sync_state_set(g) })
            }
        },
        Op::ElectMaster { name, requester, designate } => {
            elect_master(tables, name, *requester, *designate, live, options.elect_unclean)
        }
        Op::AlterSyncStateSet { name, master_id, master_epoch, set } => {
            alter_sync_state_set(tables, name, *master_id, *master_epoch, set, live)
        }
        Op::GetSyncStateData { names } => Decision::answer(Answer::SyncStateData(sync_state_data(tables, names, live))),
        Op::CleanBrokerData { cluster, name, ids, clean_living } => {
            clean_broker_data(tables, cluster.as_deref(), name, ids.as_deref(), *clean_living, live)
        }
    }
}

/// The group's in-sync set as a body.
pub fn sync_state_set(g: &Group) -> SyncStateSet {
    SyncStateSet { ids: g.sync_set().clone(), epoch: g.sync_epoch() }
}

fn apply_broker_id(tables: &ReplicaTables, cluster: &str, name: &str, id: i64, code: &str) -> Decision {
    let address = code.split(';').next().unwrap_or(code).to_owned();
    let event = Event::ApplyBrokerId {
        cluster: cluster.to_owned(),
        broker_name: name.to_owned(),
        broker_id: id,
        address,
        register_check_code: code.to_owned(),
    };
    let applied = Answer::IdApplied { cluster: cluster.to_owned(), name: name.to_owned() };
    let decision = match tables.group(name) {
        None if id == FIRST_BROKER_ID => Decision::commit(event, applied),
        None => Decision::refuse(
            Code::BrokerIdInvalid,
            format!("Broker-set: {name} hasn't been registered in controller, but broker try to apply brokerId: {id}"),
        ),
        Some(g) => match g.replicas().get(&id) {
            Some(replica) if replica.register_check_code == code => Decision::answer(applied),
            // Only the id the group offers next: a broker asks for it first (1012), and one far
            // above it would leave the group no id a new broker can ever apply.
            None if id == g.next_broker_id() && id < i64::MAX => Decision::commit(event, applied),
            _ => Decision::refuse(Code::BrokerIdInvalid, format!("Fail to apply brokerId: {id} in broker-set: {name}")),
        },
    };
    within_bounds(tables, decision)
}

/// `decision`, or a refusal when the change it commits would pass a bound of the tables
/// (CONTROLLER_INVALID_REQUEST, naming the bound).
fn within_bounds(tables: &ReplicaTables, decision: Decision) -> Decision {
    match decision.event.as_ref().map(|event| tables.admits(event)) {
        Some(Err(over)) => Decision::refuse(Code::InvalidRequest, over.to_string()),
        _ => decision,
    }
}

fn register(
    tables: &ReplicaTables,
    cluster: &str,
    name: &str,
    id: i64,
    address: &str,
    live: &dyn LiveView,
) -> Decision {
    let Some(g) = tables.group(name) else {
        return Decision::refuse(
            Code::BrokerNeedToBeRegistered,
            format!("Broker-set: {name} hasn't been registered in controller"),
        );
    };
    let Some(replica) = g.replicas().get(&id) else {
        return Decision::refuse(
            Code::BrokerNeedToBeRegistered,
            format!("BrokerId: {id} hasn't been registered in broker-set: {name}"),
        );
    };
    // Java fills the master's four fields only when a master exists and is alive.
    let mut master = MasterFields::default();
    if let Some(m) = g.master().filter(|m| live.live(cluster, name, *m).is_some()) {
        // The broker registering is the master when it moved: its new address is the master's.
        let addr = if m == id { address } else { g.address(m).unwrap_or_default() };
        master = MasterFields {
            master_broker_id: Some(m),
            master_address: Some(addr.to_owned()),
            master_epoch: Some(g.master_epoch()),
            sync_state_set_epoch: Some(g.sync_epoch()),
        };
    }
    let answer =
        Answer::Registered { cluster: cluster.to_owned(), name: name.to_owned(), master, set: sync_state_set(g) };
    if replica.address == address {
        return Decision::answer(answer);
    }
    let event = Event::UpdateBrokerAddress { broker_name: name.to_owned(), broker_id: id, address: address.to_owned() };
    within_bounds(tables, Decision::commit(event, answer))
}

/// The replicas of the known groups among `names`, with their liveness.
pub fn sync_state_data(tables: &ReplicaTables, names: &[String], live: &dyn LiveView) -> BrokerReplicasInfo {
    let mut info = BrokerReplicasInfo::default();
    for name in names {
        let Some(g) = tables.group(name) else { continue };
        let identity = |(id, replica): (&i64, &crate::Replica)| ReplicaIdentity {
            broker_name: name.clone(),
            broker_id: *id,
            broker_address: replica.address.clone(),
            alive: live.live(g.cluster(), name, *id).is_some(),
        };
        let (in_sync, not_in_sync) = g.replicas().iter().partition(|(id, _)| g.sync_set().contains(id));
        let (in_sync, not_in_sync): (Vec<_>, Vec<_>) = (in_sync, not_in_sync);
        let replicas = ReplicasInfo {
            master_broker_id: g.master(),
            master_address: g.master_address().map(str::to_owned),
            master_epoch: g.master_epoch(),
            sync_state_set_epoch: g.sync_epoch(),
            in_sync_replicas: in_sync.into_iter().map(identity).collect(),
            not_in_sync_replicas: not_in_sync.into_iter().map(identity).collect(),
        };
        info.replicas_info_table.insert(name.clone(), replicas);
    }
    info
}
