//! The random operations of a differential sequence and their proptest strategies. Names and
//! addresses come from small pools so that brokers collide in every way Java allows.

use proptest::collection::vec;
use proptest::prelude::*;

use crate::differential::java_model::unregister::BrokerIdentity;
use crate::differential::java_model::Pending;

/// Cluster names; the first is drawn three times as often.
pub const CLUSTERS: [&str; 2] = ["c1", "c2"];
/// Broker names; an index one past the end is a name no broker registers.
pub const NAMES: [&str; 3] = ["b1", "b2", "b3"];
/// The name no broker registers.
pub const UNKNOWN_NAME: &str = "b9";
/// Addresses several brokers may share.
pub const SHARED_ADDRS: [&str; 3] = ["10.0.0.1:10911", "10.0.0.2:10911", "10.0.0.3:10911"];
/// Topics of the pool; the last is exempt from the acting-master rewrite.
pub const TOPICS: [&str; 4] = ["T1", "T2", "T3", "rmq_sys_SYNC_BROKER_MEMBER_b1"];
/// Zones brokers register with.
pub const ZONES: [&str; 2] = ["z1", "z2"];
/// Queue perms drawn for topics.
pub const PERMS: [i32; 4] = [6, 4, 7, 2];
/// Broker connections a registration may come over; unregister and QUERY_DATA_VERSION may also
/// come over the admin connection, slot `BROKER_SLOTS`.
pub const BROKER_SLOTS: usize = 3;

/// A broker instance: cluster, name, id and address, as pool indexes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Who {
    pub cluster: usize,
    /// `NAMES.len()` is [`UNKNOWN_NAME`].
    pub name: usize,
    pub id: i64,
    /// Below `SHARED_ADDRS.len()` a shared address, else one of this (name, id) alone.
    pub addr: usize,
}

/// The pool name of index `i` ([`UNKNOWN_NAME`] past the end).
pub fn name(i: usize) -> String {
    NAMES.get(i).copied().unwrap_or(UNKNOWN_NAME).to_owned()
}

impl Who {
    /// The identity with names and address spelled out.
    pub fn identity(&self) -> BrokerIdentity {
        let addr = match SHARED_ADDRS.get(self.addr) {
            Some(addr) => (*addr).to_owned(),
            None => format!("10.1.{}.{}:10911", self.name, self.id),
        };
        BrokerIdentity { cluster: CLUSTERS[self.cluster].to_owned(), addr, name: name(self.name), id: self.id }
    }
}

impl std::fmt::Debug for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.identity();
        write!(f, "{}/{}#{}@{}", b.cluster, b.name, b.id, b.addr)
    }
}

impl Tweak {
    /// `who` with this field changed; the address stays.
    pub fn apply(self, mut who: BrokerIdentity) -> BrokerIdentity {
        match self {
            Tweak::Exact => {}
            Tweak::OtherCluster => {
                who.cluster = CLUSTERS.iter().find(|c| **c != who.cluster).copied().unwrap_or("c1").to_owned()
            }
            Tweak::OtherName => {
                let i = NAMES.iter().position(|n| *n == who.name).map_or(0, |i| i + 1);
                who.name = name(i);
            }
            Tweak::OtherId => who.id = (who.id + 1) % 3,
        }
        who
    }
}

/// How a target is chosen: as drawn, or as a recent registration's identity, possibly with one
/// field changed (resolved when the sequence runs, so shrinking keeps the meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Drawn(Who),
    /// The `back`-th latest registration (modulo how many there were), then `tweak`.
    Recent {
        back: usize,
        tweak: Tweak,
    },
}

/// One field of a recent identity changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tweak {
    Exact,
    OtherCluster,
    OtherName,
    OtherId,
}

/// How a broker speaks: 4.9.x (no `enableActingMaster`, version 409) or 5.x (version 479).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Old,
    New { acting_master: bool },
}

/// One REGISTER_BROKER.
#[derive(Clone, PartialEq, Eq)]
pub struct Reg {
    pub slot: usize,
    pub target: Target,
    pub style: Style,
    pub compressed: bool,
    /// Bit i: `TOPICS[i]` is listed.
    pub topics: u8,
    pub counter: i64,
    pub state_version: i64,
    /// Index into `PERMS`, the `topicSysFlag` and the queue count of every listed topic.
    pub perm: usize,
    pub sys_flag: i32,
    pub queues: i32,
    pub zone: Option<usize>,
    /// `None`: no filterServerList; `Some(false)`: `[]`; `Some(true)`: one filter server.
    pub filter: Option<bool>,
}

impl std::fmt::Debug for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let topics: Vec<&str> =
            TOPICS.iter().enumerate().filter(|(i, _)| self.topics & (1 << i) != 0).map(|(_, t)| *t).collect();
        write!(
            f,
            "slot {} {:?} {:?}{} topics {topics:?} dv {}/{} perm {} sysFlag {} queues {} zone {:?} filter {:?}",
            self.slot,
            self.target,
            self.style,
            if self.compressed { " compressed" } else { "" },
            self.counter,
            self.state_version,
            PERMS[self.perm],
            self.sys_flag,
            self.queues,
            self.zone.map(|z| ZONES[z]),
            self.filter,
        )
    }
}

/// One step of a sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Register(Reg),
    Unregister {
        slot: usize,
        target: Target,
    },
    Close {
        slot: usize,
    },
    QueryDataVersion {
        slot: usize,
        target: Target,
        version: Option<(i64, i64)>,
    },
    /// Queue data for the pool names by index (`NAMES.len()` is unknown), perm index each.
    RegisterTopic {
        topic: usize,
        queues: Vec<(usize, usize)>,
    },
    DeleteTopic {
        topic: usize,
        cluster: Option<usize>,
    },
    WipeWritePerm {
        name: usize,
    },
    AddWritePerm {
        name: usize,
    },
    PutOrderConf {
        topic: usize,
        queues: i32,
    },
    DeleteOrderConf {
        topic: usize,
    },
    /// A request of this code with no extFields at all.
    NoExtFields {
        code: i32,
    },
}

fn who() -> impl Strategy<Value = Who> {
    let cluster = prop_oneof![3 => Just(0usize), 1 => Just(1usize)];
    (cluster, 0..NAMES.len(), 0..3i64, 0..SHARED_ADDRS.len() * 2).prop_map(|(cluster, name, id, addr)| Who {
        cluster,
        name,
        id,
        addr: addr.min(SHARED_ADDRS.len()),
    })
}

fn target() -> impl Strategy<Value = Target> {
    let tweak = prop_oneof![4 => Just(Tweak::Exact), 1 => Just(Tweak::OtherCluster), 1 => Just(Tweak::OtherName), 1 => Just(Tweak::OtherId)];
    prop_oneof![
        1 => who().prop_map(Target::Drawn),
        3 => (0..4usize, tweak).prop_map(|(back, tweak)| Target::Recent { back, tweak }),
    ]
}

fn reg() -> impl Strategy<Value = Reg> {
    let target = prop_oneof![3 => who().prop_map(Target::Drawn), 2 => (0..4usize).prop_map(|back| Target::Recent { back, tweak: Tweak::Exact })];
    let style =
        prop_oneof![1 => Just(Style::Old), 3 => any::<bool>().prop_map(|acting_master| Style::New { acting_master })];
    let body = (0u8..16, 1..4i64, 0..3i64, 0..PERMS.len(), 0..4i32, prop_oneof![Just(1), Just(8)]);
    let extra = (
        0..BROKER_SLOTS,
        prop::option::of(0..ZONES.len()),
        prop::option::of(any::<bool>()),
        prop::bool::weighted(0.25),
    );
    (target, style, body, extra).prop_map(
        |(
            target,
            style,
            (topics, counter, state_version, perm, sys_flag, queues),
            (slot, zone, filter, compressed),
        )| Reg {
            slot,
            target,
            style,
            compressed,
            topics,
            counter,
            state_version,
            perm,
            sys_flag,
            queues,
            zone,
            filter,
        },
    )
}

/// Codes sent without extFields; see `Pending::no_ext_fields_admin_answers`.
pub fn no_ext_codes(pending: &Pending) -> Vec<i32> {
    let mut codes = vec![100, 104, 105, 217];
    if !pending.no_ext_fields_admin_answers {
        codes.extend([101, 102, 205, 216, 219, 224, 327]);
    }
    codes
}

/// Any operation, weighted towards registrations.
pub fn op(pending: &Pending) -> impl Strategy<Value = Op> {
    let topic = 0..TOPICS.len();
    let name = 0..NAMES.len() + 1;
    prop_oneof![
        8 => reg().prop_map(Op::Register),
        3 => (0..=BROKER_SLOTS, target()).prop_map(|(slot, target)| Op::Unregister { slot, target }),
        2 => (0..=BROKER_SLOTS).prop_map(|slot| Op::Close { slot }),
        1 => (0..=BROKER_SLOTS, target(), prop::option::of((1..4i64, 0..3i64)))
            .prop_map(|(slot, target, version)| Op::QueryDataVersion { slot, target, version }),
        2 => (topic.clone(), vec((name.clone(), 0..PERMS.len()), 1..4)).prop_map(|(topic, queues)| Op::RegisterTopic { topic, queues }),
        1 => (topic.clone(), prop::option::of(0..CLUSTERS.len() + 1)).prop_map(|(topic, cluster)| Op::DeleteTopic { topic, cluster }),
        1 => name.clone().prop_map(|name| Op::WipeWritePerm { name }),
        1 => name.prop_map(|name| Op::AddWritePerm { name }),
        1 => (topic.clone(), 1..9i32).prop_map(|(topic, queues)| Op::PutOrderConf { topic, queues }),
        1 => topic.prop_map(|topic| Op::DeleteOrderConf { topic }),
        1 => prop::sample::select(no_ext_codes(pending)).prop_map(|code| Op::NoExtFields { code }),
    ]
}
