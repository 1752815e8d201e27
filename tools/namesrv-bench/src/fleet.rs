//! `fleet`: one NameServer's share of a fleet's load, replayed at a smaller scale with the same
//! request rates. Brokers re-register their full tables every period (an unchanged dataVersion,
//! as heartbeats do) and clients poll the routes of their topics every period. Phase one runs the
//! brokers alone, phase two adds the clients; the server's CPU time in each gives the cost of a
//! registration and of a route query, and from them the cores a full-size fleet needs.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::conn::{Conn, Target};
use crate::procfs::{cpu_seconds, rss_kib};
use crate::stats::{Rng, Samples};
use crate::workload::{self, SimBroker};

/// Parameters of the `fleet` scenario.
#[derive(Args, Debug, Clone)]
pub struct Fleet {
    /// Client connections.
    #[arg(long, default_value_t = 1_000)]
    clients: usize,
    /// Topics each client asks the route of, every poll.
    #[arg(long, default_value_t = 20)]
    topics_per_client: usize,
    /// Client poll period, ms (RocketMQ clients poll every 30,000).
    #[arg(long, default_value_t = 300)]
    poll_ms: u64,
    /// Brokers, one connection each.
    #[arg(long, default_value_t = 50)]
    brokers: usize,
    /// Topics per broker (each broker its own).
    #[arg(long, default_value_t = 10_000)]
    topics_per_broker: usize,
    /// Broker re-registration period, ms (RocketMQ brokers: 30,000).
    #[arg(long, default_value_t = 3_000)]
    register_ms: u64,
    /// Seconds each phase is measured.
    #[arg(long, default_value_t = 10.0)]
    phase: f64,
    /// The server's process id (CPU and memory are read from /proc).
    #[arg(long)]
    server_pid: u32,
}

type Shared = Rc<RefCell<Samples>>;

/// Runs both phases and reports the measured costs.
pub async fn run(target: &Target, fleet: &Fleet) -> io::Result<Value> {
    let pid = fleet.server_pid;
    let cpu = || cpu_seconds(pid).ok_or_else(|| io::Error::other(format!("cannot read /proc/{pid}/stat")));
    let rss_empty = rss_kib(pid).unwrap_or(0);
    let brokers =
        workload::brokers(fleet.brokers.div_ceil(10), 10.min(fleet.brokers), fleet.topics_per_broker, 8, false);
    let brokers: Vec<SimBroker> = brokers.into_iter().take(fleet.brokers).collect();
    let topics = Rc::new(workload::all_topics(&brokers));
    let registrations: Shared = Rc::default();
    let mut tasks = spawn_brokers(target, &brokers, fleet.register_ms, &registrations);
    // Every broker registered once before anything is measured.
    tokio::time::sleep(Duration::from_millis(fleet.register_ms + 500)).await;
    let rss_brokers = rss_kib(pid).unwrap_or(0);

    let phase = Duration::from_secs_f64(fleet.phase);
    registrations.take();
    let cpu_a = cpu()?;
    tokio::time::sleep(phase).await;
    let cpu_a = cpu()? - cpu_a;
    let regs_a = registrations.take();

    let routes: Shared = Rc::default();
    tasks.extend(spawn_clients(target, fleet, &topics, &routes).await?);
    tokio::time::sleep(Duration::from_millis(fleet.poll_ms + 200)).await;
    let rss_clients = rss_kib(pid).unwrap_or(0);
    routes.take();
    registrations.take();
    let cpu_b = cpu()?;
    tokio::time::sleep(phase).await;
    let cpu_b = cpu()? - cpu_b;
    let (routes_b, regs_b) = (routes.take(), registrations.take());
    for task in tasks {
        task.abort();
    }

    let secs = fleet.phase;
    let reg_cpu_us = cpu_a * 1e6 / regs_a.count().max(1) as f64;
    let route_cpu_us = (cpu_b * 1e6 - reg_cpu_us * regs_b.count() as f64).max(0.0) / routes_b.count().max(1) as f64;
    let kib_per = |delta: u64, n: usize| (delta * 1024) as f64 / n.max(1) as f64;
    Ok(json!({
        "scenario": "fleet", "clients": fleet.clients, "topics_per_client": fleet.topics_per_client, "poll_ms": fleet.poll_ms,
        "brokers": brokers.len(), "topics": topics.len(), "register_ms": fleet.register_ms, "phase_seconds": secs,
        "brokers_only": {"registrations": regs_a.summary(secs), "server_cpu_percent": 100.0 * cpu_a / secs},
        "with_clients": {"routes": routes_b.summary(secs), "registrations": regs_b.summary(secs), "server_cpu_percent": 100.0 * cpu_b / secs},
        "cpu_us_per_registration": reg_cpu_us, "cpu_us_per_route_query": route_cpu_us,
        "rss_kib": {"empty": rss_empty, "brokers": rss_brokers, "clients": rss_clients},
        "bytes_per_topic": kib_per(rss_brokers.saturating_sub(rss_empty), topics.len()),
        "bytes_per_client_connection": kib_per(rss_clients.saturating_sub(rss_brokers), fleet.clients),
    }))
}

/// Starts every broker, their periods spread over the period.
fn spawn_brokers(
    target: &Target,
    brokers: &[SimBroker],
    period_ms: u64,
    samples: &Shared,
) -> Vec<JoinHandle<io::Result<()>>> {
    let spread = |i: usize| Duration::from_millis(period_ms * i as u64 / brokers.len().max(1) as u64);
    let start = |(i, broker): (usize, &SimBroker)| {
        tokio::task::spawn_local(broker_loop(target.clone(), broker.clone(), period_ms, spread(i), samples.clone()))
    };
    brokers.iter().enumerate().map(start).collect()
}

/// Connects every client, each to its own random topics, their polls spread over the period.
async fn spawn_clients(
    target: &Target,
    fleet: &Fleet,
    topics: &[String],
    samples: &Shared,
) -> io::Result<Vec<JoinHandle<io::Result<()>>>> {
    let mut tasks = Vec::with_capacity(fleet.clients);
    for c in 0..fleet.clients {
        let offset = Duration::from_millis(fleet.poll_ms * c as u64 / fleet.clients.max(1) as u64);
        let conn = Conn::connect(target).await?;
        let mut rng = Rng::new(c as u64 * 7919 + 1);
        let mine: Vec<String> = (0..fleet.topics_per_client).map(|_| topics[rng.below(topics.len())].clone()).collect();
        tasks.push(tokio::task::spawn_local(client_loop(conn, mine, fleet.poll_ms, offset, samples.clone())));
    }
    Ok(tasks)
}

/// One broker: registers, then re-registers the same table every period, recording latencies.
async fn broker_loop(
    target: Target,
    broker: SimBroker,
    period_ms: u64,
    offset: Duration,
    samples: Shared,
) -> io::Result<()> {
    let mut conn = Conn::connect(&target).await?;
    let template = workload::RegisterTemplate::new(&broker);
    tokio::time::sleep(offset).await;
    let mut next = Instant::now();
    loop {
        let answer = conn.call(template.request(1)).await?;
        samples.borrow_mut().record(answer.latency_us, answer.code == 0, 0);
        next += Duration::from_millis(period_ms);
        tokio::time::sleep_until(next.into()).await;
    }
}

/// One client: asks for the routes of its topics every period, all in flight at once.
async fn client_loop(
    mut conn: Conn,
    topics: Vec<String>,
    period_ms: u64,
    offset: Duration,
    samples: Shared,
) -> io::Result<()> {
    tokio::time::sleep(offset).await;
    let mut next = Instant::now();
    loop {
        for topic in &topics {
            conn.feed(workload::route_request(topic)).await?;
        }
        conn.flush().await?;
        for _ in &topics {
            let answer = conn.next_answer().await?;
            samples.borrow_mut().record(answer.latency_us, answer.code == 0, answer.body_len);
        }
        next += Duration::from_millis(period_ms);
        tokio::time::sleep_until(next.into()).await;
    }
}
