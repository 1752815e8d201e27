//! Controller response headers (and the 1008 push, which carries the same master fields),
//! written in Java's extFields order and read leniently, as `header` does for requests.

use super::header::{ext, num, optional_i32, text};
use crate::command::{ExtFields, RemotingCommand};
use crate::header::Fields;

/// CONTROLLER_GET_NEXT_BROKER_ID's response (`GetNextBrokerIdResponseHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextBrokerIdResponse {
    pub cluster_name: String,
    pub broker_name: String,
    pub next_broker_id: Option<i64>,
}

impl NextBrokerIdResponse {
    /// The extFields in Java's order.
    pub fn to_ext(&self) -> ExtFields {
        ext([
            ("clusterName", text(&self.cluster_name)),
            ("nextBrokerId", self.next_broker_id.and_then(num)),
            ("brokerName", text(&self.broker_name)),
        ])
    }

    /// Reads a response leniently (absent fields empty or `None`).
    pub fn read(cmd: &RemotingCommand) -> Self {
        let f = Fields::of(cmd);
        Self {
            cluster_name: f.optional("clusterName").unwrap_or_default().to_owned(),
            broker_name: f.optional("brokerName").unwrap_or_default().to_owned(),
            next_broker_id: f.optional_i64("nextBrokerId"),
        }
    }
}

/// The `{clusterName, brokerName}` response of CONTROLLER_APPLY_BROKER_ID, and of
/// CONTROLLER_REGISTER_BROKER's failures.
pub fn group_ext(cluster_name: &str, broker_name: &str) -> ExtFields {
    ext([("clusterName", text(cluster_name)), ("brokerName", text(broker_name))])
}

/// Who masters a group and at which epochs: the fields most controller responses carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MasterFields {
    pub master_broker_id: Option<i64>,
    pub master_address: Option<String>,
    pub master_epoch: Option<i32>,
    pub sync_state_set_epoch: Option<i32>,
}

impl MasterFields {
    /// Reads the fields leniently from any controller response or 1008 request.
    pub fn read(cmd: &RemotingCommand) -> Self {
        let f = Fields::of(cmd);
        Self {
            master_broker_id: f.optional_i64("masterBrokerId"),
            master_address: f.optional("masterAddress").map(str::to_owned),
            master_epoch: optional_i32(&f, "masterEpoch"),
            sync_state_set_epoch: optional_i32(&f, "syncStateSetEpoch"),
        }
    }

    /// CONTROLLER_REGISTER_BROKER's response extFields (`RegisterBrokerToControllerResponseHeader`).
    pub fn register_ext(&self, cluster_name: &str, broker_name: &str) -> ExtFields {
        ext([
            ("masterBrokerId", self.master_broker_id.and_then(num)),
            ("masterAddress", self.master_address.clone()),
            ("clusterName", text(cluster_name)),
            ("brokerName", text(broker_name)),
            ("syncStateSetEpoch", self.sync_state_set_epoch.and_then(num)),
            ("masterEpoch", self.master_epoch.and_then(num)),
        ])
    }

    /// CONTROLLER_ELECT_MASTER's response extFields (`ElectMasterResponseHeader`).
    pub fn elect_ext(&self) -> ExtFields {
        ext([
            ("masterBrokerId", self.master_broker_id.and_then(num)),
            ("masterAddress", self.master_address.clone()),
            ("syncStateSetEpoch", self.sync_state_set_epoch.and_then(num)),
            ("masterEpoch", self.master_epoch.and_then(num)),
        ])
    }

    /// CONTROLLER_GET_REPLICA_INFO's response extFields (`GetReplicaInfoResponseHeader`).
    pub fn replica_info_ext(&self) -> ExtFields {
        ext([
            ("masterBrokerId", self.master_broker_id.and_then(num)),
            ("masterAddress", self.master_address.clone()),
            ("masterEpoch", self.master_epoch.and_then(num)),
        ])
    }

    /// NOTIFY_BROKER_ROLE_CHANGED's request extFields (`NotifyBrokerRoleChangedRequestHeader`).
    pub fn notify_ext(&self) -> ExtFields {
        ext([
            ("masterAddress", self.master_address.clone()),
            ("masterBrokerId", self.master_broker_id.and_then(num)),
            ("syncStateSetEpoch", self.sync_state_set_epoch.and_then(num)),
            ("masterEpoch", self.master_epoch.and_then(num)),
        ])
    }
}

/// CONTROLLER_ALTER_SYNC_STATE_SET's response extFields (a primitive int: `0` on failures).
pub fn alter_sync_state_set_ext(new_sync_state_set_epoch: i32) -> ExtFields {
    ext([("newSyncStateSetEpoch", num(new_sync_state_set_epoch))])
}

/// CONTROLLER_GET_METADATA_INFO's response (`GetMetaDataResponseHeader`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataResponse {
    /// `controllerDLegerGroup`.
    pub group: String,
    /// The leader's peer id (`n0`), when one is known.
    pub controller_leader_id: Option<String>,
    /// The leader's controller address, when one is known.
    pub controller_leader_address: Option<String>,
    /// Whether the answering node is the serving leader.
    pub is_leader: bool,
    /// `id:addr;` per peer.
    pub peers: String,
}

impl MetadataResponse {
    /// The extFields in Java's order.
    pub fn to_ext(&self) -> ExtFields {
        ext([
            ("controllerLeaderId", self.controller_leader_id.clone()),
            ("controllerLeaderAddress", self.controller_leader_address.clone()),
            ("isLeader", num(self.is_leader)),
            ("peers", text(&self.peers)),
            ("group", text(&self.group)),
        ])
    }

    /// Reads a response leniently.
    pub fn read(cmd: &RemotingCommand) -> Self {
        let f = Fields::of(cmd);
        Self {
            group: f.optional("group").unwrap_or_default().to_owned(),
            controller_leader_id: f.optional("controllerLeaderId").map(str::to_owned),
            controller_leader_address: f.optional("controllerLeaderAddress").map(str::to_owned),
            is_leader: f.optional_bool("isLeader").unwrap_or(false),
            peers: f.optional("peers").unwrap_or_default().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(ext: &ExtFields) -> Vec<&str> {
        ext.iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn absent_master_fields_are_left_out_keeping_the_order_of_the_rest() {
        let none = MasterFields { master_epoch: Some(0), sync_state_set_epoch: Some(0), ..MasterFields::default() };
        assert_eq!(
            keys(&none.register_ext("c", "b")),
            ["clusterName", "brokerName", "syncStateSetEpoch", "masterEpoch"]
        );
        assert_eq!(keys(&MasterFields::default().elect_ext()), Vec::<&str>::new());
        let meta = MetadataResponse { group: "g".into(), peers: "n0:a;".into(), ..MetadataResponse::default() };
        assert_eq!(keys(&meta.to_ext()), ["isLeader", "peers", "group"]);
    }
}
