//! Addresses in settings and flags: hosts with or without IPv6 brackets (`::`, `[::]`,
//! `[fd00::5]`), `HOST:PORT` with `[v6]:port`, and turning them into socket addresses.

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use ipnet::IpNet;

use thiserror::Error;

/// An address that does not parse.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum AddrError {
    /// No port, or an IPv6 address whose port cannot be told apart from it.
    #[error("{0:?} is not HOST:PORT (IPv6 addresses go in brackets: [::1]:9876)")]
    NotHostPort(String),
    /// The port is not a number from 0 to 65535.
    #[error("bad port in {0:?}")]
    BadPort(String),
    /// The host is empty.
    #[error("empty host in {0:?}")]
    EmptyHost(String),
    /// A host with a colon that is not an IPv6 address.
    #[error("{0:?} is not an IPv6 address")]
    BadIpv6(String),
}

/// The host without IPv6 brackets: `[::1]` → `::1`; anything else unchanged.
pub fn unbracket(host: &str) -> &str {
    let host = host.trim();
    host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host)
}

/// Checks a configured host: an IPv4 address, an IPv6 address (bracketed or not) or a name.
pub fn check_host(host: &str) -> Result<(), AddrError> {
    let bare = unbracket(host);
    if bare.is_empty() {
        return Err(AddrError::EmptyHost(host.to_owned()));
    }
    if bare.contains(':') && bare.parse::<std::net::Ipv6Addr>().is_err() {
        return Err(AddrError::BadIpv6(host.to_owned()));
    }
    Ok(())
}

/// Splits `HOST:PORT` (`127.0.0.1:9876`, `[::1]:9876`, `[::]:0`, `namesrv-0.namesrv:9876`) into
/// the unbracketed host and the port. An unbracketed IPv6 address is refused: `::1:9876` is
/// itself a valid IPv6 address, so where its port starts cannot be told.
pub fn split_host_port(text: &str) -> Result<(String, u16), AddrError> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok((addr.ip().to_string(), addr.port()));
    }
    let (host, port) = text.rsplit_once(':').ok_or_else(|| AddrError::NotHostPort(text.to_owned()))?;
    if host.contains(':') && !host.starts_with('[') {
        return Err(AddrError::NotHostPort(text.to_owned()));
    }
    check_host(host)?;
    let port = port.parse().map_err(|_| AddrError::BadPort(text.to_owned()))?;
    Ok((unbracket(host).to_owned(), port))
}

/// The socket addresses of `host` (any form `check_host` accepts) and `port`: an IP address
/// as it is, a name through the system resolver.
pub fn resolve(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    let bare = unbracket(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let found: Vec<SocketAddr> = (bare, port).to_socket_addrs()?.collect();
    if found.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("{bare} resolves to no address")));
    }
    Ok(found)
}

/// A CIDR block, or a single address (as a /32 or /128).
pub fn parse_net(entry: &str) -> Option<IpNet> {
    let entry = entry.trim();
    entry.parse::<IpNet>().ok().or_else(|| entry.parse::<IpAddr>().ok().map(IpNet::from))
}

/// An entry of a network list that is neither a CIDR block nor an address.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0:?} is not an address or a CIDR block")]
pub struct NotANet(pub String);

/// A `,`- or `;`-separated list of CIDR blocks and addresses; the first entry that is neither
/// is the error.
pub fn parse_nets(list: &str) -> Result<Vec<IpNet>, NotANet> {
    let entries = list.split([',', ';']).map(str::trim).filter(|e| !e.is_empty());
    entries.map(|e| parse_net(e).ok_or_else(|| NotANet(e.to_owned()))).collect()
}

/// How far above the remoting port the HTTP endpoint listens by default: 9876 → 9880.
pub const HTTP_PORT_OFFSET: u16 = 4;

/// `host:port`, with brackets around an IPv6 host (`[::1]:9880`); `host` may come bracketed.
pub fn join_host_port(host: &str, port: u16) -> String {
    let bare = unbracket(host);
    if bare.contains(':') {
        format!("[{bare}]:{port}")
    } else {
        format!("{bare}:{port}")
    }
}

/// The HTTP endpoint's address when `http_listen` is not set: the remoting listener's host,
/// port + [`HTTP_PORT_OFFSET`] (0 stays 0: both ephemeral). `None` past port 65535.
pub fn default_http_listen(bind_address: &str, listen_port: u16) -> Option<String> {
    let port = match listen_port {
        0 => 0,
        port => port.checked_add(HTTP_PORT_OFFSET)?,
    };
    Some(join_host_port(bind_address, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports_split_with_or_without_ipv6_brackets() {
        assert_eq!(split_host_port("127.0.0.1:9876"), Ok(("127.0.0.1".into(), 9876)));
        assert_eq!(split_host_port("[::1]:9876"), Ok(("::1".into(), 9876)));
        assert_eq!(split_host_port("[::]:0"), Ok(("::".into(), 0)));
        assert_eq!(split_host_port("namesrv-0.namesrv:9876"), Ok(("namesrv-0.namesrv".into(), 9876)));
        assert!(matches!(split_host_port("::1:9876"), Err(AddrError::NotHostPort(_))));
        assert!(matches!(split_host_port("127.0.0.1"), Err(AddrError::NotHostPort(_))));
        assert!(matches!(split_host_port("127.0.0.1:x"), Err(AddrError::BadPort(_))));
        assert!(matches!(split_host_port("[fd00::zz]:1"), Err(AddrError::BadIpv6(_))));
        assert!(matches!(split_host_port(":1"), Err(AddrError::EmptyHost(_))));
    }

    #[test]
    fn the_http_endpoint_follows_the_remoting_listener_four_ports_up() {
        assert_eq!(default_http_listen("0.0.0.0", 9876).as_deref(), Some("0.0.0.0:9880"));
        assert_eq!(default_http_listen("127.0.0.1", 0).as_deref(), Some("127.0.0.1:0"));
        assert_eq!(default_http_listen("::1", 19876).as_deref(), Some("[::1]:19880"));
        assert_eq!(default_http_listen("[::]", 9876).as_deref(), Some("[::]:9880"));
        assert_eq!(default_http_listen("namesrv-0.namesrv", 9876).as_deref(), Some("namesrv-0.namesrv:9880"));
        assert_eq!(default_http_listen("127.0.0.1", 65531).as_deref(), Some("127.0.0.1:65535"));
        assert_eq!(default_http_listen("127.0.0.1", 65532), None);
    }

    #[test]
    fn ip_addresses_resolve_as_they_are_bracketed_or_not() {
        let v6: SocketAddr = "[::]:9876".parse().unwrap();
        assert_eq!(resolve("::", 9876).unwrap(), vec![v6]);
        assert_eq!(resolve("[::]", 9876).unwrap(), vec![v6]);
        assert_eq!(resolve("0.0.0.0", 1).unwrap(), vec!["0.0.0.0:1".parse().unwrap()]);
        assert!(check_host("[::1]").is_ok() && check_host("::").is_ok() && check_host("a.b").is_ok());
        assert!(check_host("fd00::5::1").is_err());
    }
}
