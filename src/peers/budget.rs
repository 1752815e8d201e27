//! The process-wide budgets of bytes connections hold: frames being received or waiting to be
//! handled (`frame_budget_bytes`) and replies waiting to be written (`reply_budget_bytes`). A
//! budget is a fair share, not a first-come cap: one source address holds at most
//! `peer_share_percent` of it, and connections that carry no broker registration hold together
//! at most what `broker_reserve_percent` leaves, so brokers that registered always find room.
//! The peer over its share is the one refused (its connection is closed), nobody else.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use thiserror::Error;

use super::Holding;

/// Which of an address's holdings a budget counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Frame bytes.
    Frames,
    /// Reply bytes.
    Replies,
}

impl Kind {
    fn of(self, holding: &Holding) -> &AtomicUsize {
        match self {
            Kind::Frames => &holding.frame_bytes,
            Kind::Replies => &holding.reply_bytes,
        }
    }
}

/// The shares of a budget, in percent of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shares {
    /// The most one source address holds.
    pub peer_percent: u32,
    /// What is kept for connections that carry a broker registration.
    pub broker_reserve_percent: u32,
}

impl Shares {
    /// No shares: one pool, first come (for tests of other things).
    pub const NONE: Shares = Shares { peer_percent: 100, broker_reserve_percent: 0 };
}

/// Which share a reservation went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum OverShare {
    /// The source address's share.
    #[error("{held} of this address's {max} bytes held (peer_share_percent)")]
    Peer { held: usize, max: usize },
    /// What connections without a broker registration may hold together.
    #[error("{held} of the {max} bytes connections without a broker may hold (broker_reserve_percent kept back)")]
    General { held: usize, max: usize },
    /// The whole budget.
    #[error("{held} of {max} bytes held")]
    Total { held: usize, max: usize },
}

/// Bytes held by all connections together, within the shares.
#[derive(Debug)]
pub struct ByteBudget {
    kind: Kind,
    held: AtomicUsize,
    max: usize,
    peer_max: usize,
    general_max: usize,
}

impl ByteBudget {
    /// A budget of `max` bytes of `kind`, shared out as `shares` say.
    pub fn new(kind: Kind, max: usize, shares: Shares) -> Arc<Self> {
        let part = |percent: u32| (max as u128 * u128::from(percent.min(100)) / 100) as usize;
        let (peer_max, general_max) = (part(shares.peer_percent), max - part(shares.broker_reserve_percent));
        Arc::new(ByteBudget { kind, held: AtomicUsize::new(0), max, peer_max, general_max })
    }

    /// Bytes reserved now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// The most bytes it holds.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Reserves `n` bytes for a connection drawing on `share`, if they fit every share;
    /// nothing reserved if not.
    pub fn try_reserve(&self, share: &Share, n: usize) -> Result<(), OverShare> {
        let peer = self.kind.of(&share.holding);
        let fits = |limit: usize| move |held: usize| held.checked_add(n).filter(|t| *t <= limit);
        if let Err(held) = peer.fetch_update(Ordering::AcqRel, Ordering::Acquire, fits(self.peer_max)) {
            return Err(match self.peer_max >= self.max {
                true => OverShare::Total { held: self.held(), max: self.max },
                false => OverShare::Peer { held, max: self.peer_max },
            });
        }
        let limit = if share.broker.get() { self.max } else { self.general_max };
        if let Err(held) = self.held.fetch_update(Ordering::AcqRel, Ordering::Acquire, fits(limit)) {
            peer.fetch_sub(n, Ordering::AcqRel);
            return Err(match share.broker.get() {
                true => OverShare::Total { held, max: self.max },
                false => OverShare::General { held, max: self.general_max },
            });
        }
        Ok(())
    }

    /// Gives back `n` bytes reserved for a connection drawing on `share`.
    pub fn release(&self, share: &Share, n: usize) {
        self.kind.of(&share.holding).fetch_sub(n, Ordering::AcqRel);
        self.held.fetch_sub(n, Ordering::AcqRel);
    }
}

/// What one connection draws on: its source address's holding, and whether it carries a broker
/// registration (then the broker reserve is open to it).
#[derive(Debug)]
pub struct Share {
    holding: Arc<Holding>,
    broker: Cell<bool>,
}

impl Share {
    /// A connection's share of `holding`, counted among the address's connections until dropped.
    pub fn new(holding: Arc<Holding>) -> Self {
        holding.connections.fetch_add(1, Ordering::Relaxed);
        Share { holding, broker: Cell::new(false) }
    }

    /// The connection carries a broker registration from now on.
    pub fn promote(&self) {
        self.broker.set(true);
    }

    /// Whether it carries a broker registration.
    pub fn is_broker(&self) -> bool {
        self.broker.get()
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        self.holding.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share() -> Share {
        Share::new(Arc::new(Holding::default()))
    }

    #[test]
    fn an_address_holds_its_share_the_others_theirs_and_brokers_the_reserve() {
        let budget = ByteBudget::new(Kind::Frames, 1000, Shares { peer_percent: 40, broker_reserve_percent: 20 });
        let (attacker, honest, broker) = (share(), share(), share());
        broker.promote();
        assert_eq!(budget.try_reserve(&attacker, 400), Ok(()));
        assert_eq!(budget.try_reserve(&attacker, 1), Err(OverShare::Peer { held: 400, max: 400 }));
        assert_eq!(budget.try_reserve(&honest, 400), Ok(()), "another address has its own share");
        assert_eq!(budget.try_reserve(&share(), 1), Err(OverShare::General { held: 800, max: 800 }));
        assert_eq!(budget.try_reserve(&broker, 200), Ok(()), "the reserve is the brokers'");
        assert_eq!(budget.try_reserve(&broker, 1), Err(OverShare::Total { held: 1000, max: 1000 }));
        budget.release(&attacker, 400);
        assert_eq!((budget.held(), attacker.holding.frame_bytes.load(Ordering::Relaxed)), (600, 0));
        let none = ByteBudget::new(Kind::Replies, 100, Shares::NONE);
        assert_eq!(none.try_reserve(&attacker, 100), Ok(()), "no shares: one pool");
    }
}
