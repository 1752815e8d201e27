//! What the status API (`/api/v1/controller`) shows of the controller: who leads, and each
//! broker group's master, epochs and in-sync set from this peer's applied state, with which
//! replicas are alive as this peer hears their heartbeats.

use serde::Serialize;

use super::Controller;
use crate::mailbox::Apply;
use crate::origin::ConnId;
use crate::request;
use namesrv_controller_core::decide::LiveView;

/// Asks the controller for its [`Overview`].
#[derive(Debug)]
pub struct GetOverview {
    pub conn: ConnId,
}
request!(GetOverview, Overview, query);

/// The controller as one peer sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overview {
    /// The controller group (`controllerDLegerGroup`).
    pub group: String,
    /// This peer's id (`n0`).
    pub peer: String,
    /// This peer serves as the leader: the groups below are the cluster's current state.
    pub serving: bool,
    /// The leader's peer id, when one is known.
    pub leader: Option<String>,
    /// The leader's controller address, when one is known.
    pub leader_address: Option<String>,
    /// Every broker group, by broker name.
    pub groups: Vec<GroupOverview>,
}

/// One broker group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupOverview {
    /// The broker name.
    pub broker_name: String,
    /// Its cluster.
    pub cluster: String,
    /// The master's broker id, when there is a master.
    pub master_broker_id: Option<i64>,
    /// The master's address.
    pub master_address: Option<String>,
    /// The master epoch (0: never elected).
    pub master_epoch: i32,
    /// The SyncStateSet epoch.
    pub sync_state_set_epoch: i32,
    /// The in-sync replicas' ids, ascending.
    pub sync_state_set: Vec<i64>,
    /// Every registered replica, by id.
    pub replicas: Vec<ReplicaOverview>,
}

/// One registered replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplicaOverview {
    /// Its controller-assigned id.
    pub broker_id: i64,
    /// Its address.
    pub address: String,
    /// It heartbeats to this peer.
    pub alive: bool,
    /// It is in the SyncStateSet.
    pub in_sync: bool,
}

impl Apply<Controller> for GetOverview {
    fn apply(self, controller: &mut Controller) -> Overview {
        let now = controller.now();
        let meta = controller.metadata(now);
        let live = controller.live.at(now);
        let applied = controller.machine.lock();
        let groups = applied
            .tables
            .groups()
            .map(|(name, g)| GroupOverview {
                broker_name: name.to_owned(),
                cluster: g.cluster().to_owned(),
                master_broker_id: g.master(),
                master_address: g.master_address().map(str::to_owned),
                master_epoch: g.master_epoch(),
                sync_state_set_epoch: g.sync_epoch(),
                sync_state_set: g.sync_set().iter().copied().collect(),
                replicas: g
                    .replicas()
                    .iter()
                    .map(|(id, r)| ReplicaOverview {
                        broker_id: *id,
                        address: r.address.clone(),
                        alive: live.live(g.cluster(), name, *id).is_some(),
                        in_sync: g.sync_set().contains(id),
                    })
                    .collect(),
            })
            .collect();
        Overview {
            group: meta.group,
            peer: controller.options.self_name.clone(),
            serving: meta.is_leader,
            leader: meta.controller_leader_id,
            leader_address: meta.controller_leader_address,
            groups,
        }
    }
}
