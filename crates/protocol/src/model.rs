//! Plain RocketMQ route values shared by the wire bodies and the registry (Java's `QueueData`,
//! `BrokerData`, `DataVersion`, `TopicConfig`, `TopicQueueMappingInfo`). No wire format here:
//! reading and writing them is `protocol`'s job.

use std::collections::BTreeMap;

/// Permission bit: clients may write (send) to the queues.
pub const PERM_WRITE: i32 = 2;
/// Permission bit: clients may read (consume) from the queues.
pub const PERM_READ: i32 = 4;
/// Broker id of a master.
pub const MASTER_ID: i64 = 0;

/// A broker's topic-config version; equality of all three fields is all the NameServer tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DataVersion {
    /// Bumped on every topic-config change.
    pub counter: i64,
    /// Master/slave-switch generation (5.x); missing in 4.x bodies.
    pub state_version: i64,
    /// Time of the last change, in ms.
    pub timestamp: i64,
}

/// The part of a broker's TopicConfig the NameServer uses to build queue data (Java's `TopicConfig`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicConfig {
    /// Topic name; `None` when the body left it out (the map key is used then).
    pub topic_name: Option<String>,
    /// Readable queues.
    pub read_queue_nums: i32,
    /// Writable queues.
    pub write_queue_nums: i32,
    /// PERM_* bits.
    pub perm: i32,
    /// UNIT / UNIT_SUB flags.
    pub topic_sys_flag: i32,
}

impl Default for TopicConfig {
    fn default() -> Self {
        Self { topic_name: None, read_queue_nums: 16, write_queue_nums: 16, perm: 6, topic_sys_flag: 0 }
    }
}

/// One broker group's queues for a topic (Java's `QueueData`); the broker name is the map key around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueData {
    /// Readable queues.
    pub read_queue_nums: i32,
    /// Writable queues.
    pub write_queue_nums: i32,
    /// PERM_* bits.
    pub perm: i32,
    /// UNIT / UNIT_SUB flags.
    pub topic_sys_flag: i32,
}

impl From<&TopicConfig> for QueueData {
    fn from(tc: &TopicConfig) -> Self {
        Self {
            read_queue_nums: tc.read_queue_nums,
            write_queue_nums: tc.write_queue_nums,
            perm: tc.perm,
            topic_sys_flag: tc.topic_sys_flag,
        }
    }
}

/// One broker group: its cluster and the address of each member by broker id (Java's `BrokerData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerData {
    /// Cluster name, fixed when the group is first seen.
    pub cluster: String,
    /// Group name.
    pub broker_name: String,
    /// Broker id to `ip:port`; id 0 is the master.
    pub broker_addrs: BTreeMap<i64, String>,
    /// Zone of the latest registering member.
    pub zone_name: Option<String>,
    /// Whether the group runs in acting-master mode.
    pub enable_acting_master: bool,
}

impl BrokerData {
    /// A group with no members yet.
    pub fn new(cluster: &str, broker_name: &str) -> Self {
        Self {
            cluster: cluster.to_owned(),
            broker_name: broker_name.to_owned(),
            broker_addrs: BTreeMap::new(),
            zone_name: None,
            enable_acting_master: false,
        }
    }

    /// The smallest broker id in the group, if it has members.
    pub fn min_id(&self) -> Option<i64> {
        self.broker_addrs.keys().next().copied()
    }
}

/// Static-topic queue mapping of one hosting broker (Java's `TopicQueueMappingInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicQueueMappingInfo {
    /// Topic name.
    pub topic: String,
    /// Mapping scope.
    pub scope: String,
    /// Queues of the static topic.
    pub total_queues: i32,
    /// The hosting broker.
    pub bname: String,
    /// Mapping epoch.
    pub epoch: i64,
    /// Whether the mapping is dirty.
    pub dirty: bool,
    /// Global queue id to local queue id.
    pub curr_id_map: BTreeMap<i64, i64>,
}

impl Default for TopicQueueMappingInfo {
    fn default() -> Self {
        Self {
            topic: String::new(),
            scope: "__global__".into(),
            total_queues: 0,
            bname: String::new(),
            epoch: 0,
            dirty: false,
            curr_id_map: BTreeMap::new(),
        }
    }
}

/// The topic table of a register body, with every name in one buffer: built and freed with a
/// few allocations whatever the topic count, so dropping a 10k-topic registration in the
/// registry costs nothing measurable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicTable {
    text: String,
    entries: Vec<TopicEntry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TopicEntry {
    key: (u32, u32),
    name: (u32, u32),
    queue: QueueData,
}

/// One topic of a [`TopicTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicRef<'a> {
    /// The key the body's `topicConfigTable` used.
    pub key: &'a str,
    /// The topic name queue data is stored under (the config's `topicName`, else the key).
    pub name: &'a str,
    /// The queues the broker offers.
    pub queue: QueueData,
}

impl TopicTable {
    /// An empty table with room for `topics` entries.
    pub fn with_capacity(topics: usize) -> Self {
        Self { text: String::with_capacity(topics * 24), entries: Vec::with_capacity(topics) }
    }

    fn span(&mut self, s: &str) -> (u32, u32) {
        let start = self.text.len() as u32;
        self.text.push_str(s);
        (start, s.len() as u32)
    }

    /// Adds a topic config under its body key.
    pub fn push(&mut self, key: &str, config: &TopicConfig) {
        self.push_parts(key, config.topic_name.as_deref(), QueueData::from(config));
    }

    /// Adds a topic under its body key; `name` is the config's `topicName`, when it has one.
    pub fn push_parts(&mut self, key: &str, name: Option<&str>, queue: QueueData) {
        let key_span = self.span(key);
        let name_span = match name {
            Some(name) if name != key => self.span(name),
            _ => key_span,
        };
        self.entries.push(TopicEntry { key: key_span, name: name_span, queue });
    }

    /// Number of topics.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no topics.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The topics in body order.
    pub fn iter(&self) -> impl Iterator<Item = TopicRef<'_>> {
        let text = &self.text;
        let slice = move |(start, len): (u32, u32)| &text[start as usize..(start + len) as usize];
        self.entries.iter().map(move |e| TopicRef { key: slice(e.key), name: slice(e.name), queue: e.queue })
    }
}
