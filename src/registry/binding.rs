//! A broker's identity bound to its credentials: with access control checking what brokers
//! send, a live broker remembers the access key its registration was signed with, and a
//! registration (or an unregistration by a non-admin account) for its name or its address under
//! another access key is refused. Without this, any account allowed to register could take over
//! a live broker's name or address, and its routes would vanish when the impostor disconnects.

use thiserror::Error;

use super::live::LiveBroker;
use super::tables::RouteTables;

/// The broker named, or the one at the address, is live under another access key.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("broker {broker} at {addr} is live under another AccessKey")]
pub struct BoundElsewhere {
    /// The live broker's name.
    pub broker: String,
    /// Its address.
    pub addr: String,
}

impl RouteTables {
    /// The live broker at `addr` when it registered under another access key than
    /// `access_key`: a heartbeat or QUERY_DATA_VERSION naming it comes from another broker's
    /// account, which must neither keep it alive nor read its dataVersion. `None` when
    /// `access_key` is `None` (nothing was checked, or an admin) or nothing conflicts.
    pub fn live_bound_elsewhere(&self, addr: &str, access_key: Option<&str>) -> Option<BoundElsewhere> {
        let key = access_key?;
        let live = self.live_at(addr).filter(|l| l.access_key.as_deref().is_some_and(|k| k != key))?;
        Some(BoundElsewhere { broker: live.broker_name.clone(), addr: addr.to_owned() })
    }

    /// The live broker that `access_key` may not act for: the one at `addr`, or a live member of
    /// group `broker_name`, registered under another access key. `None` when `access_key` is
    /// `None` (nothing was checked) or nothing conflicts.
    pub fn bound_elsewhere(&self, broker_name: &str, addr: &str, access_key: Option<&str>) -> Option<BoundElsewhere> {
        let key = access_key?;
        let other = |live: &LiveBroker| live.access_key.as_deref().is_some_and(|k| k != key);
        if let Some(live) = self.live_at(addr).filter(|l| other(l)) {
            return Some(BoundElsewhere { broker: live.broker_name.clone(), addr: addr.to_owned() });
        }
        self.group(broker_name)?.broker_addrs.values().find_map(|member| {
            let live = self.live_at(member).filter(|l| l.broker_name == broker_name && other(l))?;
            Some(BoundElsewhere { broker: live.broker_name.clone(), addr: member.clone() })
        })
    }
}
