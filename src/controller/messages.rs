//! Every message the controller actor takes from connections, one struct each, and what a
//! request comes to when it is not an answer of the state machine ([`Failure`]).

use std::time::Duration;

use thiserror::Error;
use tokio::sync::oneshot;

use super::raft::Peer;
use crate::origin::ConnId;
use crate::peers::PeerKey;
use crate::protocol::controller::response::MetadataResponse;
use crate::request;
use namesrv_controller_core::decide::{Answer, Op, Refusal};
use namesrv_controller_core::liveness::{Beat, Inactivity};

/// Why a request got no answer of the state machine.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum Failure {
    /// The state machine refused it (Java's code and remark).
    #[error("{}", .0.remark)]
    Refused(Refusal),
    /// This node is not the serving leader (CONTROLLER_NOT_LEADER).
    #[error("The controller is not in leader state")]
    NotLeader,
    /// The queue of writes waiting for their turn is full.
    #[error("controller busy: {0} writes waiting")]
    Busy(usize),
    /// The write was not committed in time; it may still commit.
    #[error("write not committed within {} ms (leader {leader}, term {term}); no quorum?", .waited.as_millis())]
    NotCommitted { waited: Duration, leader: String, term: u64 },
    /// The state changed between the decision and its commit (should not happen: one write at a time).
    #[error("controller state changed while the write was committed; retry")]
    Stale,
    /// Raft failed (the node is shutting down or its storage failed), or the actor is gone.
    #[error("controller unavailable: {0}")]
    Unavailable(Unavailable),
}

/// Why the controller could not be asked or could not commit.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum Unavailable {
    /// The actor stopped before it answered.
    #[error("controller stopped")]
    Stopped,
    /// The actor's mailbox is closed or full.
    #[error(transparent)]
    Mailbox(#[from] actix::MailboxError),
    /// Raft refused the write (shutting down, or its storage failed).
    #[error(transparent)]
    Raft(#[from] Box<RaftWriteError>),
}

/// What openraft answers a write that failed.
pub type RaftWriteError = openraft::error::RaftError<u64, openraft::error::ClientWriteError<u64, Peer>>;

/// Why the controller started an election.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElectionCause {
    /// The master became inactive on this node.
    Inactive(Inactivity),
    /// The sweep found the master dead.
    Sweep,
}

impl ElectionCause {
    /// The cause as logs and metrics name it.
    pub fn name(self) -> &'static str {
        match self {
            ElectionCause::Inactive(inactive) => inactive.name(),
            ElectionCause::Sweep => "sweep",
        }
    }
}

/// What a request to the controller's state comes to.
pub type Outcome = Result<Answer, Failure>;

/// Who sent a request or heartbeat: its connection, the account that signed it (when access
/// control checked one), and its source (what its share of the controller is counted by).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speaker {
    /// The connection.
    pub conn: ConnId,
    /// The signing account.
    pub account: Option<String>,
    /// The source, as shares are counted.
    pub source: PeerKey,
}

impl Speaker {
    /// The server itself (its own requests and tests).
    pub fn server() -> Self {
        Speaker { conn: ConnId::SERVER, account: None, source: PeerKey::from(std::net::IpAddr::from([127, 0, 0, 1])) }
    }
}

/// A request to the state machine: decided on the serving leader, committed first when it
/// changes anything, answered through the receiver the actor returns.
#[derive(Debug)]
pub struct Submit {
    pub conn: ConnId,
    pub op: Op,
    /// Who sent it.
    pub from: Speaker,
}
request!(Submit, oneshot::Receiver<Outcome>);

/// A BROKER_HEARTBEAT: the broker is alive, here and now.
#[derive(Debug)]
pub struct BrokerHeartbeat {
    pub conn: ConnId,
    pub beat: Beat,
    /// The account that signed it, when access control checked one.
    pub account: Option<String>,
}
request!(BrokerHeartbeat, ());

/// A controller connection closed: brokers whose heartbeats came over it are inactive at once.
#[derive(Debug)]
pub struct ChannelClosed {
    pub conn: ConnId,
}
request!(ChannelClosed, ());

/// The server stops: this peer stops serving and electing before any connection closes (the
/// closes that follow are no broker's loss); answered with the Raft handle to shut down.
#[derive(Debug)]
pub struct Retire {
    pub conn: ConnId,
}
request!(Retire, Option<crate::controller::raft::Raft>);

/// CONTROLLER_GET_METADATA_INFO: who leads, as this node knows it.
#[derive(Debug)]
pub struct GetMetadata {
    pub conn: ConnId,
}
request!(GetMetadata, MetadataResponse, query);
