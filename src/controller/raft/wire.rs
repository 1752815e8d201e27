//! Raft RPCs as remoting frames on the controller port: private request codes 1901–1903
//! (unused by RocketMQ 5.3.3), extFields naming the Raft group and both peers, serde_json
//! bodies both ways; the answer's body is the callee's `Result`, so a remote Raft error comes
//! back as itself. [`serve`] runs an incoming RPC against this peer's Raft, once it is sure the
//! sender asks votes and leads in its own name.

use openraft::raft::{AppendEntriesRequest, VoteRequest};
use openraft::storage::Snapshot;
use openraft::{SnapshotMeta, Vote};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{Peer, Raft, RaftTypes};
use crate::protocol::controller::ControllerRequestCode as Code;
use crate::protocol::{ExtFields, RemotingCommand};
use namesrv_controller_core::ReplicaTables;

/// Who sends a peer frame to whom, in which Raft group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerHeader {
    /// `controllerDLegerGroup`: peers of another group are refused.
    pub group: String,
    /// The sender's peer id.
    pub from: String,
    /// The receiver's peer id.
    pub to: String,
}

impl PeerHeader {
    /// The extFields of a peer request.
    pub fn to_ext(&self) -> ExtFields {
        ExtFields::new().with("group", &self.group).with("from", &self.from).with("to", &self.to)
    }

    /// What a frame of `code` with this header is signed for: its code, group, sender, receiver.
    pub fn route(&self, code: Code) -> [&str; 4] {
        [code.name(), &self.group, &self.from, &self.to]
    }

    /// Reads the fields of a peer request.
    pub fn read(cmd: &RemotingCommand) -> Option<PeerHeader> {
        Some(PeerHeader {
            group: cmd.ext("group")?.to_owned(),
            from: cmd.ext("from")?.to_owned(),
            to: cmd.ext("to")?.to_owned(),
        })
    }
}

/// A whole snapshot sent to a lagging peer (code 1903).
#[derive(Debug, Serialize, Deserialize)]
pub struct SnapshotRequest {
    /// The leader's vote.
    pub vote: Vote<u64>,
    /// What the snapshot covers.
    pub meta: SnapshotMeta<u64, Peer>,
    /// The tables.
    pub data: ReplicaTables,
}

/// A peer frame that cannot be served.
#[derive(Debug, Error)]
pub enum WireError {
    /// The body does not decode.
    #[error("bad raft frame body: {0}")]
    Body(#[from] serde_json::Error),
    /// Not a peer code.
    #[error("not a raft code: {0}")]
    NotRaft(i32),
    /// The frame speaks for another peer than the one that signed it.
    #[error("raft frame from node {sender} in the name of node {claimed:?}")]
    Impersonation { sender: u64, claimed: Option<u64> },
}

/// Refuses a vote that is not `sender`'s own: a peer asks votes and leads for itself only.
fn own_vote(vote: &Vote<u64>, sender: u64) -> Result<(), WireError> {
    match vote.leader_id().voted_for() {
        Some(claimed) if claimed == sender => Ok(()),
        claimed => Err(WireError::Impersonation { sender, claimed }),
    }
}

/// Serves one incoming peer RPC of `code` with `body`, sent (and signed) by node `sender`, on
/// `raft`; the answer's body.
pub async fn serve(raft: &Raft, code: Code, body: &[u8], sender: u64) -> Result<Vec<u8>, WireError> {
    Ok(match code {
        Code::RaftAppendEntries => {
            let rpc: AppendEntriesRequest<RaftTypes> = serde_json::from_slice(body)?;
            own_vote(&rpc.vote, sender)?;
            serde_json::to_vec(&raft.append_entries(rpc).await)?
        }
        Code::RaftVote => {
            let rpc: VoteRequest<u64> = serde_json::from_slice(body)?;
            own_vote(&rpc.vote, sender)?;
            serde_json::to_vec(&raft.vote(rpc).await)?
        }
        Code::RaftInstallSnapshot => {
            let rpc: SnapshotRequest = serde_json::from_slice(body)?;
            own_vote(&rpc.vote, sender)?;
            let snapshot = Snapshot { meta: rpc.meta, snapshot: Box::new(rpc.data) };
            serde_json::to_vec(&raft.install_full_snapshot(rpc.vote, snapshot).await)?
        }
        other => return Err(WireError::NotRaft(other as i32)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_asks_votes_and_leads_in_its_own_name_only() {
        let vote = Vote::new(7, 42);
        assert!(own_vote(&vote, 42).is_ok());
        assert!(matches!(own_vote(&vote, 43), Err(WireError::Impersonation { sender: 43, claimed: Some(42) })));
    }
}
