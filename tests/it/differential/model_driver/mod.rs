//! Drives one operation sequence against the real server and the Java model side by side:
//! each operation's answer is compared, then every query of [`observe::probes`].

pub mod compare;
pub mod conn;
pub mod observe;
pub mod ops;
pub mod step;
pub mod strict;
pub mod wire;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::common::{Client, TestServer};
use crate::differential::java_model::unregister::BrokerIdentity;
use crate::differential::java_model::{ConnId, Model};
use conn::Conn;
use ops::{Target, BROKER_SLOTS, SHARED_ADDRS};

/// How long a connection close may take to show (waited out only when it has not shown).
const CLOSE_SETTLES_WITHIN: Duration = Duration::from_secs(3);

/// The server, its connections and the model, for one sequence.
pub struct World<'a> {
    server: &'a TestServer,
    /// Broker connections, then the admin connection (slot `BROKER_SLOTS`).
    slots: Vec<Conn>,
    /// The model's id of each slot's current connection.
    slot_ids: Vec<ConnId>,
    next_id: ConnId,
    /// Queries and admin requests.
    query: Conn,
    /// Every registration's identity, oldest first.
    registered: Vec<BrokerIdentity>,
    /// Every address used so far.
    addrs: BTreeSet<String>,
    pub model: Model,
}

impl<'a> World<'a> {
    /// Fresh connections to `server`, which must be empty as `model` is.
    pub fn new(server: &'a TestServer, model: Model) -> Self {
        let slots = (0..=BROKER_SLOTS).map(|_| Conn::new(Client::connect(server.addr))).collect();
        let slot_ids = (0..=BROKER_SLOTS as ConnId).collect();
        let addrs = SHARED_ADDRS.iter().map(|a| (*a).to_owned()).collect();
        World {
            server,
            slots,
            slot_ids,
            next_id: BROKER_SLOTS as ConnId + 1,
            query: Conn::new(Client::connect(server.addr)),
            registered: Vec::new(),
            addrs,
            model,
        }
    }

    /// The identity `target` names now.
    fn resolve(&self, target: Target) -> BrokerIdentity {
        match target {
            Target::Drawn(who) => who.identity(),
            Target::Recent { back, tweak } => {
                let recent = match self.registered.len() {
                    0 => ops::Who { cluster: 0, name: 0, id: 0, addr: 0 }.identity(),
                    n => self.registered[n - 1 - back % n].clone(),
                };
                tweak.apply(recent)
            }
        }
    }

    /// Closes the connection of `slot` and opens a fresh one in its place.
    fn reopen(&mut self, slot: usize) {
        let fresh = Conn::new(Client::connect(self.server.addr));
        drop(std::mem::replace(&mut self.slots[slot], fresh));
        self.slot_ids[slot] = self.next_id;
        self.next_id += 1;
    }

    /// Asks every probe and compares each answer with the model's.
    pub fn observe(&mut self) -> Result<(), String> {
        let model = self.model.clone();
        self.observe_as(&model)
    }

    /// Asks every probe and compares each answer with `model`'s.
    fn observe_as(&mut self, model: &Model) -> Result<(), String> {
        let probes = observe::probes(model, &self.addrs);
        let requests: Vec<_> = probes.iter().map(|p| p.request.clone()).collect();
        let responses = self.query.call_all(&requests)?;
        for (probe, response) in probes.iter().zip(&responses) {
            compare::compare(&probe.expected, response).map_err(|e| format!("{}: {e}", probe.label))?;
            conn::check_encoding(probe.encoding, response).map_err(|e| format!("{}: {e}", probe.label))?;
            if !model.pending.repeated_filter_server_keys {
                strict::check_unique_keys(response).map_err(|e| format!("{}: {e}", probe.label))?;
            }
        }
        Ok(())
    }

    /// Observes until the server agrees with one of `outcomes` (effects that arrive
    /// asynchronously, and several allowed outcomes), which then becomes the model.
    fn observe_settled(&mut self, outcomes: Vec<Model>, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        loop {
            let mut first_error = None;
            for outcome in &outcomes {
                match self.observe_as(outcome) {
                    Ok(()) => {
                        self.model = outcome.clone();
                        return Ok(());
                    }
                    Err(e) => first_error = first_error.or(Some(e)),
                }
            }
            if Instant::now() >= deadline {
                return Err(first_error.unwrap_or_default());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
