//! The controller listener's requests (Java's `ControllerRequestProcessor`): header decoded
//! first (a malformed request is SYSTEM_ERROR even on a follower, as in Java), then one message
//! to the controller actor, then the answer in Java's exact shape — error responses keep the
//! response header Java built (`{clusterName, brokerName}` for 1013 and 1003, `{}` for 1002
//! and 1004, `newSyncStateSetEpoch` 0 for 1001), CONTROLLER_NOT_LEADER has none. Raft frames
//! from the peers are served on the Raft handle directly. Access control and TLS come later
//! through the same `Dispatcher` seams as the NameServer port.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;

use tracing::warn;

use super::Dispatcher;
use crate::controller::messages::{BrokerHeartbeat, ChannelClosed, Failure, GetMetadata, Outcome, Submit};
use crate::controller::raft::wire::{self, PeerHeader};
use crate::controller::{ControllerHandle, SharedRaft};
use crate::origin::{ConnId, Origin};
use crate::protocol::controller::body::{decode_names, SyncStateSet};
use crate::protocol::controller::header::*;
use crate::protocol::controller::response::{alter_sync_state_set_ext, group_ext, NextBrokerIdResponse};
use crate::protocol::controller::{ControllerRequestCode as Code, ControllerResponseCode, NOT_LEADER_REMARK};
use crate::protocol::header::HeaderError;
use crate::protocol::{ExtFields, RemotingCommand, ResponseCode};
use crate::ratelog::RateLimit;
use namesrv_controller_core::decide::{Answer, Op};
use namesrv_controller_core::liveness::{Beat, LiveKey, DEFAULT_TIMEOUT};

/// What the controller listener's dispatcher fronts.
#[derive(Clone)]
pub struct ControllerFront {
    /// The controller actor.
    pub controller: ControllerHandle,
    /// This peer's Raft, for peer frames.
    pub raft: SharedRaft,
    /// The Raft group's name.
    pub group: String,
    /// This peer's id.
    pub self_name: String,
    /// Addresses peer frames are taken from; `None`: any.
    pub peer_ips: Option<Arc<HashSet<IpAddr>>>,
}

/// How an answer is shaped when it fails: the header Java's handler had already built.
#[derive(Clone, Copy)]
enum ErrorExt<'a> {
    /// No extFields.
    None,
    /// `{}`.
    Empty,
    /// `{clusterName, brokerName}` of the request.
    Group(&'a str, &'a str),
    /// `{"newSyncStateSetEpoch":"0"}`.
    AlterEpoch,
}

fn response(code: i32, remark: Option<String>, ext: Option<ExtFields>) -> RemotingCommand {
    let mut r = RemotingCommand::response(ResponseCode::Success, remark);
    r.code = code;
    r.ext_fields = ext;
    r
}

fn success(ext: Option<ExtFields>) -> RemotingCommand {
    response(0, None, ext)
}

/// The response of a failed request, shaped as `ext` says (2007 and non-Java failures: bare).
fn failed(failure: Failure, ext: ErrorExt) -> RemotingCommand {
    let (code, remark, keep) = match failure {
        Failure::Refused(r) => (r.code as i32, r.remark, true),
        Failure::NotLeader => (ControllerResponseCode::NotLeader as i32, NOT_LEADER_REMARK.to_owned(), false),
        Failure::Busy(_) => (ResponseCode::SystemBusy as i32, failure.to_string(), false),
        other => (ResponseCode::SystemError as i32, other.to_string(), false),
    };
    let ext = match (keep, ext) {
        (false, _) | (_, ErrorExt::None) => None,
        (true, ErrorExt::Empty) => Some(ExtFields::new()),
        (true, ErrorExt::Group(cluster, name)) => Some(group_ext(cluster, name)),
        (true, ErrorExt::AlterEpoch) => Some(alter_sync_state_set_ext(0)),
    };
    response(code, Some(remark), ext)
}

fn header_error(e: HeaderError) -> RemotingCommand {
    response(ResponseCode::SystemError as i32, Some(e.to_string()), None)
}

impl ControllerFront {
    async fn submit(&self, conn: ConnId, op: Op) -> Outcome {
        match self.controller.ask(Submit { conn, op }).await {
            Ok(answer) => answer.await.unwrap_or_else(|_| Err(Failure::Unavailable("controller stopped".into()))),
            Err(e) => Err(Failure::Unavailable(e.to_string())),
        }
    }
}

impl Dispatcher {
    /// Handles one request of the controller listener; `None` for oneway requests.
    pub(super) async fn controller_request(&self, origin: Origin, req: &RemotingCommand) -> Option<RemotingCommand> {
        let front = self.controller.as_ref()?;
        let Some(code) = Code::from_i32(req.code)
            .filter(|c| !matches!(c, Code::NotifyBrokerRoleChanged | Code::GetBrokerEpochCache))
        else {
            let remark = format!(" request type {} not supported", req.code);
            return Some(response(ResponseCode::RequestCodeNotSupported as i32, Some(remark), None));
        };
        let conn = origin.conn;
        Some(match code {
            Code::BrokerHeartbeat => {
                heartbeat(front, conn, req);
                return None;
            }
            Code::GetMetadataInfo => match front.controller.ask(GetMetadata { conn }).await {
                Ok(meta) => success(Some(meta.to_ext())),
                Err(e) => failed(Failure::Unavailable(e.to_string()), ErrorExt::None),
            },
            Code::RaftAppendEntries | Code::RaftVote | Code::RaftInstallSnapshot => {
                peer_frame(front, origin, code, req).await
            }
            Code::GetControllerConfig => super::controller_config::get(&front.controller, origin).await,
            Code::UpdateControllerConfig => super::controller_config::update(&front.controller, origin, req).await,
            _ => Box::pin(state_request(front, conn, code, req)).await,
        })
    }

    /// Whether this dispatcher fronts the controller listener.
    pub fn fronts_controller(&self) -> bool {
        self.controller.is_some()
    }

    /// A connection of this dispatcher's listener closed.
    pub fn connection_closed(&self, conn: ConnId) {
        if let Some(front) = &self.controller {
            front.controller.tell(ChannelClosed { conn });
        }
    }
}

/// BROKER_HEARTBEAT: never answered (oneway); without brokerId Java answers 2005, unsent.
fn heartbeat(front: &ControllerFront, conn: ConnId, req: &RemotingCommand) {
    let Ok(h) = ControllerHeartbeatHeader::read(req) else { return };
    let Some(id) = h.broker_id else { return };
    let timeout = h
        .heartbeat_timeout_mills
        .filter(|ms| *ms > 0)
        .map_or(DEFAULT_TIMEOUT, |ms| std::time::Duration::from_millis(ms.min(86_400_000) as u64));
    let beat = Beat {
        key: LiveKey { cluster: h.cluster_name, name: h.broker_name, id },
        addr: h.broker_addr,
        epoch: h.epoch.unwrap_or(-1),
        max_offset: h.max_offset.unwrap_or(-1),
        confirm_offset: h.confirm_offset.unwrap_or(-1),
        timeout,
        priority: h.election_priority.unwrap_or(i32::MAX),
    };
    front.controller.tell(BrokerHeartbeat { conn, beat });
}

/// The requests the state machine answers.
async fn state_request(front: &ControllerFront, conn: ConnId, code: Code, req: &RemotingCommand) -> RemotingCommand {
    match code {
        Code::GetNextBrokerId => {
            let h = match GetNextBrokerIdHeader::read(req) {
                Ok(h) => h,
                Err(e) => return header_error(e),
            };
            let op = Op::GetNextBrokerId { cluster: h.cluster_name.clone(), name: h.broker_name.clone() };
            match front.submit(conn, op).await {
                Ok(Answer::NextBrokerId(next)) => {
                    let r = NextBrokerIdResponse {
                        cluster_name: h.cluster_name,
                        broker_name: h.broker_name,
                        next_broker_id: Some(next),
                    };
                    success(Some(r.to_ext()))
                }
                other => unexpected(other, ErrorExt::None),
            }
        }
        Code::ApplyBrokerId => {
            let h = match ApplyBrokerIdHeader::read(req) {
                Ok(h) => h,
                Err(e) => return header_error(e),
            };
            let op = Op::ApplyBrokerId {
                cluster: h.cluster_name.clone(),
                name: h.broker_name.clone(),
                id: h.applied_broker_id,
                check_code: h.register_check_code.clone(),
            };
            let ext = ErrorExt::Group(&h.cluster_name, &h.broker_name);
            match front.submit(conn, op).await {
                Ok(Answer::IdApplied) => success(Some(group_ext(&h.cluster_name, &h.broker_name))),
                other => unexpected(other, ext),
            }
        }
        Code::RegisterBroker => {
            let h = match RegisterToControllerHeader::read(req) {
                Ok(h) => h,
                Err(e) => return header_error(e),
            };
            let op = Op::Register {
                cluster: h.cluster_name.clone(),
                name: h.broker_name.clone(),
                id: h.broker_id,
                address: h.broker_address.clone(),
            };
            let ext = ErrorExt::Group(&h.cluster_name, &h.broker_name);
            match front.submit(conn, op).await {
                Ok(Answer::Registered { master, set }) => {
                    success(Some(master.register_ext(&h.cluster_name, &h.broker_name))).with_body(set.encode())
                }
                other => unexpected(other, ext),
            }
        }
        _ => Box::pin(group_request(front, conn, code, req)).await,
    }
}

/// Elections, replica info, in-sync set changes, sync-state data and cleaning.
async fn group_request(front: &ControllerFront, conn: ConnId, code: Code, req: &RemotingCommand) -> RemotingCommand {
    match code {
        Code::ElectMaster => {
            let h = match ElectMasterHeader::read(req) {
                Ok(h) => h,
                Err(e) => return header_error(e),
            };
            let op = Op::ElectMaster { name: h.broker_name, requester: h.broker_id, designate: h.designate_elect };
            match front.submit(conn, op).await {
                Ok(Answer::Elected { master, body }) => success(Some(master.elect_ext())).with_body(body.encode()),
                Ok(Answer::MasterKept { master, body, remark }) => {
                    let code = ControllerResponseCode::MasterStillExist as i32;
                    response(code, Some(remark), Some(master.elect_ext())).with_body(body.encode())
                }
                other => unexpected(other, ErrorExt::Empty),
            }
        }
        Code::GetReplicaInfo => {
            let h = match GetReplicaInfoHeader::read(req) {
                Ok(h) => h,
                Err(e) => return header_error(e),
            };
            match front.submit(conn, Op::GetReplicaInfo { name: h.broker_name }).await {
                Ok(Answer::ReplicaInfo { master, set }) => {
                    success(Some(master.replica_info_ext())).with_body(set.encode())
                }
                other => unexpected(other, ErrorExt::Empty),
            }
        }
        Code::AlterSyncStateSet => {
            let h = match AlterSyncStateSetHeader::read(req) {
                Ok(h) => h,
                Err(e) => return header_error(e),
            };
            let Some(set) = req.body.as_deref().and_then(|b| SyncStateSet::decode(b).ok()) else {
                return response(
                    ResponseCode::SystemError as i32,
                    Some("bad or missing SyncStateSet body".into()),
                    None,
                );
            };
            let op = Op::AlterSyncStateSet {
                name: h.broker_name,
                master_id: h.master_broker_id,
                master_epoch: h.master_epoch,
                set,
            };
            match front.submit(conn, op).await {
                Ok(Answer::Altered(set)) => success(Some(alter_sync_state_set_ext(set.epoch))).with_body(set.encode()),
                other => unexpected(other, ErrorExt::AlterEpoch),
            }
        }
        _ => Box::pin(admin_request(front, conn, code, req)).await,
    }
}

/// Sync-state data (mqadmin's getSyncStateSet) and cleaning a group's data.
async fn admin_request(front: &ControllerFront, conn: ConnId, code: Code, req: &RemotingCommand) -> RemotingCommand {
    match code {
        Code::GetSyncStateData => {
            let names = req.body.as_deref().and_then(|b| decode_names(b).ok()).filter(|n| !n.is_empty());
            let Some(names) = names else {
                return response(ResponseCode::SystemError as i32, Some("not set any response code".into()), None);
            };
            match front.submit(conn, Op::GetSyncStateData { names }).await {
                Ok(Answer::SyncStateData(info)) => success(None).with_body(info.encode()),
                other => unexpected(other, ErrorExt::None),
            }
        }
        Code::CleanBrokerData => {
            let h = match CleanBrokerDataHeader::read(req) {
                Ok(h) => h,
                Err(e) => return header_error(e),
            };
            let op = Op::CleanBrokerData {
                cluster: h.cluster_name,
                name: h.broker_name,
                ids: h.broker_controller_ids_to_clean,
                clean_living: h.is_clean_living_broker.unwrap_or(false),
            };
            match front.submit(conn, op).await {
                Ok(Answer::Cleaned) => success(None),
                other => unexpected(other, ErrorExt::None),
            }
        }
        _ => response(
            ResponseCode::RequestCodeNotSupported as i32,
            Some(format!(" request type {} not supported", req.code)),
            None,
        ),
    }
}

/// A failure, or an answer of the wrong kind (never: each op has its own).
fn unexpected(outcome: Outcome, ext: ErrorExt) -> RemotingCommand {
    match outcome {
        Err(failure) => failed(failure, ext),
        Ok(other) => failed(Failure::Unavailable(format!("unexpected answer {other:?}")), ErrorExt::None),
    }
}

/// One warning per 10 s about refused peer frames.
fn peer_warnings() -> &'static RateLimit {
    static LIMIT: std::sync::OnceLock<RateLimit> = std::sync::OnceLock::new();
    LIMIT.get_or_init(|| RateLimit::new(1, std::time::Duration::from_secs(10)))
}

/// A Raft frame from a peer: from a peer's address, for this group and this peer, then served.
async fn peer_frame(front: &ControllerFront, origin: Origin, code: Code, req: &RemotingCommand) -> RemotingCommand {
    let invalid = |reason: String| {
        if let Some(suppressed) = peer_warnings().admit() {
            warn!(peer = %origin.peer, code = req.code, %reason, suppressed, "controller: raft frame refused");
        }
        response(ControllerResponseCode::InvalidRequest as i32, Some(reason), None)
    };
    if front.peer_ips.as_ref().is_some_and(|ips| !ips.contains(&origin.peer.ip())) {
        return invalid("raft frames are taken from the controller peers only".into());
    }
    let Some(header) = PeerHeader::read(req) else { return invalid("raft frame without group, from, to".into()) };
    if header.group != front.group || header.to != front.self_name {
        return invalid(format!(
            "raft frame for {}/{}, this is {}/{}",
            header.group, header.to, front.group, front.self_name
        ));
    }
    let Some(raft) = front.raft.get() else {
        return response(ResponseCode::SystemError as i32, Some("controller raft not started".into()), None);
    };
    match wire::serve(raft, code, req.body.as_deref().unwrap_or_default()).await {
        Ok(body) => success(None).with_body(body),
        Err(e) => invalid(e.to_string()),
    }
}
