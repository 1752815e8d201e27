//! `churn`: brokers restarting as a Kubernetes fleet does — new names, addresses other brokers
//! used before, connections closed or left silent until they expire, plain and compressed
//! bodies — with route queries alongside. When it stops, every broker must go within one
//! timeout plus a scan; the server's memory and open files are sampled when its PID is given.

use std::cell::{Cell, RefCell};
use std::io::{self, Write};
use std::rc::Rc;
use std::time::{Duration, Instant};

use clap::Args;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use namesrv_protocol::body_crc32;
use namesrv_protocol::{ExtFields, RemotingCommand};
use serde_json::{json, Value};

use crate::conn::{Conn, Target};
use crate::procfs::{open_fds, rss_kib};
use crate::stats::{Rng, Samples};
use crate::workload;

/// Churn parameters.
#[derive(Args, Debug, Clone)]
pub struct Churn {
    /// Broker slots, each running one broker incarnation after another.
    #[arg(long, default_value_t = 40)]
    slots: usize,
    /// Seconds of churn.
    #[arg(long, default_value_t = 60.0)]
    duration: f64,
    /// heartbeatTimeoutMillis the brokers register with.
    #[arg(long, default_value_t = 2000)]
    broker_timeout_ms: u64,
    /// The server's expiry scan period, to know how long to wait at the end.
    #[arg(long, default_value_t = 500)]
    scan_interval_ms: u64,
    /// Connections sending route queries throughout.
    #[arg(long, default_value_t = 4)]
    route_connections: usize,
    /// PID of the server, to sample its resident memory and open files (Linux).
    #[arg(long)]
    server_pid: Option<u32>,
    /// Seconds into the run at which the reference RSS is taken (default: 60, or a third of a
    /// shorter run).
    #[arg(long)]
    rss_reference_secs: Option<f64>,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// Topic names brokers pick from.
const TOPIC_POOL: usize = 50;

/// What the slots did.
#[derive(Default)]
struct Tally {
    incarnations: u64,
    registrations: u64,
    failed: u64,
    closed: u64,
    left_silent: u64,
}

impl Tally {
    fn count_registration(&mut self, ok: bool) {
        self.registrations += 1;
        self.failed += u64::from(!ok);
    }
}

/// Runs the churn and reports; `leftover_brokers` must be 0.
pub async fn run(target: &Target, churn: &Churn) -> io::Result<Value> {
    let fds_baseline = churn.server_pid.and_then(open_fds);
    let begin = Instant::now();
    let stop = begin + Duration::from_secs_f64(churn.duration);
    let tally = Rc::new(RefCell::new(Tally::default()));
    let silent: Rc<Cell<usize>> = Rc::default();
    let mut tasks = Vec::new();
    for slot in 0..churn.slots {
        let (target, churn, tally, silent) = (target.clone(), churn.clone(), tally.clone(), silent.clone());
        tasks.push(tokio::task::spawn_local(async move { run_slot(&target, slot, &churn, stop, tally, silent).await }));
    }
    let routes = route_load(target, churn, stop);
    let reference_at = churn.rss_reference_secs.unwrap_or((churn.duration / 3.0).min(60.0));
    let rss_reference = sample_rss_at(churn.server_pid, begin + Duration::from_secs_f64(reference_at));
    let (route, rss_reference) = tokio::join!(routes, rss_reference);
    for task in tasks {
        task.await.map_err(io::Error::other)?;
    }
    let rss_end = churn.server_pid.and_then(rss_kib);
    // The silent connections stay open: their brokers must expire, not go with a close, and the
    // server must close them.
    let (leftover, settle) = settle(target, churn).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let silent_open = silent.get();
    let fds_end = churn.server_pid.and_then(open_fds);
    let t = tally.borrow();
    Ok(json!({
        "scenario": "churn", "slots": churn.slots, "seconds": churn.duration,
        "incarnations": t.incarnations, "registrations": t.registrations, "failed": t.failed,
        "closed": t.closed, "left_to_expire": t.left_silent,
        "route": route?.summary(churn.duration),
        "leftover_brokers": leftover.len(), "leftover": leftover, "settle_seconds": settle,
        "rss_kib_reference": rss_reference, "rss_reference_secs": reference_at, "rss_kib_end": rss_end,
        "rss_ratio": rss_end.zip(rss_reference).map(|(end, r)| end as f64 / r.max(1) as f64),
        "fds_baseline": fds_baseline, "fds_end": fds_end, "silent_still_open": silent_open,
    }))
}

/// One slot: broker incarnations until `stop`, each a new name at a random port of the slot's
/// address, registering a few times and then closing its connection or going silent.
async fn run_slot(
    target: &Target,
    slot: usize,
    c: &Churn,
    stop: Instant,
    tally: Rc<RefCell<Tally>>,
    silent: Rc<Cell<usize>>,
) {
    let mut rng = Rng::new(c.seed ^ (slot as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    while Instant::now() < stop {
        let Ok(mut conn) = Conn::connect(target).await else {
            tally.borrow_mut().failed += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let broker = Incarnation::random(slot, &mut rng, c.broker_timeout_ms);
        tally.borrow_mut().incarnations += 1;
        for round in 0..1 + rng.below(4) {
            let ok = matches!(conn.call(broker.request(round as i64 + 1)).await, Ok(a) if a.code == 0);
            tally.borrow_mut().count_registration(ok);
            tokio::time::sleep(Duration::from_millis(50 + rng.below(250) as u64)).await;
        }
        if rng.below(2) == 0 {
            tally.borrow_mut().closed += 1;
            drop(conn);
        } else {
            // Silent until the server closes it (its broker expired or was replaced).
            tally.borrow_mut().left_silent += 1;
            let silent = silent.clone();
            silent.set(silent.get() + 1);
            tokio::task::spawn_local(async move {
                let _ = conn.next_answer().await;
                silent.set(silent.get() - 1);
            });
        }
    }
}

/// One broker incarnation of a slot.
struct Incarnation {
    name: String,
    addr: String,
    topics: Vec<String>,
    compressed: bool,
    timeout_ms: u64,
}

impl Incarnation {
    fn random(slot: usize, rng: &mut Rng, timeout_ms: u64) -> Self {
        let topics = (0..2 + rng.below(5)).map(|_| format!("ChurnTopic-{}", rng.below(TOPIC_POOL))).collect();
        Incarnation {
            name: format!("churn-{slot}-{}", rng.below(1_000_000)),
            // One of the slot's four documentation-only addresses (distinct from other slots').
            addr: workload::doc_addr(slot, 30_000 + rng.below(4) as u16),
            topics,
            compressed: rng.below(10) < 3,
            timeout_ms,
        }
    }

    /// REGISTER_BROKER with data version `counter`, its body plain or compressed.
    fn request(&self, counter: i64) -> RemotingCommand {
        let body = if self.compressed { self.compressed_body(counter) } else { self.json_body(counter) };
        let ext = ExtFields::new()
            .with("brokerName", &self.name)
            .with("brokerAddr", &self.addr)
            .with("clusterName", "ChurnCluster")
            .with("haServerAddr", &self.addr)
            .with("brokerId", "0")
            .with("enableActingMaster", "false")
            .with("heartbeatTimeoutMillis", self.timeout_ms.to_string())
            .with("compressed", self.compressed.to_string())
            .with("bodyCrc32", body_crc32(&body).to_string());
        RemotingCommand::request(103, Some(ext)).with_body(body)
    }

    fn json_body(&self, counter: i64) -> Vec<u8> {
        let broker = workload::SimBroker {
            cluster: "ChurnCluster".into(),
            name: self.name.clone(),
            addr: self.addr.clone(),
            topics: self.topics.clone(),
            queues: 4,
        };
        workload::register_body(&broker, counter as u64)
    }

    /// The compressed form Java's `RegisterBrokerBody.encode(true)` writes (zlib).
    fn compressed_body(&self, counter: i64) -> Vec<u8> {
        let mut stream = Vec::new();
        let mut chunk = |bytes: &[u8]| {
            stream.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
            stream.extend_from_slice(bytes);
        };
        chunk(format!(r#"{{"counter":{counter},"stateVersion":0,"timestamp":1}}"#).as_bytes());
        let mut lines = (self.topics.len() as i32).to_be_bytes().to_vec();
        for t in &self.topics {
            let line = format!("{t} 4 4 6 SINGLE_TAG {{}}");
            lines.extend_from_slice(&(line.len() as i32).to_be_bytes());
            lines.extend_from_slice(line.as_bytes());
        }
        stream.extend_from_slice(&lines);
        let mut chunk = |bytes: &[u8]| {
            stream.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
            stream.extend_from_slice(bytes);
        };
        chunk(b"[]");
        stream.extend_from_slice(&0i32.to_be_bytes());
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::fast());
        let _ = zlib.write_all(&stream);
        zlib.finish().unwrap_or_default()
    }
}

/// Route queries over the topic pool until `stop`.
async fn route_load(target: &Target, churn: &Churn, stop: Instant) -> io::Result<Samples> {
    let mut tasks = Vec::new();
    for c in 0..churn.route_connections {
        let mut conn = Conn::connect(target).await?;
        let mut rng = Rng::new(churn.seed.wrapping_add(c as u64 * 7919));
        tasks.push(tokio::task::spawn_local(async move {
            let mut samples = Samples::default();
            while Instant::now() < stop {
                let topic = format!("ChurnTopic-{}", rng.below(TOPIC_POOL));
                let answer = conn.call(workload::route_request(&topic)).await?;
                // TOPIC_NOT_EXIST is a normal answer while brokers come and go.
                samples.record(answer.latency_us, answer.code == 0 || answer.code == 17, answer.body_len);
            }
            Ok::<Samples, io::Error>(samples)
        }));
    }
    let mut samples = Samples::default();
    for task in tasks {
        samples.merge(task.await.map_err(io::Error::other)??);
    }
    Ok(samples)
}

/// Waits, at most one broker timeout plus one scan (and 300 ms for the last requests in flight
/// and this poll), until no broker is listed; returns the names still listed and how long it took.
async fn settle(target: &Target, churn: &Churn) -> io::Result<(Vec<String>, f64)> {
    let begin = Instant::now();
    let deadline = begin + Duration::from_millis(churn.broker_timeout_ms + churn.scan_interval_ms + 300);
    let mut conn = Conn::connect(target).await?;
    loop {
        let answer = conn.call_body(RemotingCommand::request(106, None)).await?;
        let info: Value = namesrv_protocol::json::lenient::parse_lenient(&answer).map_err(io::Error::other)?;
        let listed: Vec<String> =
            info["brokerAddrTable"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        if listed.is_empty() || Instant::now() >= deadline {
            return Ok((listed, begin.elapsed().as_secs_f64()));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The server's RSS when `at` comes.
async fn sample_rss_at(pid: Option<u32>, at: Instant) -> Option<u64> {
    tokio::time::sleep_until(at.into()).await;
    pid.and_then(rss_kib)
}
