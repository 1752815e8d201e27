//! Listening sockets: IPv4, IPv6 and dual-stack `::`, SO_REUSEADDR and Java's backlog, for the
//! remoting port and the HTTP endpoint alike.

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket, Type};
use tracing::debug;

use crate::settings::addr::{resolve, split_host_port};

/// Listen backlog, as Java's `serverSocketBacklog`.
const BACKLOG: i32 = 1024;

/// A non-blocking listener on `addr`; `::` is dual-stack where the OS allows it.
pub fn bind_std(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() && addr.ip().is_unspecified() {
        // `::` accepts IPv4 too (as ::ffff:a.b.c.d), as Java's dual-stack sockets do, where the
        // OS allows it; where it does not, `::` is IPv6 only.
        if let Err(error) = socket.set_only_v6(false) {
            debug!(%error, "dual-stack not available: listening on IPv6 only");
        }
    }
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// The first of `addrs` that binds (a host name resolves to several); `shown` names them in
/// errors.
pub fn bind_addrs(shown: &str, addrs: Vec<SocketAddr>) -> io::Result<std::net::TcpListener> {
    let mut last = io::Error::new(io::ErrorKind::InvalidInput, format!("no address to listen on for {shown}"));
    for addr in addrs {
        match bind_std(addr) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")),
        }
    }
    Err(last)
}

/// Binds `host:port` as a setting gives it (brackets around an IPv6 host).
pub fn bind_host_port(text: &str) -> io::Result<std::net::TcpListener> {
    let (host, port) = split_host_port(text)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad address {text}: {e}")))?;
    bind_addrs(text, resolve(&host, port)?)
}
