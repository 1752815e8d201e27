//! What the controller subcommands print: the answers as JSON-friendly structs, and their text
//! in mqadmin's layout (`#Label<TAB>value` lines), so scripts written for mqadmin read it. Every
//! value a controller sent is escaped ([`printable`]) in the text.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use namesrv_protocol::controller::body::{BrokerReplicasInfo, ElectMasterResponseBody, ReplicaIdentity};
use namesrv_protocol::controller::response::{MasterFields, MetadataResponse};
use serde::Serialize;

use crate::escape::printable;

/// CONTROLLER_GET_METADATA_INFO's answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The controller group.
    pub group: String,
    /// The leader's peer id.
    pub leader_id: Option<String>,
    /// The leader's address.
    pub leader_address: Option<String>,
    /// Whether the answering controller leads.
    pub is_leader: bool,
    /// `id:addr` per peer.
    pub peers: Vec<String>,
}

impl From<MetadataResponse> for Metadata {
    fn from(m: MetadataResponse) -> Self {
        let peers = m.peers.split(';').filter(|p| !p.is_empty()).map(str::to_owned).collect();
        Metadata {
            group: m.group,
            leader_id: m.controller_leader_id,
            leader_address: m.controller_leader_address,
            is_leader: m.is_leader,
            peers,
        }
    }
}

/// The metadata text.
pub fn metadata(m: &Metadata) -> String {
    let show = |v: &Option<String>| printable(v.as_deref().unwrap_or("")).into_owned();
    let mut out = format!("#ControllerGroup\t{}\n", printable(&m.group));
    let _ = writeln!(out, "#ControllerLeaderId\t{}", show(&m.leader_id));
    let _ = writeln!(out, "#ControllerLeaderAddress\t{}", show(&m.leader_address));
    for peer in &m.peers {
        let _ = writeln!(out, "#Peer:\t{}", printable(peer));
    }
    out
}

/// One replica as listed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replica {
    /// Its id.
    pub broker_id: i64,
    /// Its address.
    pub broker_address: String,
    /// Whether the controller hears its heartbeats.
    pub alive: bool,
}

/// One group's sync state.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncState {
    /// The master's id, if any.
    pub master_broker_id: Option<i64>,
    /// The master's address.
    pub master_address: Option<String>,
    /// The master epoch.
    pub master_epoch: i32,
    /// The SyncStateSet epoch.
    pub sync_state_set_epoch: i32,
    /// The in-sync replicas.
    pub in_sync_replicas: Vec<Replica>,
    /// The other registered replicas.
    pub not_in_sync_replicas: Vec<Replica>,
}

/// CONTROLLER_GET_SYNC_STATE_DATA's answer, groups by name.
pub type SyncStates = BTreeMap<String, SyncState>;

fn replicas(list: &[ReplicaIdentity]) -> Vec<Replica> {
    list.iter()
        .map(|r| Replica { broker_id: r.broker_id, broker_address: r.broker_address.clone(), alive: r.alive })
        .collect()
}

/// The groups of `info`.
pub fn sync_states_of(info: BrokerReplicasInfo) -> SyncStates {
    info.replicas_info_table
        .into_iter()
        .map(|(name, g)| {
            let state = SyncState {
                master_broker_id: g.master_broker_id,
                master_address: g.master_address,
                master_epoch: g.master_epoch,
                sync_state_set_epoch: g.sync_state_set_epoch,
                in_sync_replicas: replicas(&g.in_sync_replicas),
                not_in_sync_replicas: replicas(&g.not_in_sync_replicas),
            };
            (name, state)
        })
        .collect()
}

/// The sync-state text: per group its master, epochs, the in-sync count and every replica.
pub fn sync_states(states: &SyncStates) -> String {
    let mut out = String::new();
    for (name, s) in states {
        let name = printable(name);
        let _ = writeln!(out, "#brokerName\t{name}");
        let _ = writeln!(out, "#MasterBrokerId\t{}", s.master_broker_id.map(|m| m.to_string()).unwrap_or_default());
        let _ = writeln!(out, "#MasterAddr\t{}", printable(s.master_address.as_deref().unwrap_or("")));
        let _ = writeln!(out, "#MasterEpoch\t{}", s.master_epoch);
        let _ = writeln!(out, "#SyncStateSetEpoch\t{}", s.sync_state_set_epoch);
        let _ = writeln!(out, "#SyncStateSetNums\t{}", s.in_sync_replicas.len());
        for (label, list) in [("InSyncReplica", &s.in_sync_replicas), ("NotInSyncReplica", &s.not_in_sync_replicas)] {
            for r in list {
                let (id, addr, alive) = (r.broker_id, printable(&r.broker_address), r.alive);
                let _ = writeln!(out, "{label}:\tbrokerName={name} brokerId={id} brokerAddress={addr} alive={alive}");
            }
        }
        out.push('\n');
    }
    out
}

/// An election's result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Elected {
    /// The cluster.
    pub cluster_name: String,
    /// The group.
    pub broker_name: String,
    /// The new master's id.
    pub master_broker_id: Option<i64>,
    /// The new master's address.
    pub master_address: Option<String>,
    /// The new master epoch.
    pub master_epoch: Option<i32>,
    /// The new SyncStateSet epoch.
    pub sync_state_set_epoch: Option<i32>,
    /// The new SyncStateSet.
    pub sync_state_set: Vec<i64>,
    /// Every member of the group, id to address.
    pub brokers: BTreeMap<i64, String>,
}

impl Elected {
    /// The result of electing in `cluster`'s group `broker`.
    pub fn new(cluster: &str, broker: &str, master: MasterFields, body: ElectMasterResponseBody) -> Self {
        Elected {
            cluster_name: cluster.to_owned(),
            broker_name: broker.to_owned(),
            master_broker_id: master.master_broker_id,
            master_address: master.master_address,
            master_epoch: master.master_epoch,
            sync_state_set_epoch: master.sync_state_set_epoch,
            sync_state_set: body.sync_state_set.into_iter().collect(),
            brokers: body.member_group.map(|g| g.broker_addrs).unwrap_or_default(),
        }
    }
}

/// The election text.
pub fn elected(e: &Elected) -> String {
    let show = |v: Option<String>| v.unwrap_or_default();
    let mut out = format!("#ClusterName\t{}\n#BrokerName\t{}\n", printable(&e.cluster_name), printable(&e.broker_name));
    let _ = writeln!(out, "#BrokerMasterAddr\t{}", printable(&show(e.master_address.clone())));
    let _ = writeln!(out, "#MasterEpoch\t{}", show(e.master_epoch.map(|v| v.to_string())));
    let _ = writeln!(out, "#SyncStateSetEpoch\t{}", show(e.sync_state_set_epoch.map(|v| v.to_string())));
    for (id, addr) in &e.brokers {
        let _ = writeln!(out, "#Broker\t{id}\t{}", printable(addr));
    }
    out
}

/// One controller's configuration text: `key = value` aligned.
pub fn config(c: &BTreeMap<String, String>) -> String {
    c.iter().map(|(k, v)| format!("{:<50}=  {}\n", printable(k), printable(v))).collect()
}
