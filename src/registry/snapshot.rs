//! The route snapshot for a warm restart: each live broker's latest registration inputs, taken
//! from the tables, and loading them back by replaying them as registrations, so the tables and
//! the cached bodies are built exactly as registrations build them. Loaded brokers are
//! provisional: no connection, expiring on their timeout counted from the load unless they
//! register. No I/O here (see `crate::warm`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::live::FromSnapshot;
use super::register::{FingerprintedBody, Registration};
use super::tables::RouteTables;
use super::topic_limit::RegisterRefused;
use crate::limits::LimitError;
use crate::model::{DataVersion, QueueData, TopicConfig, TopicQueueMappingInfo, TopicTable};
use crate::origin::ConnId;
use crate::protocol::body::RegisterBody;

/// The snapshot format this build writes and reads.
pub const FORMAT: u32 = 1;

/// Every live broker, by group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// [`FORMAT`].
    pub format: u32,
    /// Wall-clock time it was taken, in ms since the epoch (its age decides whether it loads).
    pub taken_at_ms: u64,
    /// Groups with at least one live member, sorted by name.
    pub groups: Vec<GroupSnapshot>,
}

/// One broker group: its queue data and mappings, and its live members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSnapshot {
    pub broker_name: String,
    pub zone_name: Option<String>,
    pub enable_acting_master: bool,
    /// (topic, queue data) of the group: the tables' own names, shared, in no order when taken
    /// (so the registry allocates and sorts nothing); [`Snapshot::sort`] orders them for writing.
    pub topics: Vec<(Arc<str>, QueueSnapshot)>,
    /// The static-topic mappings this group hosts.
    pub mappings: Vec<MappingSnapshot>,
    /// Live members, sorted by id.
    pub members: Vec<MemberSnapshot>,
}

/// Queue data of one topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSnapshot {
    pub read: i32,
    pub write: i32,
    pub perm: i32,
    pub sys_flag: i32,
}

/// One static-topic mapping (Java's `TopicQueueMappingInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappingSnapshot {
    pub topic: String,
    pub scope: String,
    pub total_queues: i32,
    pub epoch: i64,
    pub dirty: bool,
    pub curr_id_map: BTreeMap<i64, i64>,
}

/// One live member's latest registration inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberSnapshot {
    pub cluster: String,
    pub broker_id: i64,
    pub addr: String,
    pub ha_server_addr: String,
    /// The MQVersion ordinal of its latest registration.
    pub version: i32,
    pub timeout_ms: u64,
    /// (counter, stateVersion, timestamp) of its dataVersion.
    pub data_version: (i64, i64, i64),
    pub filter_servers: Option<Vec<String>>,
    /// How long it had been silent, when it was provisional (loaded and not registered since):
    /// loaded again, it has only the rest of its timeout, so restarts never keep it forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisional_silent_ms: Option<u64>,
    /// How long since it was last heard from when the snapshot was taken (for a provisional
    /// one, since its last heartbeat before the snapshot it was loaded from): what the status
    /// views show of it after a warm restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub silent_ms: Option<u64>,
    /// The access key its registration was signed with (access control on): loaded, the broker
    /// stays bound to it, so no other account takes its name or address over a restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_key: Option<String>,
}

/// What loading a snapshot did.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Brokers now provisional.
    pub provisional: usize,
    /// Members not loaded, each with why.
    pub skipped: Vec<Skipped>,
}

/// A snapshot member that was not loaded.
#[derive(Debug)]
pub struct Skipped {
    /// Its broker name (at most 64 characters of it).
    pub broker: String,
    /// Its address (likewise).
    pub addr: String,
    /// Why: the check it failed.
    pub why: SkipReason,
}

/// Which check a snapshot member failed.
#[derive(Debug, thiserror::Error)]
pub enum SkipReason {
    /// A name or topic name a registration could not carry.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// More topics than one registration may carry.
    #[error("{topics} topics, more than max_topics_per_broker = {max}")]
    TooManyTopics { topics: usize, max: usize },
    /// No room in the tables for it.
    #[error(transparent)]
    Room(#[from] RegisterRefused),
}

impl Snapshot {
    /// Orders each group's topics by name, so the same tables always write the same file; done
    /// by the writer thread, not the registry.
    pub fn sort(&mut self) {
        for group in &mut self.groups {
            group.topics.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        }
    }
}

impl RouteTables {
    /// Loads `snapshot`, taken `age_ms` ago, into (empty) tables at `now_ms`: each member is
    /// registered as it last registered, then marked provisional with no connection, silent
    /// since its last heartbeat before the snapshot; one already provisional when the snapshot
    /// was taken keeps only the rest of its timeout. The file is input like the wire:
    /// each member is checked as a registration is (names, topic names, the topic cap, the
    /// room in the tables; its timeout clamped on the way) and one that fails is skipped.
    /// Notifications and closes the replay decides are dropped (nobody to tell).
    pub(in crate::registry) fn load_snapshot(&mut self, snapshot: &Snapshot, age_ms: u64, now_ms: u64) -> Loaded {
        let mut skipped = Vec::new();
        for group in &snapshot.groups {
            for member in &group.members {
                let registration = replayed(group, member, true);
                if let Err(why) = self.admit_replayed(&registration, group.topics.len()) {
                    skipped.push(Skipped {
                        broker: group.broker_name.chars().take(64).collect(),
                        addr: member.addr.chars().take(64).collect(),
                        why,
                    });
                    continue;
                }
                // Java refuses a first registration with exactly one topic: join with none first.
                if group.topics.len() == 1 {
                    self.register_broker(replayed(group, member, false), now_ms);
                }
                self.register_broker(registration, now_ms);
                if let Some(live) = self.live_mut(&member.cluster, &member.addr) {
                    let silent = member.silent_ms.or(member.provisional_silent_ms).unwrap_or(0);
                    let silent_at_load_ms = silent.saturating_add(age_ms);
                    live.provisional =
                        Some(FromSnapshot { loaded_at_ms: now_ms, silent_at_load_ms, age_at_load_ms: age_ms });
                    live.timeout_ms = live.timeout_ms.saturating_sub(member.provisional_silent_ms.unwrap_or(0));
                }
            }
        }
        self.take_notifications();
        self.take_closing();
        Loaded { provisional: self.provisional_count(), skipped }
    }

    /// Whether a member read back from a snapshot (with `topics` topics) may be loaded: what the
    /// wire checks of a registration.
    fn admit_replayed(&self, reg: &Registration, topics: usize) -> Result<(), SkipReason> {
        reg.names().check()?;
        let max = self.options().max_topics_per_broker;
        if topics > max {
            return Err(SkipReason::TooManyTopics { topics, max });
        }
        Ok(self.check_topic_room(reg)?)
    }

    /// How many live brokers are provisional (loaded and not registered since).
    pub fn provisional_count(&self) -> usize {
        self.live_entries().filter(|(_, l)| l.is_provisional()).count()
    }
}

/// The registration `member` of `group` last made (with its topics, or none).
fn replayed(group: &GroupSnapshot, member: &MemberSnapshot, with_topics: bool) -> Registration {
    let mut topics = TopicTable::with_capacity(if with_topics { group.topics.len() } else { 0 });
    for (name, q) in group.topics.iter().filter(|_| with_topics) {
        let config = TopicConfig {
            topic_name: Some(name.to_string()),
            read_queue_nums: q.read,
            write_queue_nums: q.write,
            perm: q.perm,
            topic_sys_flag: q.sys_flag,
        };
        topics.push(name, &config);
    }
    let (counter, state_version, timestamp) = member.data_version;
    let mappings = group.mappings.iter().filter(|_| with_topics).map(|m| (m.topic.clone(), mapping(group, m)));
    let body = RegisterBody {
        topics,
        data_version: DataVersion { counter, state_version, timestamp },
        filter_servers: member.filter_servers.clone(),
        mappings: mappings.collect(),
    };
    Registration {
        conn: ConnId::SERVER,
        version: member.version,
        cluster: member.cluster.clone(),
        addr: member.addr.clone(),
        broker_name: group.broker_name.clone(),
        broker_id: member.broker_id,
        ha_server_addr: member.ha_server_addr.clone(),
        zone_name: group.zone_name.clone(),
        timeout_ms: Some(member.timeout_ms),
        enable_acting_master: Some(group.enable_acting_master),
        body: FingerprintedBody::new(body),
        access_key: member.access_key.clone(),
    }
}

fn mapping(group: &GroupSnapshot, m: &MappingSnapshot) -> TopicQueueMappingInfo {
    TopicQueueMappingInfo {
        topic: m.topic.clone(),
        scope: m.scope.clone(),
        total_queues: m.total_queues,
        bname: group.broker_name.clone(),
        epoch: m.epoch,
        dirty: m.dirty,
        curr_id_map: m.curr_id_map.clone(),
    }
}

impl From<&QueueData> for QueueSnapshot {
    fn from(q: &QueueData) -> Self {
        Self { read: q.read_queue_nums, write: q.write_queue_nums, perm: q.perm, sys_flag: q.topic_sys_flag }
    }
}
