//! The shapes of a load: which brokers exist, what they register, what clients ask.

use namesrv_protocol::body_crc32;
use namesrv_protocol::{ExtFields, RemotingCommand};

/// One simulated broker and its topics.
#[derive(Debug, Clone)]
pub struct SimBroker {
    pub cluster: String,
    pub name: String,
    pub addr: String,
    pub topics: Vec<String>,
    pub queues: u32,
}

/// C clusters × B brokers each × T topics each, Q queues per topic. Topic names are unique per
/// broker group when `shared_topics` is false; otherwise every broker of a cluster hosts the same
/// T topics (the RIP-29 shape: topics spread over a cluster's brokers).
pub fn brokers(clusters: usize, brokers: usize, topics: usize, queues: u32, shared_topics: bool) -> Vec<SimBroker> {
    let mut out = Vec::with_capacity(clusters * brokers);
    for c in 0..clusters {
        for b in 0..brokers {
            let owner = if shared_topics { format!("c{c}") } else { format!("c{c}-b{b}") };
            out.push(SimBroker {
                cluster: format!("BenchCluster{c}"),
                name: format!("bench-broker-{c}-{b}"),
                addr: doc_addr(c * brokers + b, 10911),
                topics: (0..topics).map(|t| format!("BenchTopic-{owner}-{t}")).collect(),
                queues,
            });
        }
    }
    out
}

/// The documentation-only networks (RFC 5737): no real broker has an address in them, so a load
/// pointed at a real NameServer never replaces a real broker's registration (address reuse).
const DOC_NETS: [&str; 3] = ["192.0.2", "198.51.100", "203.0.113"];
/// Hosts in [`DOC_NETS`].
const DOC_HOSTS: usize = 3 * 254;

/// The address of simulated broker `index`: a host in the documentation-only networks, and past
/// their 762 hosts the port moves on by 4 a round, so every index below about ten million has
/// an address of its own.
pub fn doc_addr(index: usize, port: u16) -> String {
    let host = index % DOC_HOSTS;
    let port = (usize::from(port) + 4 * (index / DOC_HOSTS)) % 65_536;
    format!("{}.{}:{port}", DOC_NETS[host / 254], host % 254 + 1)
}

/// Every distinct topic of a broker set.
pub fn all_topics(brokers: &[SimBroker]) -> Vec<String> {
    let mut topics: Vec<String> = brokers.iter().flat_map(|b| b.topics.iter().cloned()).collect();
    topics.sort();
    topics.dedup();
    topics
}

/// A broker's register body built once, re-stamped with a new dataVersion counter per request,
/// so a storm of full registrations costs the load tool a copy and a CRC, not a rebuild (which
/// would stall its own event loop and inflate the route latencies it measures).
pub struct RegisterTemplate {
    broker: SimBroker,
    body: Vec<u8>,
    counter_at: usize,
}

/// Counters are written with this many digits, so the template can be patched in place.
const COUNTER_DIGITS: usize = 10;
const COUNTER_BASE: u64 = 1_000_000_000;

impl RegisterTemplate {
    /// Builds the body of `broker` once.
    pub fn new(broker: &SimBroker) -> Self {
        let body = register_body(broker, COUNTER_BASE);
        let marker = b"\"counter\":";
        let counter_at = body.windows(marker.len()).position(|w| w == marker).map_or(0, |i| i + marker.len());
        Self { broker: broker.clone(), body, counter_at }
    }

    /// The REGISTER_BROKER with data version `counter` (below 9,000,000,000).
    pub fn request(&self, counter: u64) -> RemotingCommand {
        let mut body = self.body.clone();
        let digits = format!("{:0width$}", COUNTER_BASE + counter, width = COUNTER_DIGITS);
        body[self.counter_at..self.counter_at + COUNTER_DIGITS].copy_from_slice(digits.as_bytes());
        with_header(&self.broker, body)
    }
}

/// A 5.x broker's REGISTER_BROKER with its full topic table and data version `counter`.
pub fn register_request(broker: &SimBroker, counter: u64) -> RemotingCommand {
    with_header(broker, register_body(broker, counter))
}

fn with_header(broker: &SimBroker, body: Vec<u8>) -> RemotingCommand {
    let ext = ExtFields::new()
        .with("brokerName", &broker.name)
        .with("brokerAddr", &broker.addr)
        .with("clusterName", &broker.cluster)
        .with("haServerAddr", broker.addr.replace(":10911", ":10912"))
        .with("brokerId", "0")
        .with("enableActingMaster", "false")
        .with("compressed", "false")
        .with("bodyCrc32", body_crc32(&body).to_string());
    RemotingCommand::request(103, Some(ext)).with_body(body)
}

/// The RegisterBrokerBody JSON, shaped like a 5.x broker's.
pub fn register_body(broker: &SimBroker, counter: u64) -> Vec<u8> {
    let mut out = String::with_capacity(64 + broker.topics.len() * 200);
    out.push_str("{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":");
    out.push_str(&counter.to_string());
    out.push_str(",\"stateVersion\":0,\"timestamp\":1700000000000},\"mappingDataVersion\":{\"counter\":0,\"stateVersion\":0,\"timestamp\":0},\"topicConfigTable\":{");
    for (i, t) in broker.topics.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let q = broker.queues;
        out.push_str(&format!(
            "\"{t}\":{{\"attributes\":{{}},\"order\":false,\"perm\":6,\"readQueueNums\":{q},\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"{t}\",\"topicSysFlag\":0,\"writeQueueNums\":{q}}}"
        ));
    }
    out.push_str("},\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}}");
    out.into_bytes()
}

/// A GET_ROUTEINFO_BY_TOPIC as a 5.x client sends it.
pub fn route_request(topic: &str) -> RemotingCommand {
    RemotingCommand::request(105, Some(ExtFields::new().with("topic", topic)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_brokers_get_distinct_documentation_only_addresses() {
        let all = brokers(30, 100, 1, 1, false);
        let mut addrs: Vec<&str> = all.iter().map(|b| b.addr.as_str()).collect();
        assert!(addrs.iter().all(|a| DOC_NETS.iter().any(|net| a.starts_with(&format!("{net}.")))), "{addrs:?}");
        addrs.sort_unstable();
        addrs.dedup();
        assert_eq!(addrs.len(), 3_000);
        assert_eq!(doc_addr(0, 10911), "192.0.2.1:10911");
        assert_eq!(doc_addr(761, 10911), "203.0.113.254:10911");
        assert_eq!(doc_addr(762, 10911), "192.0.2.1:10915");
    }
}
