//! What one source address may ask of the server's shared capacity: what it holds of the
//! shared budgets and connection slots ([`Holding`], one per address, found in [`Peers`] once
//! per connection and counted with atomics after; `budget`: the shared budgets it draws on),
//! and its own rate of costly requests (`rates`). A source address is an IPv4 address or an IPv6 /64 (one host usually holds
//! a whole /64), an IPv4-mapped IPv6 address counted as its IPv4 address.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

pub use budget::{ByteBudget, Kind, OverShare, Share, Shares};
pub use rates::PeerRates;

mod budget;
mod rates;

/// A source address, as shares are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerKey {
    /// An IPv4 address (IPv4-mapped IPv6 addresses included).
    V4(Ipv4Addr),
    /// The /64 prefix of an IPv6 address.
    V6Net(u64),
}

impl From<IpAddr> for PeerKey {
    fn from(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => PeerKey::V4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => PeerKey::V4(v4),
                None => PeerKey::V6Net((u128::from(v6) >> 64) as u64),
            },
        }
    }
}

impl From<Ipv6Addr> for PeerKey {
    fn from(ip: Ipv6Addr) -> Self {
        PeerKey::from(IpAddr::V6(ip))
    }
}

/// What one source address holds, counted by every connection from it.
#[derive(Debug, Default)]
pub struct Holding {
    /// Connections open.
    pub connections: AtomicUsize,
    /// Bytes of frames being received or waiting to be handled.
    pub frame_bytes: AtomicUsize,
    /// Bytes of replies waiting to be written.
    pub reply_bytes: AtomicUsize,
}

/// The holdings of the source addresses with connections open: an address's holding lives as
/// long as one of its connections holds it.
#[derive(Debug, Default)]
pub struct Peers {
    table: Mutex<HashMap<PeerKey, Weak<Holding>>>,
}

impl Peers {
    /// The holding of `peer`'s address (made when it has none).
    pub fn holding(&self, peer: IpAddr) -> Arc<Holding> {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let key = PeerKey::from(peer);
        if let Some(holding) = table.get(&key).and_then(Weak::upgrade) {
            return holding;
        }
        if table.len() >= 1024 && table.len().is_power_of_two() {
            // Addresses whose connections all closed: forgotten, at a cost spread over the growth.
            table.retain(|_, holding| holding.strong_count() > 0);
        }
        let holding = Arc::new(Holding::default());
        table.insert(key, Arc::downgrade(&holding));
        holding
    }

    /// Connections open from `peer`'s address.
    pub fn connections_of(&self, peer: IpAddr) -> usize {
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let holding = table.get(&PeerKey::from(peer)).and_then(Weak::upgrade);
        holding.map_or(0, |h| h.connections.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holding_is_shared_by_its_connections_and_forgotten_with_the_last() {
        let peers = Peers::default();
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let (a, b) = (peers.holding(ip), peers.holding(ip));
        assert!(Arc::ptr_eq(&a, &b));
        a.connections.fetch_add(2, Ordering::Relaxed);
        assert_eq!(peers.connections_of(ip), 2);
        drop((a, b));
        assert_eq!(peers.connections_of(ip), 0, "a fresh holding once every connection is gone");
        for i in 0..5000u32 {
            drop(peers.holding(IpAddr::V4(Ipv4Addr::from(i))));
        }
        assert!(peers.table.lock().unwrap().len() < 2100, "dead holdings are pruned as the table grows");
    }

    #[test]
    fn ipv6_addresses_of_one_slash_64_are_one_peer_and_mapped_ipv4_is_its_ipv4() {
        let one: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let two: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(PeerKey::from(one), PeerKey::from(two));
        assert_ne!(PeerKey::from(one), PeerKey::from(other));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(PeerKey::from(mapped), PeerKey::V4(Ipv4Addr::new(10, 0, 0, 1)));
    }
}
