//! Where a request comes from: the connection that carried it ([`ConnId`]) and the peer's
//! address ([`Origin`]). Plain values, shared by every layer that logs or routes by connection.

use std::fmt;
use std::net::SocketAddr;

/// Identifies one TCP connection for the life of the process; [`ConnId::SERVER`] is the server
/// itself (requests it makes of its own actors: start-up, HTTP, timers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ConnId(pub u64);

impl ConnId {
    /// The server itself, not a peer: the id of every request no connection carried.
    pub const SERVER: ConnId = ConnId(0);
}

impl fmt::Display for ConnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a request came from: its connection and the peer's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The connection.
    pub conn: ConnId,
    /// The peer's address.
    pub peer: SocketAddr,
}
