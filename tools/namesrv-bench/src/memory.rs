//! `memory`: what registered topics cost the server. One broker registers `topics` topics in one
//! REGISTER_BROKER; the server's resident memory is read before, after it settles, and at its
//! peak, and a route query checks the table is really there.

use std::io;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};

use crate::conn::{Conn, Target};
use crate::procfs::{rss_kib, status_kib};
use crate::workload;

/// Parameters of the `memory` scenario.
#[derive(Args, Debug, Clone)]
pub struct Memory {
    /// Topics the broker registers.
    #[arg(long, default_value_t = 1_000_000)]
    topics: usize,
    /// Queues per topic.
    #[arg(long, default_value_t = 8)]
    queues: u32,
    /// The server's process id (its memory is read from /proc).
    #[arg(long)]
    server_pid: u32,
    /// How long to let the server settle after the registration, seconds.
    #[arg(long, default_value_t = 2.0)]
    settle: f64,
}

/// Registers the topics and reports the memory they cost.
pub async fn run(target: &Target, memory: &Memory) -> io::Result<Value> {
    let pid = memory.server_pid;
    let mut broker = workload::brokers(1, 1, memory.topics, memory.queues, false).remove(0);
    broker.name = "memory-broker".into();
    let request = workload::register_request(&broker, 1);
    let body_bytes = request.body.as_ref().map_or(0, |b| b.len());
    let mut conn = Conn::connect(target).await?;
    let before = rss_kib(pid).ok_or_else(|| io::Error::other(format!("cannot read /proc/{pid}/status")))?;
    let begin = Instant::now();
    let answer = conn.call(request).await?;
    let register_secs = begin.elapsed().as_secs_f64();
    if answer.code != 0 {
        return Err(io::Error::other(format!("registration answered code {}", answer.code)));
    }
    tokio::time::sleep(Duration::from_secs_f64(memory.settle)).await;
    let after = rss_kib(pid).unwrap_or(0);
    let peak = status_kib(pid, "VmHWM").unwrap_or(0);
    let last = broker.topics.last().cloned().unwrap_or_default();
    let routed = conn.call(workload::route_request(&last)).await?.code == 0;
    let per_topic = (after.saturating_sub(before) * 1024) as f64 / memory.topics.max(1) as f64;
    Ok(json!({"scenario": "memory", "topics": memory.topics, "queues": memory.queues, "body_bytes": body_bytes,
        "register_seconds": register_secs, "rss_kib_before": before, "rss_kib_after": after, "peak_rss_kib": peak,
        "bytes_per_topic": per_topic, "last_topic_routed": routed}))
}
