//! One operation: applied to the model, sent to the server, the answers compared, then the
//! whole observable state compared.

use namesrv::protocol::RemotingCommand;

use super::ops::{name, Op, Reg, TOPICS};
use super::wire::{self, request};
use super::{compare, World, CLOSE_SETTLES_WITHIN};
use crate::differential::java_model::register::ORDER_TOPIC_CONFIG;
use crate::differential::java_model::{Answer, QueueData};

/// Cluster names DELETE_TOPIC_IN_NAMESRV may carry: the pool, an unknown one, and empty.
const DELETE_CLUSTERS: [&str; 4] = ["c1", "c2", "c9", ""];

impl World<'_> {
    /// Runs `op`, then observes.
    pub fn step(&mut self, op: &Op) -> Result<(), String> {
        match op {
            Op::Close { slot } => {
                let outcomes = self.model.close_outcomes(self.slot_ids[*slot]);
                self.reopen(*slot);
                return self.observe_settled(outcomes, CLOSE_SETTLES_WITHIN);
            }
            Op::Register(reg) => self.register(reg)?,
            Op::Unregister { slot, target } => {
                let who = self.resolve(*target);
                let expected = self.model.unregister(&who, self.slot_ids[*slot]);
                let actual = self.slots[*slot].call(wire::identity_request(104, &who))?;
                compare::compare(&expected, &actual).map_err(|e| format!("UNREGISTER_BROKER answer: {e}"))?;
            }
            Op::QueryDataVersion { slot, target, version } => {
                let who = self.resolve(*target);
                let version = version.map(|(counter, state)| wire::data_version(counter, state));
                let expected = self.model.query_data_version(&who, version);
                let mut req = wire::identity_request(322, &who);
                if let Some(v) = version {
                    req = req.with_body(serde_json::to_vec(&v.to_json()).expect("json"));
                }
                let actual = self.slots[*slot].call(req)?;
                compare::compare(&expected, &actual).map_err(|e| format!("QUERY_DATA_VERSION answer: {e}"))?;
            }
            other => {
                let (req, expected) = self.admin(other);
                let actual = self.query.call(req)?;
                compare::compare(&expected, &actual)
                    .map_err(|e| format!("answer to code {}: {e}", actual_code(other)))?;
            }
        }
        self.observe()
    }

    fn register(&mut self, reg: &Reg) -> Result<(), String> {
        let who = self.resolve(reg.target);
        let call = wire::register_call(reg, &who);
        let req = wire::register_request(reg, &call);
        let expected = self.model.register(&call, self.slot_ids[reg.slot]);
        self.addrs.insert(who.addr.clone());
        self.registered.push(who);
        let registering = self.slot_ids[reg.slot];
        match self.slots[reg.slot].call(req) {
            // Pending `closes_registering_connection`: the response may be lost with the connection.
            Err(_)
                if self.model.pending.closes_registering_connection
                    && self.model.closed_by_server.contains(&registering) => {}
            actual => compare::compare(&expected, &actual?).map_err(|e| format!("REGISTER_BROKER answer: {e}"))?,
        }
        self.expect_server_closes()
    }

    /// Checks that the server closed each connection the model says it closes, and reopens
    /// their slots.
    fn expect_server_closes(&mut self) -> Result<(), String> {
        for conn in std::mem::take(&mut self.model.closed_by_server) {
            let Some(slot) = self.slot_ids.iter().position(|id| *id == conn) else { continue };
            if !self.slots[slot].closed_by_server(CLOSE_SETTLES_WITHIN) {
                return Err(format!("the server kept open the connection of slot {slot}"));
            }
            self.reopen(slot);
        }
        Ok(())
    }

    /// The request and the model's answer for an admin operation (sent over the query connection).
    fn admin(&mut self, op: &Op) -> (RemotingCommand, Answer) {
        let m = &mut self.model;
        match op {
            Op::RegisterTopic { topic, queues } => {
                let queues: Vec<(String, QueueData)> =
                    queues.iter().map(|(n, p)| (name(*n), wire::topic_queue(*p))).collect();
                (wire::register_topic_request(TOPICS[*topic], &queues), m.register_topic(TOPICS[*topic], &queues))
            }
            Op::DeleteTopic { topic, cluster } => {
                let cluster = cluster.map(|c| DELETE_CLUSTERS[c]);
                let mut fields = vec![("topic", TOPICS[*topic])];
                fields.extend(cluster.map(|c| ("clusterName", c)));
                (request(216, &fields), m.delete_topic(TOPICS[*topic], cluster))
            }
            Op::WipeWritePerm { name: n } => (request(205, &[("brokerName", &name(*n))]), m.wipe_write_perm(&name(*n))),
            Op::AddWritePerm { name: n } => (request(327, &[("brokerName", &name(*n))]), m.add_write_perm(&name(*n))),
            Op::PutOrderConf { topic, queues } => {
                let value = format!("{}:{queues};{}:{queues}", name(0), name(1));
                let fields = [("namespace", ORDER_TOPIC_CONFIG), ("key", TOPICS[*topic]), ("value", &value)];
                (request(100, &fields), m.put_kv(ORDER_TOPIC_CONFIG, TOPICS[*topic], &value))
            }
            Op::DeleteOrderConf { topic } => {
                let fields = [("namespace", ORDER_TOPIC_CONFIG), ("key", TOPICS[*topic])];
                (request(102, &fields), m.delete_kv(ORDER_TOPIC_CONFIG, TOPICS[*topic]))
            }
            Op::NoExtFields { code } => (no_ext_request(*code), m.without_ext_fields(*code)),
            Op::Register(_) | Op::Unregister { .. } | Op::Close { .. } | Op::QueryDataVersion { .. } => {
                unreachable!("not an admin operation: {op:?}")
            }
        }
    }
}

/// A request of `code` with no extFields; REGISTER_TOPIC_IN_NAMESRV still carries a body that
/// names a pool broker.
fn no_ext_request(code: i32) -> RemotingCommand {
    if code == 217 {
        let queues = [(name(0), wire::topic_queue(0))];
        return RemotingCommand { ext_fields: None, ..wire::register_topic_request("unused", &queues) };
    }
    RemotingCommand::request(code, None)
}

/// The request code of an admin operation, for messages.
fn actual_code(op: &Op) -> i32 {
    match op {
        Op::RegisterTopic { .. } => 217,
        Op::DeleteTopic { .. } => 216,
        Op::WipeWritePerm { .. } => 205,
        Op::AddWritePerm { .. } => 327,
        Op::PutOrderConf { .. } => 100,
        Op::DeleteOrderConf { .. } => 102,
        Op::NoExtFields { code } => *code,
        _ => 0,
    }
}
