//! What the controller port answers, in one place: every [`Answer`] of the state machine encoded
//! alone (each carries what its response holds), and every [`ControllerError`] mapped to its
//! response code and remark. A refusal of the state machine keeps the response header Java's
//! handler had built ([`ErrorShape`]: `{clusterName, brokerName}` for 1013 and 1003, `{}` for
//! 1002 and 1004, `newSyncStateSetEpoch` 0 for 1001); CONTROLLER_NOT_LEADER and the failures
//! Java has no answer for are bare.

use namesrv_controller_core::decide::{Answer, Op};
use thiserror::Error;

use crate::controller::messages::Failure;
use crate::protocol::controller::response::{alter_sync_state_set_ext, group_ext, NextBrokerIdResponse};
use crate::protocol::controller::{ControllerResponseCode, NOT_LEADER_REMARK};
use crate::protocol::header::HeaderError;
use crate::protocol::{ExtFields, RemotingCommand, ResponseCode};
use crate::settings::UpdateError;

/// Why a request on the controller port got no answer of the state machine; each maps to one
/// response code and remark ([`ControllerError::code`], its `Display`).
#[derive(Debug, Error)]
pub enum ControllerError {
    /// The code is not one the controller serves.
    #[error(" request type {0} not supported")]
    NotSupported(i32),
    /// A required header field is missing or malformed.
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// CONTROLLER_ALTER_SYNC_STATE_SET without a SyncStateSet body it can read.
    #[error("bad or missing SyncStateSet body")]
    NoSyncStateSet,
    /// CONTROLLER_GET_SYNC_STATE_DATA without broker names (Java's remark).
    #[error("not set any response code")]
    NoBrokerNames,
    /// UPDATE_CONTROLLER_CONFIG's body is not properties text (Java's remark).
    #[error("string2Properties error")]
    NotProperties,
    /// UPDATE_CONTROLLER_CONFIG was refused.
    #[error(transparent)]
    Config(#[from] UpdateError),
    /// The controller did not answer, or refused.
    #[error(transparent)]
    Failed(#[from] Failure),
    /// A Raft frame refused: not from a peer, not for this peer, or unreadable.
    #[error("{0}")]
    PeerFrame(String),
    /// A Raft frame before this peer's Raft runs.
    #[error("controller raft not started")]
    RaftNotStarted,
}

impl ControllerError {
    /// The response code Java answers this failure with.
    pub fn code(&self) -> i32 {
        match self {
            ControllerError::NotSupported(_) => ResponseCode::RequestCodeNotSupported as i32,
            ControllerError::Failed(Failure::Refused(refusal)) => refusal.code as i32,
            ControllerError::Failed(Failure::NotLeader) => ControllerResponseCode::NotLeader as i32,
            ControllerError::Failed(Failure::Busy(_)) => ResponseCode::SystemBusy as i32,
            ControllerError::Config(UpdateError::BlackListed(_)) => ResponseCode::NoPermission as i32,
            ControllerError::PeerFrame(_) => ControllerResponseCode::InvalidRequest as i32,
            _ => ResponseCode::SystemError as i32,
        }
    }

    /// The response, shaped as `shape` says where the state machine refused.
    pub fn response(self, shape: ErrorShape) -> RemotingCommand {
        let ext = match (&self, shape) {
            (ControllerError::Failed(Failure::Refused(_)), ErrorShape::Empty) => Some(ExtFields::new()),
            (ControllerError::Failed(Failure::Refused(_)), ErrorShape::Group(cluster, name)) => {
                Some(group_ext(&cluster, &name))
            }
            (ControllerError::Failed(Failure::Refused(_)), ErrorShape::AlterEpoch) => Some(alter_sync_state_set_ext(0)),
            _ => None,
        };
        let remark = match &self {
            ControllerError::Failed(Failure::NotLeader) => NOT_LEADER_REMARK.to_owned(),
            other => other.to_string(),
        };
        response(self.code(), Some(remark), ext)
    }
}

/// How a refusal of the state machine is shaped: the response header Java's handler had built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorShape {
    /// No extFields.
    Bare,
    /// `{}`.
    Empty,
    /// `{clusterName, brokerName}` of the request.
    Group(String, String),
    /// `{"newSyncStateSetEpoch":"0"}`.
    AlterEpoch,
}

impl ErrorShape {
    /// The shape of a refusal of `op`.
    pub fn of(op: &Op) -> Self {
        match op {
            Op::ApplyBrokerId { cluster, name, .. } | Op::Register { cluster, name, .. } => {
                ErrorShape::Group(cluster.clone(), name.clone())
            }
            Op::ElectMaster { .. } | Op::GetReplicaInfo { .. } => ErrorShape::Empty,
            Op::AlterSyncStateSet { .. } => ErrorShape::AlterEpoch,
            Op::GetNextBrokerId { .. } | Op::GetSyncStateData { .. } | Op::CleanBrokerData { .. } => ErrorShape::Bare,
        }
    }
}

/// A response of `code`, with `remark` and `ext`.
pub fn response(code: i32, remark: Option<String>, ext: Option<ExtFields>) -> RemotingCommand {
    let mut r = RemotingCommand::response(ResponseCode::Success, remark);
    r.code = code;
    r.ext_fields = ext;
    r
}

/// SUCCESS with `ext`.
pub fn success(ext: Option<ExtFields>) -> RemotingCommand {
    response(ResponseCode::Success as i32, None, ext)
}

/// The response to a request the state machine answered with `answer`.
pub fn answered(answer: Answer) -> RemotingCommand {
    match answer {
        Answer::NextBrokerId { cluster, name, next } => {
            let r = NextBrokerIdResponse { cluster_name: cluster, broker_name: name, next_broker_id: Some(next) };
            success(Some(r.to_ext()))
        }
        Answer::IdApplied { cluster, name } => success(Some(group_ext(&cluster, &name))),
        Answer::Registered { cluster, name, master, set } => {
            success(Some(master.register_ext(&cluster, &name))).with_body(set.encode())
        }
        Answer::ReplicaInfo { master, set } => success(Some(master.replica_info_ext())).with_body(set.encode()),
        Answer::Elected { master, body } => success(Some(master.elect_ext())).with_body(body.encode()),
        Answer::MasterKept { master, body, remark } => {
            let code = ControllerResponseCode::MasterStillExist as i32;
            response(code, Some(remark), Some(master.elect_ext())).with_body(body.encode())
        }
        Answer::Altered(set) => success(Some(alter_sync_state_set_ext(set.epoch))).with_body(set.encode()),
        Answer::SyncStateData(info) => success(None).with_body(info.encode()),
        Answer::Cleaned => success(None),
    }
}
