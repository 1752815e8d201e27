//! What the controller port takes from outside the state machine's requests: the brokers'
//! heartbeats (oneway, told to the controller actor) and the Raft frames of the other peers
//! (from a peer's address, for this group and this peer, signed by that peer's key, asking
//! votes and leading in its own name; then served on the Raft handle, the answer signed).

use std::time::Duration;

use namesrv_controller_core::bounds::{check_text, MAX_NAME_BYTES};
use namesrv_controller_core::liveness::{Beat, LiveKey, DEFAULT_TIMEOUT};
use tracing::warn;

use super::reply::{success, ControllerError};
use super::Front;
use crate::controller::messages::{BrokerHeartbeat, Speaker};
use crate::controller::raft::auth::wall_ms;
use crate::controller::raft::node_id;
use crate::controller::raft::wire::{self, PeerHeader};
use crate::origin::Origin;
use crate::protocol::controller::header::ControllerHeartbeatHeader;
use crate::protocol::controller::ControllerRequestCode as Code;
use crate::protocol::RemotingCommand;
use crate::ratelog::RateLimit;

/// The longest heartbeat timeout a broker may name: a day.
const MAX_HEARTBEAT_TIMEOUT_MS: i64 = 86_400_000;

/// BROKER_HEARTBEAT: never answered (oneway); without brokerId Java answers 2005, unsent. Names
/// and an address past the tables' bounds are dropped here (no replica could have them); the
/// controller clamps the timeout and hears only the replica's owner.
pub(super) fn heartbeat(front: &Front, from: Speaker, req: &RemotingCommand) {
    let Ok(h) = ControllerHeartbeatHeader::read(req) else { return };
    let Some(id) = h.broker_id else { return };
    let fields = [("clusterName", &h.cluster_name), ("brokerName", &h.broker_name), ("brokerAddr", &h.broker_addr)];
    if fields.iter().any(|(field, value)| check_text(field, value, MAX_NAME_BYTES).is_err()) {
        return;
    }
    let timeout = h
        .heartbeat_timeout_mills
        .filter(|ms| *ms > 0)
        .map_or(DEFAULT_TIMEOUT, |ms| Duration::from_millis(ms.min(MAX_HEARTBEAT_TIMEOUT_MS) as u64));
    let beat = Beat {
        key: LiveKey { cluster: h.cluster_name, name: h.broker_name, id },
        addr: h.broker_addr,
        epoch: h.epoch.unwrap_or(-1),
        max_offset: h.max_offset.unwrap_or(-1),
        confirm_offset: h.confirm_offset.unwrap_or(-1),
        timeout,
        priority: h.election_priority.unwrap_or(i32::MAX),
    };
    front.controller.tell(BrokerHeartbeat { conn: from.conn, beat, account: from.account });
}

/// One warning per 10 s about refused peer frames.
fn peer_warnings() -> &'static RateLimit {
    static LIMIT: std::sync::OnceLock<RateLimit> = std::sync::OnceLock::new();
    LIMIT.get_or_init(|| RateLimit::new(1, Duration::from_secs(10)))
}

/// A Raft frame from a peer: from a peer's address, for this group and this peer, signed by the
/// peer it names, then served and the answer signed.
pub(super) async fn raft_frame(
    front: &Front,
    origin: Origin,
    code: Code,
    req: &RemotingCommand,
) -> Result<RemotingCommand, ControllerError> {
    let invalid = |reason: String| {
        if let Some(suppressed) = peer_warnings().admit() {
            warn!(peer = %origin.peer, code = req.code, %reason, suppressed, "controller: raft frame refused");
        }
        ControllerError::PeerFrame(reason)
    };
    if front.peer_ips.as_ref().is_some_and(|ips| !ips.contains(&origin.peer.ip())) {
        return Err(invalid("raft frames are taken from the controller peers only".into()));
    }
    let Some(header) = PeerHeader::read(req) else {
        return Err(invalid("raft frame without group, from, to".into()));
    };
    if header.group != front.group || header.to != front.self_name {
        let (group, to, me) = (&header.group, &header.to, &front.self_name);
        return Err(invalid(format!("raft frame for {group}/{to}, this is {}/{me}", front.group)));
    }
    if !front.peer_names.contains(&header.from) {
        return Err(invalid(format!("raft frame from {:?}, not a peer of this group", header.from)));
    }
    let frame_sig = front.auth.check_frame(header.route(code), req, wall_ms()).map_err(|e| invalid(e.to_string()))?;
    let raft = front.raft.get().ok_or(ControllerError::RaftNotStarted)?;
    match wire::serve(raft, code, req.body.as_deref().unwrap_or_default(), node_id(&header.from)).await {
        Ok(body) => {
            let mut answer = success(None).with_body(body);
            front.auth.sign_answer(&mut answer, (&front.self_name, &header.from), &frame_sig);
            Ok(answer)
        }
        Err(e) => Err(invalid(e.to_string())),
    }
}
