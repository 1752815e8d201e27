//! Replication of the controller's state on openraft: the type configuration (here), the log
//! and vote on disk (`log`, written by the `io` thread), the state machine and its snapshots
//! (`machine`), the links to the other peers over the controller port (`network`, with its
//! frames in `wire`, signed and checked by `auth`). openraft types stay inside this module; the actor sees [`Raft`] and the
//! shared applied state.

pub mod auth;
pub mod io;
pub mod log;
pub mod machine;
pub mod network;
#[cfg(test)]
mod suite;
pub mod wire;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use namesrv_controller_core::{Applied, Command, ReplicaTables};

/// A controller peer: its Java id (`n0`) and its controller address.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Peer {
    /// The id from `controllerDLegerPeers` (`n0`).
    pub name: String,
    /// `host:port` of its controller listener.
    pub addr: String,
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.name, self.addr)
    }
}

openraft::declare_raft_types!(
    /// The controller's openraft types: entries carry one [`Command`], applying one gives an
    /// [`Applied`] per event, snapshots are the tables themselves.
    pub RaftTypes:
        D = Command,
        R = Vec<Applied>,
        NodeId = u64,
        Node = Peer,
        Entry = openraft::Entry<RaftTypes>,
        SnapshotData = ReplicaTables,
        AsyncRuntime = openraft::TokioRuntime,
);

/// The Raft handle of a controller peer.
pub type Raft = openraft::Raft<RaftTypes>;

/// A peer's Raft node id: FNV-1a 64 of its Java id, so ids stay stable when peers are listed in
/// another order or move to other addresses.
pub fn node_id(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The configured peers by node id.
pub fn members(peers: &[Peer]) -> BTreeMap<u64, Peer> {
    peers.iter().map(|p| (node_id(&p.name), p.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_are_stable_hashes_of_the_peer_names() {
        assert_eq!(node_id(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(node_id("a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(node_id("n0"), node_id("n1"));
    }
}
