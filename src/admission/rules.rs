//! How a signed request arrived, beyond its signature (each rule off unless configured): admin
//! requests over TLS only (`acl_admin_requires_tls`), and a broker's announced address on the
//! peer's own IP (`acl_broker_addr_matches_peer`), on every port alike.

use std::net::IpAddr;

use super::Guard;
use crate::acl::verify::Denied;
use crate::limits::shown;
use crate::origin::Origin;
use crate::protocol::RemotingCommand;
use crate::settings::Settings;

/// The rules in force.
#[derive(Debug, Clone, Copy, Default)]
pub struct TransportRules {
    /// Admin requests are refused over plain TCP.
    pub admin_requires_tls: bool,
    /// Requests announcing a broker address are refused unless its host is the peer's IP.
    pub broker_addr_matches_peer: bool,
}

impl TransportRules {
    /// The rules `settings` turn on.
    pub fn of(settings: &Settings) -> Self {
        TransportRules {
            admin_requires_tls: settings.acl.acl_admin_requires_tls,
            broker_addr_matches_peer: settings.acl.acl_broker_addr_matches_peer,
        }
    }

    /// Checks that `req`, which `guard` describes, arrived as the rules require, from `origin`.
    pub fn check(&self, origin: &Origin, req: &RemotingCommand, guard: &Guard) -> Result<(), Denied> {
        if self.admin_requires_tls && !origin.tls && guard.admin {
            return Err(Denied::AdminNeedsTls(req.code));
        }
        if let Some(field) = guard.announced_addr.filter(|_| self.broker_addr_matches_peer) {
            let peer = origin.peer.ip().to_canonical();
            let addr = req.ext(field).unwrap_or_default();
            if host_ip(addr) != Some(peer) {
                return Err(Denied::BrokerAddrNotPeer { addr: shown(addr), peer });
            }
        }
        Ok(())
    }
}

/// The IP of a broker address `host:port` (`[v6]:port` and Java's bare `v6:port` too); `None`
/// for a host name or no port.
fn host_ip(addr: &str) -> Option<IpAddr> {
    let (host, port) = addr.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    host.parse::<IpAddr>().ok().map(|ip| ip.to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broker_address_is_read_as_java_writes_it() {
        assert_eq!(host_ip("10.0.0.5:10911"), "10.0.0.5".parse().ok());
        assert_eq!(host_ip("[::1]:10911"), "::1".parse().ok());
        assert_eq!(host_ip("fe80::1:10911"), "fe80::1".parse().ok(), "Java's bare IPv6 and port");
        assert_eq!(host_ip("[::ffff:10.0.0.5]:10911"), "10.0.0.5".parse().ok());
        for bad in ["broker-a:10911", "10.0.0.5", "10.0.0.5:port", ""] {
            assert_eq!(host_ip(bad), None, "{bad:?}");
        }
    }
}
