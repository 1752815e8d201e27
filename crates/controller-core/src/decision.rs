//! What deciding a request gives (an [`Answer`] or a [`Refusal`], and the event to commit
//! first) and what it is decided with (this node's [`LiveView`] and [`DecideOptions`]).

use namesrv_protocol::controller::body::{BrokerReplicasInfo, ElectMasterResponseBody, SyncStateSet};
use namesrv_protocol::controller::response::MasterFields;
use namesrv_protocol::controller::ControllerResponseCode as Code;

use crate::Event;

/// What a broker's heartbeats said about it, as the policy orders candidates by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveFacts {
    /// The last master epoch the broker knows (-1 before any).
    pub epoch: i32,
    /// Its commit log's max offset.
    pub max_offset: i64,
    /// `brokerElectionPriority`: lower is preferred.
    pub priority: i32,
}

/// Which brokers are alive: the liveness table of the node deciding, seen at one instant.
pub trait LiveView {
    /// The facts of broker `id` of group `name` in `cluster` when it is alive, else `None`.
    fn live(&self, cluster: &str, name: &str, id: i64) -> Option<LiveFacts>;
}

/// A successful answer (2011 included: brokers take a kept master as success), carrying all its
/// response holds: each is encoded alone, whatever request it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The id group `name` of `cluster` offers next.
    NextBrokerId { cluster: String, name: String, next: i64 },
    /// The id is the broker's, in group `name` of `cluster`.
    IdApplied { cluster: String, name: String },
    /// The broker of group `name` of `cluster` is registered: the master when it is alive, the
    /// in-sync set.
    Registered { cluster: String, name: String, master: MasterFields, set: SyncStateSet },
    /// Who masters the group.
    ReplicaInfo { master: MasterFields, set: SyncStateSet },
    /// A new master, to be told to the group's alive members (`notify`: id and address).
    Elected { master: MasterFields, body: ElectMasterResponseBody },
    /// The old master stays (answered with CONTROLLER_MASTER_STILL_EXIST and this remark).
    MasterKept { master: MasterFields, body: ElectMasterResponseBody, remark: String },
    /// The new in-sync set.
    Altered(SyncStateSet),
    /// The replicas of the groups asked for.
    SyncStateData(BrokerReplicasInfo),
    /// The data is gone.
    Cleaned,
}

/// A refused request: Java's response code and remark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The response code.
    pub code: Code,
    /// Java's remark.
    pub remark: String,
}

/// What a request decided: the event to commit first (if any), then the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Committed before the answer is given; `None`: answered at once.
    pub event: Option<Event>,
    /// The answer.
    pub answer: Result<Answer, Refusal>,
}

impl Decision {
    pub(super) fn answer(answer: Answer) -> Self {
        Decision { event: None, answer: Ok(answer) }
    }

    pub(super) fn refuse(code: Code, remark: impl Into<String>) -> Self {
        Decision { event: None, answer: Err(Refusal { code, remark: remark.into() }) }
    }

    pub(super) fn commit(event: Event, answer: Answer) -> Self {
        Decision { event: Some(event), answer: Ok(answer) }
    }
}

/// The switches of this node that decisions depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecideOptions {
    /// `enableElectUncleanMaster`: elect out-of-sync replicas when no in-sync one lives.
    pub elect_unclean: bool,
}
