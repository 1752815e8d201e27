//! A controller request as the state machine's [`Op`]: its header read first (a malformed
//! request is SYSTEM_ERROR even on a follower, as in Java), its body where it has one.

use namesrv_controller_core::decide::Op;

use super::reply::ControllerError;
use crate::protocol::controller::body::{decode_names, SyncStateSet};
use crate::protocol::controller::header::*;
use crate::protocol::controller::ControllerRequestCode as Code;
use crate::protocol::RemotingCommand;

/// The operation request `req` of `code` asks of the state machine; `None` for a code that is
/// no such request.
pub fn op_of(code: Code, req: &RemotingCommand) -> Option<Result<Op, ControllerError>> {
    Some(match code {
        Code::GetNextBrokerId => GetNextBrokerIdHeader::read(req)
            .map(|h| Op::GetNextBrokerId { cluster: h.cluster_name, name: h.broker_name })
            .map_err(Into::into),
        Code::ApplyBrokerId => ApplyBrokerIdHeader::read(req)
            .map(|h| Op::ApplyBrokerId {
                cluster: h.cluster_name,
                name: h.broker_name,
                id: h.applied_broker_id,
                check_code: h.register_check_code,
            })
            .map_err(Into::into),
        Code::RegisterBroker => RegisterToControllerHeader::read(req)
            .map(|h| Op::Register {
                cluster: h.cluster_name,
                name: h.broker_name,
                id: h.broker_id,
                address: h.broker_address,
            })
            .map_err(Into::into),
        Code::ElectMaster => ElectMasterHeader::read(req)
            .map(|h| Op::ElectMaster { name: h.broker_name, requester: h.broker_id, designate: h.designate_elect })
            .map_err(Into::into),
        Code::GetReplicaInfo => {
            GetReplicaInfoHeader::read(req).map(|h| Op::GetReplicaInfo { name: h.broker_name }).map_err(Into::into)
        }
        Code::AlterSyncStateSet => alter_sync_state_set(req),
        Code::GetSyncStateData => {
            let names = req.body.as_deref().and_then(|b| decode_names(b).ok()).filter(|n| !n.is_empty());
            names.map(|names| Op::GetSyncStateData { names }).ok_or(ControllerError::NoBrokerNames)
        }
        Code::CleanBrokerData => CleanBrokerDataHeader::read(req)
            .map(|h| Op::CleanBrokerData {
                cluster: h.cluster_name,
                name: h.broker_name,
                ids: h.broker_controller_ids_to_clean,
                clean_living: h.is_clean_living_broker.unwrap_or(false),
            })
            .map_err(Into::into),
        _ => return None,
    })
}

/// CONTROLLER_ALTER_SYNC_STATE_SET: its header, then its SyncStateSet body.
fn alter_sync_state_set(req: &RemotingCommand) -> Result<Op, ControllerError> {
    let h = AlterSyncStateSetHeader::read(req)?;
    let set = req.body.as_deref().and_then(|b| SyncStateSet::decode(b).ok()).ok_or(ControllerError::NoSyncStateSet)?;
    Ok(Op::AlterSyncStateSet { name: h.broker_name, master_id: h.master_broker_id, master_epoch: h.master_epoch, set })
}
