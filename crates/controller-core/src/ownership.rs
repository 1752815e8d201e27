//! Who may speak for a replica, as one peer sees it: the channel that applied the replica's id,
//! registered it or heartbeats for it owns it, with the account that signed (when access control
//! checks it). Only the owner heartbeats for the replica, moves its address or changes the
//! in-sync set it leads; another channel takes over once the owner's has closed or been silent
//! past its heartbeat timeout, as a restarted broker's new connection does. Heartbeats are taken
//! only for replicas the tables know, so what this holds is bounded by the tables.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use thiserror::Error;

use crate::decide::Op;
use crate::liveness::{Beat, LiveKey, DEFAULT_TIMEOUT};
use crate::ReplicaTables;

/// The owner of one replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner<C> {
    /// The channel it speaks over.
    pub conn: C,
    /// The account that signed for it, when access control checked one.
    pub account: Option<String>,
    /// When it last spoke.
    last: Instant,
    /// How long it may stay silent and still own the replica.
    timeout: Duration,
}

/// Why a request or heartbeat for a replica was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NotOwner {
    /// Another channel owns the replica and has spoken within its timeout.
    #[error("replica {id} of broker group {name} speaks over another connection, heard within its timeout")]
    BoundElsewhere {
        /// The group.
        name: String,
        /// The replica.
        id: i64,
    },
    /// Changing the in-sync set is the master's own: its channel must have spoken here first.
    #[error("replica {id} of broker group {name} has not spoken over this connection")]
    NotHeard {
        /// The group.
        name: String,
        /// The replica.
        id: i64,
    },
    /// A heartbeat for a replica the tables do not know (a broker registers first).
    #[error("replica {id} of broker group {name} in cluster {cluster} is not registered")]
    Unknown {
        /// Its cluster.
        cluster: String,
        /// Its group.
        name: String,
        /// Its id.
        id: i64,
    },
}

/// The owners of the replicas, as this peer has heard them.
#[derive(Debug)]
pub struct Owners<C> {
    by_key: HashMap<LiveKey, Owner<C>>,
}

impl<C> Default for Owners<C> {
    fn default() -> Self {
        Owners { by_key: HashMap::new() }
    }
}

impl<C: Copy + Eq> Owners<C> {
    /// The owner of `key`, when one has spoken within its timeout at `now`.
    pub fn owner(&self, key: &LiveKey, now: Instant) -> Option<&Owner<C>> {
        self.by_key.get(key).filter(|o| o.last + o.timeout >= now)
    }

    /// Whether `conn` may speak for `key` at `now`: it owns it, or nobody speaking does.
    pub fn permits(&self, key: &LiveKey, conn: C, now: Instant) -> bool {
        self.owner(key, now).is_none_or(|o| o.conn == conn)
    }

    /// `conn` speaks for `key` at `now` (staying silent at most `timeout`), signed by `account`:
    /// it owns the replica from now on, unless another channel does.
    pub fn claim(
        &mut self,
        key: &LiveKey,
        conn: C,
        account: Option<&str>,
        (now, timeout): (Instant, Duration),
    ) -> Result<(), NotOwner> {
        if !self.permits(key, conn, now) {
            return Err(NotOwner::BoundElsewhere { name: key.name.clone(), id: key.id });
        }
        let owner = Owner { conn, account: account.map(str::to_owned), last: now, timeout };
        self.by_key.insert(key.clone(), owner);
        Ok(())
    }

    /// The channel `conn` closed: the replicas it owned are free, and how many they were.
    pub fn release(&mut self, conn: C) -> usize {
        let before = self.by_key.len();
        self.by_key.retain(|_, o| o.conn != conn);
        before - self.by_key.len()
    }

    /// Forgets the owners of replicas the tables no longer hold (after cleaning).
    pub fn retain_known(&mut self, tables: &ReplicaTables) {
        self.by_key.retain(|key, _| registered(tables, key));
    }

    /// How many replicas have an owner.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether no replica has an owner.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// Whether the tables hold the replica `key` names, in its cluster.
pub fn registered(tables: &ReplicaTables, key: &LiveKey) -> bool {
    tables.group(&key.name).is_some_and(|g| g.cluster() == key.cluster && g.replicas().contains_key(&key.id))
}

/// Whether `beat`, over `conn` at `now`, may be taken: its replica is registered, and `conn`
/// owns it or nobody speaking does.
pub fn admit_beat<C: Copy + Eq>(
    tables: &ReplicaTables,
    owners: &Owners<C>,
    beat: &Beat,
    conn: C,
    now: Instant,
) -> Result<(), NotOwner> {
    let key = &beat.key;
    if !registered(tables, key) {
        return Err(NotOwner::Unknown { cluster: key.cluster.clone(), name: key.name.clone(), id: key.id });
    }
    match owners.permits(key, conn, now) {
        true => Ok(()),
        false => Err(NotOwner::BoundElsewhere { name: key.name.clone(), id: key.id }),
    }
}

/// The replica a request speaks for, and whether only its owner may send it (the in-sync set
/// is the master's own) or anyone while nobody speaks for it.
pub fn speaks_for(tables: &ReplicaTables, op: &Op) -> Option<(LiveKey, bool)> {
    let key = |name: &str, id: i64| {
        let cluster = tables.group(name)?.cluster().to_owned();
        Some(LiveKey { cluster, name: name.to_owned(), id })
    };
    match op {
        Op::Register { cluster, name, id, .. } | Op::ApplyBrokerId { cluster, name, id, .. } => {
            Some((LiveKey { cluster: cluster.clone(), name: name.clone(), id: *id }, false))
        }
        Op::ElectMaster { name, requester, designate: false } if *requester >= 0 => {
            Some((key(name, *requester)?, false))
        }
        Op::AlterSyncStateSet { name, master_id, .. } => Some((key(name, *master_id)?, true)),
        _ => None,
    }
}

/// Whether `op` over `conn` at `now` may be decided: the replica it speaks for is `conn`'s, or
/// nobody's (the in-sync set: `conn`'s only).
pub fn check<C: Copy + Eq>(
    tables: &ReplicaTables,
    owners: &Owners<C>,
    op: &Op,
    conn: C,
    now: Instant,
) -> Result<(), NotOwner> {
    let Some((key, own_only)) = speaks_for(tables, op) else { return Ok(()) };
    match owners.owner(&key, now) {
        Some(o) if o.conn != conn => Err(NotOwner::BoundElsewhere { name: key.name, id: key.id }),
        None if own_only => Err(NotOwner::NotHeard { name: key.name, id: key.id }),
        _ => Ok(()),
    }
}

/// How long a replica a request claimed may stay silent before its first heartbeat.
pub const CLAIM_TIMEOUT: Duration = DEFAULT_TIMEOUT;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::group_of;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Ch(u64);

    fn key(id: i64) -> LiveKey {
        LiveKey { cluster: "c".into(), name: "cb".into(), id }
    }

    fn beat(id: i64) -> Beat {
        Beat {
            key: key(id),
            addr: format!("a:{id}"),
            epoch: 0,
            max_offset: 0,
            confirm_offset: 0,
            timeout: Duration::from_secs(10),
            priority: 0,
        }
    }

    #[test]
    fn another_channel_takes_a_replica_over_only_once_its_owner_closed_or_went_silent() {
        let (mut owners, start) = (Owners::default(), Instant::now());
        let ten = Duration::from_secs(10);
        owners.claim(&key(1), Ch(1), None, (start, ten)).unwrap();
        let later = start + Duration::from_secs(5);
        assert!(owners.claim(&key(1), Ch(2), None, (later, ten)).is_err(), "the owner spoke 5 s ago");
        owners.claim(&key(1), Ch(1), Some("bk"), (later, ten)).unwrap();
        assert_eq!(owners.owner(&key(1), later).and_then(|o| o.account.as_deref()), Some("bk"));
        let silent = later + ten + Duration::from_millis(1);
        owners.claim(&key(1), Ch(2), None, (silent, ten)).unwrap();
        assert_eq!(owners.release(Ch(2)), 1);
        owners.claim(&key(1), Ch(3), None, (silent, ten)).unwrap();
        assert_eq!(owners.len(), 1);
    }

    #[test]
    fn heartbeats_are_taken_for_registered_replicas_from_their_owner_only() {
        let (t, now, mut owners) = (group_of(2), Instant::now(), Owners::default());
        assert!(admit_beat(&t, &owners, &beat(1), Ch(1), now).is_ok());
        let stranger = Beat { key: LiveKey { cluster: "c".into(), name: "made-up".into(), id: 1 }, ..beat(1) };
        assert!(matches!(admit_beat(&t, &owners, &stranger, Ch(1), now), Err(NotOwner::Unknown { .. })));
        let other_cluster = Beat { key: LiveKey { cluster: "x".into(), ..key(1) }, ..beat(1) };
        assert!(matches!(admit_beat(&t, &owners, &other_cluster, Ch(1), now), Err(NotOwner::Unknown { .. })));
        owners.claim(&key(1), Ch(1), None, (now, Duration::from_secs(10))).unwrap();
        assert!(matches!(admit_beat(&t, &owners, &beat(1), Ch(9), now), Err(NotOwner::BoundElsewhere { .. })));
    }

    #[test]
    fn requests_speak_for_their_replica_and_the_in_sync_set_is_its_masters_own() {
        let (t, now, mut owners) = (group_of(2), Instant::now(), Owners::default());
        let register = Op::Register { cluster: "c".into(), name: "cb".into(), id: 1, address: "evil:1".into() };
        let set = namesrv_protocol::controller::body::SyncStateSet { ids: [1, 2].into(), epoch: 1 };
        let alter = Op::AlterSyncStateSet { name: "cb".into(), master_id: 1, master_epoch: 1, set };
        let elect = Op::ElectMaster { name: "cb".into(), requester: 1, designate: false };
        assert!(check(&t, &owners, &register, Ch(9), now).is_ok(), "nobody speaks for replica 1 yet");
        assert!(matches!(check(&t, &owners, &alter, Ch(1), now), Err(NotOwner::NotHeard { .. })));
        owners.claim(&key(1), Ch(1), None, (now, Duration::from_secs(10))).unwrap();
        for op in [&register, &alter, &elect] {
            assert!(check(&t, &owners, op, Ch(1), now).is_ok(), "{op:?} from its owner");
            assert!(matches!(check(&t, &owners, op, Ch(9), now), Err(NotOwner::BoundElsewhere { .. })), "{op:?}");
        }
        let designated = Op::ElectMaster { name: "cb".into(), requester: 1, designate: true };
        assert!(check(&t, &owners, &designated, Ch(9), now).is_ok(), "an admin's election speaks for no replica");
    }
}
