//! The controller service behind the controller port (Java's `ControllerRequestProcessor`):
//! each request admitted through the gate as `policy` describes it; a state request read as the
//! state machine's operation (`op`), sent to the controller actor and answered in Java's exact
//! shape (`reply`, which holds this service's one mapping from failure to response code); the
//! configuration codes (`config`); the brokers' heartbeats and the other peers' Raft frames
//! (`peer`). A connection that carried heartbeats tells the actor when it closes: those brokers
//! are inactive at once.

mod config;
mod op;
mod peer;
pub mod policy;
mod reply;

use std::collections::HashSet;
use std::future::Future;
use std::net::IpAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use namesrv_controller_core::decide::Op;

use self::reply::{answered, ControllerError, ErrorShape};
use crate::admission::Gate;
use crate::controller::messages::{ChannelClosed, Failure, GetMetadata, Speaker, Submit, Unavailable};
use crate::controller::raft::auth::PeerAuth;
use crate::controller::{ControllerHandle, SharedRaft};
use crate::metrics::{controller_code_name, Listener};
use crate::origin::Origin;
use crate::peers::PeerKey;
use crate::protocol::controller::ControllerRequestCode as Code;
use crate::protocol::{RemotingCommand, ResponseCode};
use crate::service::{Opening, Outstanding, Reply, Service, Session, Stamp, Step};

/// What the controller service fronts.
pub struct Front {
    /// The controller actor.
    pub controller: ControllerHandle,
    /// This peer's Raft, for peer frames.
    pub raft: SharedRaft,
    /// The Raft group's name.
    pub group: String,
    /// This peer's id.
    pub self_name: String,
    /// Addresses peer frames are taken from; `None`: any.
    pub peer_ips: Option<HashSet<IpAddr>>,
    /// The other peers' ids, the only senders of peer frames.
    pub peer_names: HashSet<String>,
    /// This peer's key and the keys it pinned: every peer frame is checked, every answer signed.
    pub auth: Arc<PeerAuth>,
}

/// The controller service. Cheap to clone.
#[derive(Clone)]
pub struct ControllerService {
    front: Arc<Front>,
    /// The admission layer every request passes.
    gate: Arc<Gate>,
    /// How replies are stamped.
    stamp: Stamp,
}

impl ControllerService {
    /// The service in front of `front`, behind `gate`, stamping replies with `stamp`.
    pub fn new(front: Front, gate: Arc<Gate>, stamp: Stamp) -> Self {
        ControllerService { front: Arc::new(front), gate, stamp }
    }

    /// Handles one request, signed by `account` when access control checked it; `None` for a
    /// heartbeat (oneway, never answered).
    async fn request(&self, from: Speaker, origin: Origin, req: &RemotingCommand) -> Option<RemotingCommand> {
        let served = Code::from_i32(req.code)
            .filter(|c| !matches!(c, Code::NotifyBrokerRoleChanged | Code::GetBrokerEpochCache));
        let Some(code) = served else {
            return Some(ControllerError::NotSupported(req.code).response(ErrorShape::Bare));
        };
        let front = &*self.front;
        let answer = match code {
            Code::BrokerHeartbeat => {
                peer::heartbeat(front, from, req);
                return None;
            }
            Code::GetMetadataInfo => match front.controller.ask(GetMetadata { conn: origin.conn }).await {
                Ok(meta) => Ok(reply::success(Some(meta.to_ext()))),
                Err(e) => Err(Failure::Unavailable(Unavailable::Mailbox(e)).into()),
            },
            Code::RaftAppendEntries | Code::RaftVote | Code::RaftInstallSnapshot => {
                peer::raft_frame(front, origin, code, req).await
            }
            Code::GetControllerConfig => config::get(&front.controller, origin).await,
            Code::UpdateControllerConfig => config::update(&front.controller, origin, req).await,
            _ => return Some(Box::pin(self.state_request(from, code, req)).await),
        };
        Some(answer.unwrap_or_else(|e| e.response(ErrorShape::Bare)))
    }

    /// A request the state machine answers: read as its operation, then decided (and committed)
    /// by the controller actor.
    async fn state_request(&self, from: Speaker, code: Code, req: &RemotingCommand) -> RemotingCommand {
        let op = match op::op_of(code, req) {
            Some(Ok(op)) => op,
            Some(Err(e)) => return e.response(ErrorShape::Bare),
            None => return ControllerError::NotSupported(req.code).response(ErrorShape::Bare),
        };
        let shape = ErrorShape::of(&op);
        match self.submit(from, op).await {
            Ok(answer) => answered(answer),
            Err(failure) => ControllerError::Failed(failure).response(shape),
        }
    }

    /// Sends `op` to the controller actor and waits for its outcome.
    async fn submit(&self, from: Speaker, op: Op) -> Result<namesrv_controller_core::decide::Answer, Failure> {
        let asked = self.front.controller.ask(Submit { conn: from.conn, op, from }).await;
        let answer = asked.map_err(|e| Failure::Unavailable(Unavailable::Mailbox(e)))?;
        answer.await.unwrap_or(Err(Failure::Unavailable(Unavailable::Stopped)))
    }
}

impl Service for ControllerService {
    type Thread = ();
    type Session = ControllerSession;

    fn thread(&self) {}

    fn open(&self, _: &Rc<()>, opening: Opening) -> ControllerSession {
        ControllerSession { service: self.clone(), origin: opening.origin }
    }
}

/// One connection's side of the controller service.
pub struct ControllerSession {
    service: ControllerService,
    origin: Origin,
}

/// A request the gate admitted, with who signed it.
pub struct Admitted {
    request: RemotingCommand,
    account: Option<String>,
}

impl Session for ControllerSession {
    type Admitted = Admitted;

    const LISTENER: Listener = Listener::Controller;

    fn code_name(code: i32) -> &'static str {
        Code::from_i32(code).map_or("UNKNOWN", controller_code_name)
    }

    fn claims_reserve(_: i32) -> bool {
        false
    }

    fn admit(&mut self, request: RemotingCommand, begin: Instant) -> Step<Admitted> {
        let outstanding = Outstanding::of(&request, begin, self.service.front.controller.depth());
        let guard = policy::guard(&request);
        let admitted = self.service.gate.admit(&self.origin, &request, &guard);
        if let Err(denied) = admitted {
            let reply = match outstanding.oneway {
                true => Reply::Nothing,
                false => {
                    let refused = RemotingCommand::response(ResponseCode::NoPermission, Some(denied.to_string()));
                    Reply::Command(self.service.stamp.stamp(refused, outstanding.opaque, outstanding.header))
                }
            };
            return Step::Answered(outstanding, reply);
        }
        let account = admitted.ok().and_then(|caller| caller.binding());
        Step::Handle { outstanding, admitted: Admitted { request, account }, quiet: false }
    }

    fn handle(&self, admitted: Admitted) -> impl Future<Output = Reply> + 'static {
        let (service, origin) = (self.service.clone(), self.origin);
        let Admitted { request, account } = admitted;
        let from = Speaker { conn: origin.conn, account, source: PeerKey::from(origin.peer.ip()) };
        async move {
            match service.request(from, origin, &request).await {
                Some(response) => Reply::Command(service.stamp.stamp(response, request.opaque, request.serialize_type)),
                None => Reply::Nothing,
            }
        }
    }

    fn closed(&mut self) {
        self.service.front.controller.tell(ChannelClosed { conn: self.origin.conn });
    }
}
