//! Listening sockets: IPv4, IPv6 and dual-stack `::`, SO_REUSEADDR and Java's backlog, for the
//! remoting port and the HTTP endpoint alike; and how many connections the open-file limit
//! leaves room for.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};
use tracing::{debug, info, warn};

use crate::peers::{Peers, Share, Shares};
use crate::ratelog::RateLimit;
use crate::settings::addr::{resolve, split_host_port};

/// Listen backlog, as Java's `serverSocketBacklog` (GET_NAMESRV_CONFIG reports it).
pub const BACKLOG: i32 = 1024;

/// How long shutdown waits for connections to answer what they have in flight: Java's
/// `shutdownWaitTimeSeconds` here (GET_NAMESRV_CONFIG reports it).
pub const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

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

/// Descriptors kept free for state files (KV store and journal, snapshots, the lock, the
/// security files being reloaded) when the connection limit comes from the open-file limit,
/// beside those the HTTP endpoint may hold (`http_max_connections`).
pub const STATE_FD_RESERVE: u64 = 32;

/// The connection limit when neither the settings nor the OS set one.
const UNLIMITED_CONNECTIONS: usize = 1 << 20;

/// How many remoting connections may be open at once, logged once: `configured`, or with 0 what
/// the open-file soft limit leaves after the descriptors open now, `http_connections` and
/// [`STATE_FD_RESERVE`]; never more than that, so that the HTTP endpoint and the state files
/// always find a descriptor.
pub fn connection_limit(configured: usize, http_connections: usize) -> usize {
    let soft = rlimit::getrlimit(rlimit::Resource::NOFILE).ok().map(|(soft, _)| soft);
    let soft = soft.filter(|s| *s != rlimit::INFINITY);
    let open = open_fds();
    let reserve = STATE_FD_RESERVE + http_connections as u64;
    let limit = max_connections(configured, soft, open.unwrap_or(0) + reserve);
    if limit < configured {
        warn!(configured, max_connections = limit, fd_soft_limit = ?soft, "max_connections lowered to fit the open-file limit");
    }
    info!(max_connections = limit, fd_soft_limit = ?soft, open_fds = ?open, http_connections, state_fd_reserve = STATE_FD_RESERVE, "connection limit");
    limit
}

/// The limit for `configured` (0: from the fds) with a soft limit of `soft` and `held` fds open
/// or kept for others.
fn max_connections(configured: usize, soft: Option<u64>, held: u64) -> usize {
    let from_fds = soft.map(|s| usize::try_from(s.saturating_sub(held)).unwrap_or(usize::MAX).max(1));
    match (configured, from_fds) {
        (0, Some(n)) => n,
        (0, None) => UNLIMITED_CONNECTIONS,
        (c, Some(n)) => c.min(n),
        (c, None) => c,
    }
}

/// How many descriptors this process has open, where the OS tells (Linux: `/proc/self/fd`).
fn open_fds() -> Option<u64> {
    std::fs::read_dir("/proc/self/fd").ok().map(|dir| dir.count() as u64)
}

/// The first pause after a failed accept; each failure in a row doubles it, up to the max.
const ACCEPT_PAUSE_MIN: Duration = Duration::from_millis(10);
/// The longest pause after failed accepts.
const ACCEPT_PAUSE_MAX: Duration = Duration::from_secs(1);

/// What the accept loop does at the connection limit and when accepting fails, with one warn
/// line per 10 s for each (the next line counts those left out).
#[derive(Debug)]
pub struct AcceptGate {
    max_connections: usize,
    /// The most connections one source address may hold (`peer_share_percent`).
    peer_max: usize,
    /// Past this many open, a new connection is on the broker reserve: its first request must
    /// register a broker (`broker_reserve_percent`).
    general_max: usize,
    /// What each source address holds.
    peers: Arc<Peers>,
    over_limit: RateLimit,
    over_share: RateLimit,
    failures: RateLimit,
    pause: Duration,
}

/// A connection let in, with what it draws on.
#[derive(Debug)]
pub struct Admitted {
    /// Its share of the budgets, counted among its address's connections.
    pub share: Share,
    /// It took a slot of the broker reserve: its first request must register a broker.
    pub on_reserve: bool,
}

impl AcceptGate {
    /// A gate letting at most `max_connections` be open, shared out as `shares` say among the
    /// source addresses of `peers`.
    pub fn new(max_connections: usize, shares: Shares, peers: Arc<Peers>) -> Self {
        let every_10s = || RateLimit::new(1, Duration::from_secs(10));
        let part = |percent: u32| (max_connections as u128 * u128::from(percent.min(100)) / 100) as usize;
        AcceptGate {
            max_connections,
            peer_max: part(shares.peer_percent).max(1),
            general_max: max_connections - part(shares.broker_reserve_percent),
            peers,
            over_limit: every_10s(),
            over_share: every_10s(),
            failures: every_10s(),
            pause: ACCEPT_PAUSE_MIN,
        }
    }

    /// Whether a connection just accepted from `peer`, with `open` others open, is served, and
    /// what it draws on. One over the limit, or from an address holding its share of it, is
    /// refused, and the caller closes it at once: the descriptor it holds is one the HTTP probes
    /// and the state files may need, and the slot one another address may need.
    pub fn admit(&mut self, open: usize, peer: SocketAddr) -> Option<Admitted> {
        self.pause = ACCEPT_PAUSE_MIN;
        if open >= self.max_connections {
            if let Some(suppressed) = self.over_limit.admit() {
                let max_connections = self.max_connections;
                warn!(%peer, open, max_connections, suppressed, "connection closed: max_connections reached");
            }
            return None;
        }
        let holding = self.peers.holding(peer.ip());
        let held = holding.connections.load(std::sync::atomic::Ordering::Relaxed);
        if held >= self.peer_max {
            if let Some(suppressed) = self.over_share.admit() {
                let peer_max = self.peer_max;
                warn!(%peer, held, peer_max, suppressed, "connection closed: this address holds its share of max_connections (peer_share_percent)");
            }
            return None;
        }
        Some(Admitted { share: Share::new(holding), on_reserve: open >= self.general_max })
    }

    /// How long to pause after a failed accept (usually out of file descriptors), from 10 ms
    /// doubling with each failure in a row to 1 s.
    pub fn failed(&mut self, error: &io::Error) -> Duration {
        let pause = self.pause;
        if let Some(suppressed) = self.failures.admit() {
            warn!(%error, pause_ms = pause.as_millis() as u64, suppressed, "accept failed");
        }
        self.pause = (pause * 2).min(ACCEPT_PAUSE_MAX);
        pause
    }
}

/// Binds `host:port` as a setting gives it (brackets around an IPv6 host).
pub fn bind_host_port(text: &str) -> io::Result<std::net::TcpListener> {
    let (host, port) = split_host_port(text)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad address {text}: {e}")))?;
    bind_addrs(text, resolve(&host, port)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_limit_leaves_the_reserve_and_what_is_open_under_the_fd_limit() {
        assert_eq!(max_connections(0, Some(1024), 104), 1024 - 104);
        assert_eq!(max_connections(8, Some(1024), 104), 8);
        assert_eq!(max_connections(5000, Some(1024), 104), 920, "lowered to fit");
        assert_eq!(max_connections(0, Some(64), 104), 1, "never 0");
        assert_eq!(max_connections(0, None, 40), UNLIMITED_CONNECTIONS);
        assert_eq!(max_connections(7, None, 40), 7);
        assert!(open_fds().is_none_or(|n| n >= 3), "stdin, stdout, stderr at least");
    }

    #[test]
    fn the_gate_refuses_at_the_limit_and_failed_accepts_back_off_to_a_second() {
        let peer: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let mut gate = AcceptGate::new(2, Shares::NONE, Arc::default());
        let first = gate.admit(1, peer);
        assert!(first.is_some() && gate.admit(2, peer).is_none() && gate.admit(3, peer).is_none());
        let error = io::Error::from_raw_os_error(24);
        let pauses: Vec<u64> = (0..9).map(|_| gate.failed(&error).as_millis() as u64).collect();
        assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        assert!(gate.admit(0, peer).is_some());
        assert_eq!(gate.failed(&error), ACCEPT_PAUSE_MIN, "an accepted connection resets the pause");
    }

    #[test]
    fn one_address_holds_at_most_its_share_of_the_slots_and_the_last_ones_are_kept_for_brokers() {
        let shares = Shares { peer_percent: 25, broker_reserve_percent: 20 };
        let mut gate = AcceptGate::new(20, shares, Arc::default());
        let (attacker, honest): (SocketAddr, SocketAddr) =
            ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:1".parse().unwrap());
        let held: Vec<Admitted> = (0..5).map_while(|open| gate.admit(open, attacker)).collect();
        assert_eq!(held.len(), 5, "25% of 20");
        assert!(gate.admit(5, attacker).is_none(), "over its share");
        assert!(gate.admit(5, honest).is_some_and(|a| !a.on_reserve), "another address still gets in");
        assert!(gate.admit(16, honest).is_some_and(|a| a.on_reserve), "past 80% open: the broker reserve");
        drop(held);
        assert!(gate.admit(5, attacker).is_some(), "a closed connection gives its slot back");
    }
}
