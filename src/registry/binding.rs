//! A broker's identity bound to its credentials: with access control checking what brokers
//! send, a live broker remembers the access key its registration was signed with, and a
//! registration (or an unregistration by a non-admin account) for its name or its address under
//! another access key is refused. Without this, any account allowed to register could take over
//! a live broker's name or address, and its routes would vanish when the impostor disconnects.
//!
//! A signature carries no nonce, so a signed heartbeat or unregistration seen on the wire could
//! be sent again by anyone: under a checked access key, they count only over the connection the
//! broker last registered on. A registration is as replayable, so under a checked key it moves a
//! live broker to another connection only once the broker is silent for half its timeout (a
//! closed connection removes its brokers at once): a registration captured and sent again over
//! another connection cannot take the broker off its own.

use std::fmt;

use thiserror::Error;

use super::live::LiveBroker;
use super::tables::RouteTables;
use crate::origin::ConnId;

/// The broker named, or the one at the address, is bound to another access key or connection.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("broker {broker} at {addr} {why}")]
pub struct BoundElsewhere {
    /// The live broker's name.
    pub broker: String,
    /// Its address.
    pub addr: String,
    /// What it is bound to.
    pub why: Bound,
}

/// What a live broker is bound to that a request does not match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// It registered under another access key.
    AccessKey,
    /// It registered over another connection.
    Connection,
    /// It is live and heartbeating over another connection, which still holds it.
    LiveConnection,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::AccessKey => "is live under another AccessKey",
            Bound::Connection => "registered over another connection: register again over this one",
            Bound::LiveConnection => {
                "is live over another connection: it moves once that connection closes or the broker is silent for half its timeout"
            }
        })
    }
}

impl RouteTables {
    /// The live broker at `addr` when it registered under another access key than
    /// `access_key` (a heartbeat or QUERY_DATA_VERSION naming it comes from another broker's
    /// account, which must neither keep it alive nor read its dataVersion), or over another
    /// connection than `conn` (a signed request replayed, or a reconnected broker that has not
    /// registered again yet). `None` when `access_key` is `None` (nothing was checked, or an
    /// admin) or nothing conflicts.
    pub fn live_bound_elsewhere(&self, addr: &str, access_key: Option<&str>, conn: ConnId) -> Option<BoundElsewhere> {
        let key = access_key?;
        let live = self.live_at(addr)?;
        let why = match live {
            l if l.access_key.as_deref().is_some_and(|k| k != key) => Bound::AccessKey,
            l if l.conn != conn => Bound::Connection,
            _ => return None,
        };
        Some(BoundElsewhere { broker: live.broker_name.clone(), addr: addr.to_owned(), why })
    }

    /// The live broker at `addr` when a registration over `conn` may not move it there yet: it
    /// registered over another connection (still open, as a closed one removes its brokers) and
    /// was heard from within half its timeout at `now_ms`. `None` when `access_key` is `None`
    /// (nothing was checked, or an admin), the broker is provisional (from a snapshot, over no
    /// connection) or nothing conflicts.
    pub fn held_by_another_connection(
        &self,
        addr: &str,
        access_key: Option<&str>,
        conn: ConnId,
        now_ms: u64,
    ) -> Option<BoundElsewhere> {
        access_key?;
        let live = self.live_at(addr)?;
        let recent = now_ms.saturating_sub(live.last_update_ms) <= live.timeout_ms / 2;
        (live.conn != conn && live.conn != ConnId::SERVER && recent).then(|| BoundElsewhere {
            broker: live.broker_name.clone(),
            addr: addr.to_owned(),
            why: Bound::LiveConnection,
        })
    }

    /// The live broker that `access_key` may not act for: the one at `addr`, or a live member of
    /// group `broker_name`, registered under another access key. `None` when `access_key` is
    /// `None` (nothing was checked) or nothing conflicts.
    pub fn bound_elsewhere(&self, broker_name: &str, addr: &str, access_key: Option<&str>) -> Option<BoundElsewhere> {
        let key = access_key?;
        let other = |live: &LiveBroker| live.access_key.as_deref().is_some_and(|k| k != key);
        if let Some(live) = self.live_at(addr).filter(|l| other(l)) {
            return Some(BoundElsewhere {
                broker: live.broker_name.clone(),
                addr: addr.to_owned(),
                why: Bound::AccessKey,
            });
        }
        self.group(broker_name)?.broker_addrs.values().find_map(|member| {
            let live = self.live_at(member).filter(|l| l.broker_name == broker_name && other(l))?;
            Some(BoundElsewhere { broker: live.broker_name.clone(), addr: member.clone(), why: Bound::AccessKey })
        })
    }
}
