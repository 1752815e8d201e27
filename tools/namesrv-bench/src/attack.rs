//! `attack`: what one hostile peer can try, with a probe connection asking for a route every
//! 20 ms throughout and the server's resident memory sampled every 100 ms. Each attack reports
//! the probe's worst latency and the peak RSS, for `scripts/hostile.sh` to hold against bounds.

use std::cell::Cell;
use std::io::{self, Write};
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use clap::ValueEnum;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use namesrv_protocol::body_crc32;
use namesrv_protocol::codec::encode_frame;
use namesrv_protocol::{ExtFields, RemotingCommand};
use serde_json::{json, Value};

use crate::conn::{Conn, Target};
use crate::procfs::rss_kib;
use crate::stats::Samples;
use crate::workload::{self, SimBroker};

/// The attacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// 6,000 pipelined GET_ALL_TOPIC_LIST over 20,000 topics, never read.
    #[value(name = "unread-206")]
    Unread206,
    /// 100,000 pipelined route queries, never read.
    UnreadRoute,
    /// 300 connections announcing 16 MiB frames and trickling 3 MB each.
    Slowloris,
    /// 20 pipelined 64 KB compressed bodies that inflate past 60 MB each.
    Bombs,
    /// 1 MiB names, a compressed body of 1M topics, and runtime config that would switch
    /// routing off or break the next start.
    Names,
    /// A KV store filled to its limit with 1 MiB values, puts timed, a 15 MiB value.
    Kv,
    /// 200,000 topics; 8 HTTP clients searching them (with `--http`) and a connection
    /// pipelining GET_UNIT_TOPIC_LIST and GET_TOPICS_BY_CLUSTER.
    Listings,
    /// From 127.0.0.2: 64 connections sending only a 16 MiB frame's prefix; 45 honest
    /// registrations of 1,500 topics beside them.
    IdlePrefixes,
    /// From 127.0.0.2: 300 connections leaving 200 topic lists of 45 KB each unread; 20 honest
    /// registrations beside them.
    UnreadSmall,
    /// From 127.0.0.2: 1,000 connections that never send a byte; 20 honest registrations and
    /// 20 honest route queries beside them.
    IdleSlots,
    /// From 127.0.0.2: 500 idle HTTP connections (with `--http`); 21 KV puts beside them.
    HttpIdle,
    /// From 127.0.0.2, over 200,000 topics: pipelined registration changes and cluster
    /// listings; a silent broker with a 3 s timeout must expire and /livez (with `--http`) answer.
    ListingChurn,
    /// From 127.0.0.2: broker groups registering the same 50,000 topics until refused; 5
    /// honest brokers re-registering beside them.
    FanOut,
}

/// Runs one attack against `target` (HTTP endpoint `http`, for the attacks that use it) for about
/// `seconds`.
pub async fn run(
    target: &Target,
    http: Option<&str>,
    kind: Kind,
    seconds: f64,
    server_pid: Option<u32>,
) -> io::Result<Value> {
    let setup = setup(target, kind).await?;
    let stop = Instant::now() + Duration::from_secs_f64(seconds);
    let rss = Rc::new(Cell::new(server_pid.and_then(rss_kib).unwrap_or(0)));
    let sampler = tokio::task::spawn_local(sample_rss(server_pid, rss.clone(), stop));
    let errors = Rc::new(Cell::new(0));
    let probe = tokio::task::spawn_local(probe(target.clone(), setup.probe_topic.clone(), stop, errors.clone()));
    let mut held = Vec::new();
    let detail = match kind {
        Kind::Unread206 => unread(target, RemotingCommand::request(206, None), 6_000, &mut held).await?,
        Kind::UnreadRoute => unread(target, workload::route_request(&setup.probe_topic), 100_000, &mut held).await?,
        Kind::Slowloris => slowloris(target, 300, stop).await,
        Kind::Bombs => bombs(target, 20).await?,
        Kind::Names => names(target).await?,
        Kind::Kv => kv(target).await?,
        Kind::Listings => crate::listings::run(target, http, "AttackCluster", stop).await?,
        Kind::IdlePrefixes => crate::fair::idle_prefixes(target, stop).await,
        Kind::UnreadSmall => crate::fair::unread_small(target, stop).await?,
        Kind::IdleSlots => crate::fair::idle_slots(target, &setup.probe_topic, stop).await,
        Kind::HttpIdle => crate::fair::http_idle(target, http, stop).await?,
        Kind::ListingChurn => crate::starve::run(target, http, "AttackCluster", stop).await?,
        Kind::FanOut => crate::fair::fan_out(target, stop).await?,
    };
    let summary = probe.await.map_err(io::Error::other)??.summary(seconds);
    sampler.await.map_err(io::Error::other)?;
    drop((setup, held));
    Ok(json!({
        "scenario": "attack", "attack": format!("{kind:?}"), "seconds": seconds,
        "peak_rss_kib": rss.get(), "probe": summary, "probe_errors": errors.get(),
        "probe_max_ms": summary.max_us as f64 / 1000.0, "detail": detail,
    }))
}

/// Brokers registered before the attack, held until it ends.
struct Setup {
    _held: Vec<Conn>,
    probe_topic: String,
}

async fn setup(target: &Target, kind: Kind) -> io::Result<Setup> {
    let topics = match kind {
        Kind::Unread206 => 20_000,
        Kind::UnreadSmall => 2_000,
        _ => 100,
    };
    let broker = SimBroker {
        cluster: "AttackCluster".into(),
        name: "attack-broker".into(),
        addr: "198.51.100.201:20911".into(),
        topics: (0..topics).map(|t| format!("AttackTopic-{t}")).collect(),
        queues: 8,
    };
    let mut conn = Conn::connect(target).await?;
    let answer = conn.call(workload::register_request(&broker, 1)).await?;
    if answer.code != 0 {
        return Err(io::Error::other(format!("setup registration answered code {}", answer.code)));
    }
    let mut held = vec![conn];
    if matches!(kind, Kind::Listings | Kind::ListingChurn) {
        // 10 more groups of 20,000 topics each in the same cluster: 200,100 topics in all.
        for b in 0..10 {
            let group = SimBroker {
                cluster: broker.cluster.clone(),
                name: format!("listing-broker-{b}"),
                addr: workload::doc_addr(b, 21911),
                topics: (0..20_000).map(|t| format!("ListingTopic-{b}-{t}")).collect(),
                queues: 8,
            };
            let mut conn = Conn::connect(target).await?;
            let answer = conn.call(workload::register_request(&group, 1)).await?;
            if answer.code != 0 {
                return Err(io::Error::other(format!("setup registration answered code {}", answer.code)));
            }
            held.push(conn);
        }
    }
    Ok(Setup { _held: held, probe_topic: broker.topics[7].clone() })
}

/// A route query every 20 ms until `stop`; each answer's latency is recorded.
async fn probe(target: Target, topic: String, stop: Instant, errors: Rc<Cell<u64>>) -> io::Result<Samples> {
    let mut conn = Conn::connect(&target).await?;
    let mut samples = Samples::default();
    while Instant::now() < stop {
        match tokio::time::timeout(Duration::from_secs(5), conn.call(workload::route_request(&topic))).await {
            Ok(Ok(answer)) => samples.record(answer.latency_us, answer.code == 0, answer.body_len),
            _ => {
                errors.set(errors.get() + 1);
                samples.record(5_000_000, false, 0);
                conn = Conn::connect(&target).await?;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(samples)
}

async fn sample_rss(pid: Option<u32>, peak: Rc<Cell<u64>>, stop: Instant) {
    let Some(pid) = pid else {
        return;
    };
    while Instant::now() < stop + Duration::from_millis(500) {
        if let Some(kib) = rss_kib(pid) {
            peak.set(peak.get().max(kib));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Writes `count` copies of `request` on one connection and never reads; the connection is
/// left open in `held` until the attack ends.
async fn unread(
    target: &Target,
    request: RemotingCommand,
    count: usize,
    held: &mut Vec<namesrv_client::Conn>,
) -> io::Result<Value> {
    let mut conn = target.connect_raw().await?;
    let mut frames = BytesMut::new();
    for opaque in 0..count {
        encode_frame(&request.clone().with_opaque(opaque as i32), &mut frames).map_err(io::Error::other)?;
    }
    let begin = Instant::now();
    // The server stops reading at its marks, so this write may never finish: bound it.
    let written = tokio::time::timeout(Duration::from_secs(5), conn.send_raw(&frames)).await;
    let all_written = matches!(written, Ok(Ok(())));
    held.push(conn);
    Ok(
        json!({"requests": count, "bytes": frames.len(), "all_written": all_written, "write_seconds": begin.elapsed().as_secs_f64()}),
    )
}

/// `count` connections, each announcing a 16 MiB frame and trickling 3 MB of it until `stop`.
async fn slowloris(target: &Target, count: usize, stop: Instant) -> Value {
    let closed = Rc::new(Cell::new(0usize));
    let mut tasks = Vec::new();
    for _ in 0..count {
        let (target, closed) = (target.clone(), closed.clone());
        tasks.push(tokio::task::spawn_local(async move {
            let Ok(mut conn) = target.connect_raw().await else {
                closed.set(closed.get() + 1);
                return;
            };
            let mut header = ((16 << 20) - 8u32).to_be_bytes().to_vec();
            header.extend_from_slice(&[0, 0, 0, 2, b'{', b'}']);
            let chunk = vec![b' '; 64 * 1024];
            let mut sent = 0;
            let mut ok = conn.send_raw(&header).await.is_ok();
            while ok && sent < 3_000_000 && Instant::now() < stop {
                ok = conn.send_raw(&chunk).await.is_ok();
                sent += chunk.len();
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if !ok {
                closed.set(closed.get() + 1);
            }
            tokio::time::sleep(stop.saturating_duration_since(Instant::now())).await;
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    json!({"connections": count, "closed_by_server": closed.get()})
}

/// A compressed REGISTER_BROKER body whose stream inflates to `inflated` zero bytes.
fn bomb(inflated: usize) -> Vec<u8> {
    let mut zlib = ZlibEncoder::new(Vec::new(), Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..inflated / zeros.len() {
        let _ = zlib.write_all(&zeros);
    }
    zlib.finish().unwrap_or_default()
}

fn register_with_body(name: &str, body: Vec<u8>, compressed: bool) -> RemotingCommand {
    let ext = ExtFields::new()
        .with("brokerName", name)
        .with("brokerAddr", "198.51.100.202:20911")
        .with("clusterName", "AttackCluster")
        .with("haServerAddr", "198.51.100.202:20912")
        .with("brokerId", "0")
        .with("compressed", compressed.to_string())
        .with("bodyCrc32", body_crc32(&body).to_string());
    RemotingCommand::request(103, Some(ext)).with_body(body)
}

/// `count` compression bombs pipelined on one connection; counts the refusals.
async fn bombs(target: &Target, count: usize) -> io::Result<Value> {
    let body = bomb(63 << 20);
    let mut conn = Conn::connect(target).await?;
    for _ in 0..count {
        conn.feed(register_with_body("bomb", body.clone(), true)).await?;
    }
    conn.flush().await?;
    let mut refused = 0;
    for _ in 0..count {
        refused += u64::from(conn.next_answer().await?.code != 0);
    }
    Ok(json!({"bombs": count, "body_bytes": body.len(), "refused": refused}))
}

/// Oversized names, a compressed body of a million topics, and runtime config that would
/// switch routing off; every one must be refused.
async fn names(target: &Target) -> io::Result<Value> {
    let mut conn = Conn::connect(target).await?;
    let huge = "n".repeat(1 << 20);
    let mut refused = Vec::new();
    let broker = SimBroker {
        cluster: "AttackCluster".into(),
        name: huge.clone(),
        addr: "198.51.100.203:20911".into(),
        topics: vec!["A".into(), "B".into()],
        queues: 1,
    };
    refused.push(conn.call(workload::register_request(&broker, 1)).await?.code != 0);
    let mut stream = Vec::new();
    let version = br#"{"counter":1,"stateVersion":0,"timestamp":1}"#;
    stream.extend_from_slice(&(version.len() as i32).to_be_bytes());
    stream.extend_from_slice(version);
    stream.extend_from_slice(&1_000_000i32.to_be_bytes());
    for t in 0..1_000_000 {
        let line = format!("T{t} 1 1 6 SINGLE_TAG {{}}");
        stream.extend_from_slice(&(line.len() as i32).to_be_bytes());
        stream.extend_from_slice(line.as_bytes());
    }
    let mut zlib = ZlibEncoder::new(Vec::new(), Compression::fast());
    zlib.write_all(&stream)?;
    let million = zlib.finish()?;
    refused.push(conn.call(register_with_body("million", million, true)).await?.code != 0);
    for body in ["needWaitForService=true\nwaitSecondsForService=999999999", "max_frame_bytes=1024", "listenPort=1"] {
        let update = RemotingCommand::request(318, None).with_body(body.as_bytes().to_vec());
        refused.push(conn.call(update).await?.code != 0);
    }
    Ok(json!({"all_refused": refused.iter().all(|r| *r), "refused": refused}))
}

/// Fills the KV store with 1 MiB values until refused, timing each put; then a 15 MiB value.
async fn kv(target: &Target) -> io::Result<Value> {
    let mut conn = Conn::connect(target).await?;
    let value = "v".repeat((1 << 20) - 64);
    let put = |key: String, value: &str| {
        let ext = ExtFields::new().with("namespace", "attack").with("key", key).with("value", value);
        RemotingCommand::request(100, Some(ext))
    };
    let mut latencies = Samples::default();
    let mut stored = 0;
    for i in 0..80 {
        let answer = conn.call(put(format!("k{i:03}"), &value)).await?;
        if answer.code != 0 {
            break;
        }
        stored += 1;
        latencies.record(answer.latency_us, true, 0);
    }
    let big = conn.call(put("big".into(), &"v".repeat(15 << 20))).await?;
    let summary = latencies.summary(1.0);
    Ok(json!({"values_stored": stored, "put_p50_ms": summary.p50_us as f64 / 1000.0,
        "put_max_ms": summary.max_us as f64 / 1000.0, "big_value_refused": big.code != 0}))
}
