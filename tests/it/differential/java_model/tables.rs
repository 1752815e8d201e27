//! Java's `RouteInfoManager` tables and `KVConfigManager` table as plain ordered maps, with the
//! JSON each piece shows in response bodies (field names as fastjson writes them).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

/// Identifies one TCP connection of the test (Java's `Channel`, compared by identity).
pub type ConnId = u32;

/// `BrokerAddrInfo`: the key of the live and filter-server tables.
pub type AddrKey = (String, String);

/// `DataVersion`: compared on all three fields (`DataVersion.equals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dv {
    pub counter: i64,
    pub state_version: i64,
    pub timestamp: i64,
}

impl Dv {
    /// `DataVersion` as fastjson writes it.
    pub fn to_json(self) -> Value {
        json!({"counter": self.counter, "stateVersion": self.state_version, "timestamp": self.timestamp})
    }
}

/// `QueueData` without its broker name (the name is the key it is stored under).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueData {
    pub read: i32,
    pub write: i32,
    pub perm: i32,
    pub sys_flag: i32,
}

impl QueueData {
    /// `QueueData` as fastjson writes it.
    pub fn to_json(self, broker_name: &str) -> Value {
        json!({
            "brokerName": broker_name,
            "perm": self.perm,
            "readQueueNums": self.read,
            "topicSysFlag": self.sys_flag,
            "writeQueueNums": self.write,
        })
    }
}

/// `BrokerData`: one broker group. `cluster` is fixed when the group is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerData {
    pub cluster: String,
    pub name: String,
    pub addrs: BTreeMap<i64, String>,
    pub zone: Option<String>,
    pub acting_master: bool,
}

impl BrokerData {
    /// The lowest id of the group, as `Collections.min(brokerAddrs.keySet())`.
    pub fn min_id(&self) -> Option<i64> {
        self.addrs.keys().next().copied()
    }

    /// `BrokerData` as fastjson writes it (a null `zoneName` is left out).
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("brokerAddrs".into(), addrs_json(&self.addrs));
        obj.insert("brokerName".into(), json!(self.name));
        obj.insert("cluster".into(), json!(self.cluster));
        obj.insert("enableActingMaster".into(), json!(self.acting_master));
        if let Some(zone) = &self.zone {
            obj.insert("zoneName".into(), json!(zone));
        }
        Value::Object(obj)
    }
}

/// A `HashMap<Long, String>` of broker addresses, keys as strings once parsed.
pub fn addrs_json(addrs: &BTreeMap<i64, String>) -> Value {
    Value::Object(addrs.iter().map(|(id, addr)| (id.to_string(), json!(addr))).collect())
}

/// `BrokerLiveInfo`, plus the name and id of the registration that wrote it (Java does not keep
/// them; only the namesrv exceptions need them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    pub conn: ConnId,
    pub dv: Dv,
    pub ha: String,
    pub name: String,
    pub id: i64,
}

/// Every table the NameServer answers from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tables {
    /// `topicQueueTable`: topic → broker name → queues.
    pub topics: BTreeMap<String, BTreeMap<String, QueueData>>,
    /// `brokerAddrTable`: broker name → group.
    pub brokers: BTreeMap<String, BrokerData>,
    /// `clusterAddrTable`: cluster → broker names.
    pub clusters: BTreeMap<String, BTreeSet<String>>,
    /// `brokerLiveTable`.
    pub live: BTreeMap<AddrKey, Live>,
    /// `filterServerTable`.
    pub filters: BTreeMap<AddrKey, Vec<String>>,
    /// `KVConfigManager.configTable`: namespace → key → value.
    pub kv: BTreeMap<String, BTreeMap<String, String>>,
}

impl Tables {
    /// The key of `(cluster, addr)`.
    pub fn key(cluster: &str, addr: &str) -> AddrKey {
        (cluster.to_owned(), addr.to_owned())
    }

    /// Names of the groups that list `addr` under any id.
    pub fn groups_listing(&self, addr: &str) -> Vec<String> {
        self.brokers.values().filter(|b| b.addrs.values().any(|a| a == addr)).map(|b| b.name.clone()).collect()
    }

    /// Removes every topic whose queue map is empty.
    pub fn drop_empty_topics(&mut self) {
        self.topics.retain(|_, queues| !queues.is_empty());
    }
}
