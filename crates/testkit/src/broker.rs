//! One broker instance and the requests it sends: REGISTER_BROKER with its body (as a 5.x
//! broker writes it), and the requests that carry its identity.

use namesrv::model::DataVersion;
use namesrv::protocol::{body_crc32, ExtFields, RemotingCommand};
use serde_json::{json, Value};

/// One broker instance and what it registers.
#[derive(Debug, Clone)]
pub struct Broker {
    /// Cluster name.
    pub cluster: String,
    /// Group (broker) name.
    pub name: String,
    /// Broker id (0 the master).
    pub id: i64,
    /// `ip:port` it registers.
    pub addr: String,
    /// Its HA address.
    pub ha_addr: String,
    /// (topic, perm, queues)
    pub topics: Vec<(String, i32, i32)>,
    /// The data version of its topic table.
    pub data_version: DataVersion,
    /// `enableActingMaster`, when sent.
    pub enable_acting_master: Option<bool>,
    /// `heartbeatTimeoutMillis`, when sent.
    pub heartbeat_timeout_ms: Option<u64>,
    /// `__ZONE_NAME`, when sent.
    pub zone: Option<String>,
    /// The request's version (479: 5.x).
    pub version: i32,
}

impl Broker {
    /// A 5.x broker (enableActingMaster=false) with no topics.
    pub fn new(cluster: &str, name: &str, id: i64, addr: &str) -> Self {
        Broker {
            cluster: cluster.into(),
            name: name.into(),
            id,
            addr: addr.into(),
            ha_addr: format!("{addr}-ha"),
            topics: Vec::new(),
            data_version: DataVersion { counter: 1, state_version: 0, timestamp: 1_700_000_000_000 },
            enable_acting_master: Some(false),
            heartbeat_timeout_ms: None,
            zone: None,
            version: 479,
        }
    }

    /// Sets the topics (perm 6, 8 queues each). A first registration must not carry exactly
    /// one topic: Java's NameServer (and namesrv) refuses it.
    pub fn topics<S: AsRef<str>>(mut self, names: &[S]) -> Self {
        self.topics = names.iter().map(|n| (n.as_ref().to_owned(), 6, 8)).collect();
        self
    }

    /// Bumps the data version counter (a topic-config change).
    pub fn bump(mut self) -> Self {
        self.data_version.counter += 1;
        self
    }

    /// The RegisterBrokerBody JSON (with every field the rocketmq-rust NameServer requires:
    /// `attributes`, `mappingDataVersion`).
    pub fn body_json(&self) -> Vec<u8> {
        let table: serde_json::Map<String, Value> = self
            .topics
            .iter()
            .map(|(t, perm, q)| {
                (t.clone(), json!({"attributes":{},"order":false,"perm":perm,"readQueueNums":q,"topicFilterType":"SINGLE_TAG","topicName":t,"topicSysFlag":0,"writeQueueNums":q}))
            })
            .collect();
        let dv = &self.data_version;
        let body = json!({
            "filterServerList": [],
            "topicConfigSerializeWrapper": {
                "dataVersion": {"counter": dv.counter, "stateVersion": dv.state_version, "timestamp": dv.timestamp},
                "mappingDataVersion": {"counter": 0, "stateVersion": 0, "timestamp": 0},
                "topicConfigTable": table,
                "topicQueueMappingDetailMap": {},
                "topicQueueMappingInfoMap": {}
            }
        });
        serde_json::to_vec(&body).unwrap()
    }

    /// REGISTER_BROKER as a 5.x broker sends it (with bodyCrc32).
    pub fn register_request(&self) -> RemotingCommand {
        let body = self.body_json();
        let mut ext = ExtFields::new()
            .with("brokerName", &self.name)
            .with("brokerAddr", &self.addr)
            .with("clusterName", &self.cluster)
            .with("haServerAddr", &self.ha_addr)
            .with("brokerId", self.id.to_string())
            .with("compressed", "false")
            .with("bodyCrc32", body_crc32(&body).to_string());
        if let Some(eam) = self.enable_acting_master {
            ext.insert("enableActingMaster", eam.to_string());
        }
        if let Some(ms) = self.heartbeat_timeout_ms {
            ext.insert("heartbeatTimeoutMillis", ms.to_string());
        }
        if let Some(zone) = &self.zone {
            ext.insert("__ZONE_NAME", zone);
        }
        let mut cmd = RemotingCommand::request(103, Some(ext)).with_body(body);
        cmd.version = self.version;
        cmd
    }

    /// A request with the identity fields (UNREGISTER_BROKER, QUERY_DATA_VERSION, ...).
    pub fn identity_request(&self, code: i32) -> RemotingCommand {
        let ext = ExtFields::new()
            .with("brokerName", &self.name)
            .with("brokerAddr", &self.addr)
            .with("clusterName", &self.cluster)
            .with("brokerId", self.id.to_string());
        RemotingCommand::request(code, Some(ext))
    }
}
