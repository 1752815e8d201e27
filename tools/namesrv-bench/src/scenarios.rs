//! The five scenarios. Each returns its figures as a JSON object.

use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::conn::{Conn, Target};
use crate::procfs::cpu_seconds;
use crate::routeload::{RouteConn, RouteFrames};
use crate::stats::{Rng, Samples};
use crate::workload::{self, SimBroker};
use crate::{Load, Shape};

/// Brokers registered and held: each re-registers (unchanged dataVersion) every period.
pub struct Held {
    tasks: Vec<JoinHandle<()>>,
    pub brokers: Vec<SimBroker>,
    pub register: Samples,
    pub body_bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn shape_brokers(shape: &Shape) -> Vec<SimBroker> {
    workload::brokers(shape.clusters, shape.brokers, shape.topics, shape.queues, shape.shared_topics)
}

/// Registers every broker of `shape`, one connection each, and keeps them registered.
pub async fn hold(target: &Target, shape: &Shape) -> io::Result<Held> {
    let brokers = shape_brokers(shape);
    let mut register = Samples::default();
    let mut tasks = Vec::with_capacity(brokers.len());
    let mut body_bytes = 0;
    for (i, broker) in brokers.iter().enumerate() {
        let request = workload::register_request(broker, 1);
        body_bytes = body_bytes.max(request.body.as_ref().map_or(0, |b| b.len()));
        let mut conn = Conn::connect(target).await?;
        let answer = conn.call(request.clone()).await?;
        register.record(answer.latency_us, answer.code == 0, 0);
        if answer.code != 0 {
            return Err(io::Error::other(format!("registration of {} answered code {}", broker.name, answer.code)));
        }
        let period = Duration::from_millis(shape.period_ms);
        tasks.push(tokio::task::spawn_local(async move {
            loop {
                tokio::time::sleep(period).await;
                if conn.call(request.clone()).await.is_err() {
                    return;
                }
            }
        }));
        progress("populate", i + 1, brokers.len());
    }
    eprintln!();
    Ok(Held { tasks, brokers, register, body_bytes })
}

/// `populate`: registers the shape and holds it for `hold_secs`.
pub async fn populate(target: &Target, shape: &Shape, hold_secs: f64) -> io::Result<Value> {
    local(async {
        let begin = Instant::now();
        let mut held = hold(target, shape).await?;
        let took = begin.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_secs_f64(hold_secs)).await;
        let topics = workload::all_topics(&held.brokers).len();
        let summary = std::mem::take(&mut held.register).summary(took);
        Ok(json!({"scenario": "populate", "brokers": summary.requests, "topics": topics, "body_bytes": held.body_bytes, "seconds": took, "register": summary}))
    })
    .await
}

/// Runs `connections` × `depth` route queries over random `topics` for the load's window, the
/// connections dealt over `threads` threads.
async fn route_load(target: &Target, topics: Rc<Vec<String>>, load: &Load) -> io::Result<Samples> {
    let frames = RouteFrames::new(&topics, target.options.credentials.as_ref())?;
    let begin = Instant::now() + Duration::from_secs_f64(load.warmup);
    let end = begin + Duration::from_secs_f64(load.duration);
    let threads = load.threads.clamp(1, load.connections.max(1));
    let mut others = Vec::with_capacity(threads - 1);
    for thread in 1..threads {
        let (frames, target, load) = (frames.clone(), target.clone(), load.clone());
        others.push(spawn_thread(format!("route-{thread}"), move || async move {
            let conns = (thread..load.connections).step_by(threads);
            route_conns(&target, &frames, conns, &load, (begin, end)).await
        })?);
    }
    let mine = tokio::task::spawn_local({
        let (frames, target, load) = (frames, target.clone(), load.clone());
        async move { route_conns(&target, &frames, (0..load.connections).step_by(threads), &load, (begin, end)).await }
    });
    let ticker = tokio::task::spawn_local(async move {
        let total = end.saturating_duration_since(begin).as_secs_f64();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = Instant::now();
            if now >= end {
                break;
            }
            match now.checked_duration_since(begin) {
                Some(done) => eprint!("\r[route] {:5.1}/{total:.1} s measured", done.as_secs_f64()),
                None => eprint!("\r[route] warming up, {:.1} s left", (begin - now).as_secs_f64()),
            }
        }
    });
    let mut samples = mine.await.map_err(io::Error::other)??;
    for thread in others {
        samples.merge(join_thread(thread)?);
    }
    ticker.abort();
    eprintln!();
    Ok(samples)
}

/// The connections numbered `conns` of a route load, each keeping `depth` queries in flight
/// over its own shuffled order of the topics from `begin` to `end`.
async fn route_conns(
    target: &Target,
    frames: &RouteFrames,
    conns: impl Iterator<Item = usize>,
    load: &Load,
    (begin, end): (Instant, Instant),
) -> io::Result<Samples> {
    let mut tasks = Vec::new();
    for c in conns {
        let conn = RouteConn::connect(target).await?;
        // Each connection asks every topic in turn, in an order of its own.
        let frames = frames.shuffled(&mut Rng::new(load.seed.wrapping_add(c as u64 * 7919)));
        let depth = load.depth;
        tasks.push(tokio::task::spawn_local(async move { conn.run(&frames, depth, (begin, end)).await }));
    }
    let mut samples = Samples::default();
    for task in tasks {
        samples.merge(task.await.map_err(io::Error::other)??);
    }
    Ok(samples)
}

/// `route`: populate, then measure route queries.
pub async fn route(target: &Target, shape: &Shape, load: &Load) -> io::Result<Value> {
    local(async {
        let held = hold(target, shape).await?;
        let topics = Rc::new(workload::all_topics(&held.brokers));
        let cpu =
            load.server_pid.map(|pid| tokio::task::spawn_local(server_cpu_percent(pid, load.warmup, load.duration)));
        let samples = route_load(target, topics.clone(), load).await?;
        let summary = samples.summary(load.duration);
        let cpu = match cpu {
            Some(task) => task.await.map_err(io::Error::other)?,
            None => None,
        };
        Ok(json!({"scenario": "route", "connections": load.connections, "depth": load.depth, "topics": topics.len(),
            "route": summary, "server_cpu_percent": cpu}))
    })
    .await
}

/// `register`: every broker re-registers its full table `rounds` times, dataVersion bumped.
pub async fn register(target: &Target, shape: &Shape, rounds: usize) -> io::Result<Value> {
    local(async {
        let brokers = shape_brokers(shape);
        let begin = Instant::now();
        let mut tasks = Vec::new();
        let mut body_bytes = 0;
        for broker in brokers {
            let mut conn = Conn::connect(target).await?;
            let template = workload::RegisterTemplate::new(&broker);
            body_bytes = template.request(1).body.map_or(0, |b| b.len());
            tasks.push(tokio::task::spawn_local(async move {
                let mut samples = Samples::default();
                for round in 0..rounds {
                    let answer = conn.call(template.request(round as u64 + 1)).await?;
                    samples.record(answer.latency_us, answer.code == 0, 0);
                }
                Ok::<Samples, io::Error>(samples)
            }));
        }
        let mut samples = Samples::default();
        for task in tasks {
            samples.merge(task.await.map_err(io::Error::other)??);
        }
        let summary = samples.summary(begin.elapsed().as_secs_f64());
        Ok(json!({"scenario": "register", "topics_per_broker": shape.topics, "body_bytes": body_bytes, "register": summary}))
    })
    .await
}

/// `storm`: route load while every broker re-registers its full table every period. The
/// brokers run on a thread of their own, as real brokers are processes of their own: copying
/// and checksumming a 1.8 MB body on the route load's thread would stall its connections and
/// count the load tool's own pause in the server's route latency.
pub async fn storm(target: &Target, shape: &Shape, load: &Load, period_ms: u64) -> io::Result<Value> {
    local(async {
        let held = hold(target, shape).await?;
        let topics = Rc::new(workload::all_topics(&held.brokers));
        let stop = Instant::now() + Duration::from_secs_f64(load.warmup + load.duration);
        let (brokers, stormer_addr) = (held.brokers.clone(), target.clone());
        let stormers = spawn_thread("storm-brokers".into(), move || async move {
            storm_brokers(&stormer_addr, brokers, period_ms, stop).await
        })?;
        let route = route_load(target, topics, load).await?.summary(load.duration);
        let registrations = join_thread(stormers)?;
        let registrations = registrations.summary(load.warmup + load.duration);
        drop(held);
        Ok(json!({"scenario": "storm", "period_ms": period_ms, "route": route, "register": registrations}))
    })
    .await
}

/// Every broker re-registers its full table (dataVersion bumped) every `period_ms` until
/// `stop`, their starts spread over the period; returns the registrations' latencies.
async fn storm_brokers(target: &Target, brokers: Vec<SimBroker>, period_ms: u64, stop: Instant) -> io::Result<Samples> {
    let mut stormers = Vec::new();
    let count = brokers.len().max(1) as u64;
    for (i, broker) in brokers.into_iter().enumerate() {
        let mut conn = Conn::connect(target).await?;
        let template = workload::RegisterTemplate::new(&broker);
        // Brokers start at different times, so their periods are spread over the period
        // rather than all firing in the same instant.
        let offset = Duration::from_millis(period_ms * i as u64 / count);
        stormers.push(tokio::task::spawn_local(async move {
            let mut samples = Samples::default();
            let mut counter = 2;
            tokio::time::sleep(offset).await;
            while Instant::now() < stop {
                let answer = conn.call(template.request(counter)).await?;
                samples.record(answer.latency_us, answer.code == 0, 0);
                counter += 1;
                tokio::time::sleep(Duration::from_millis(period_ms)).await;
            }
            Ok::<Samples, io::Error>(samples)
        }));
    }
    let mut registrations = Samples::default();
    for task in stormers {
        registrations.merge(task.await.map_err(io::Error::other)??);
    }
    Ok(registrations)
}

/// `conns`: opens `count` idle connections, then checks queries on new and idle ones.
pub async fn conns(target: &Target, count: usize) -> io::Result<Value> {
    local(async {
        let begin = Instant::now();
        let mut idle = Vec::with_capacity(count);
        for i in 0..count {
            idle.push(Conn::connect(target).await?);
            if i % 500 == 0 {
                progress("conns", i + 1, count);
            }
        }
        eprintln!();
        let opened = begin.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut ok = 0;
        let mut checked = 0;
        let step = (count / 100).max(1);
        for conn in idle.iter_mut().step_by(step) {
            checked += 1;
            if conn.call(namesrv_protocol::RemotingCommand::request(106, None)).await?.code == 0 {
                ok += 1;
            }
        }
        let mut fresh = Conn::connect(target).await?;
        let fresh_ok = fresh.call(namesrv_protocol::RemotingCommand::request(106, None)).await?.code == 0;
        Ok(json!({"scenario": "conns", "open": idle.len(), "open_seconds": opened, "idle_checked": checked, "idle_ok": ok, "fresh_ok": fresh_ok}))
    })
    .await
}

/// The CPU `pid` used over the measured window, in percent of one core.
async fn server_cpu_percent(pid: u32, warmup: f64, duration: f64) -> Option<f64> {
    tokio::time::sleep(Duration::from_secs_f64(warmup)).await;
    let begin = cpu_seconds(pid)?;
    tokio::time::sleep(Duration::from_secs_f64(duration)).await;
    Some(100.0 * (cpu_seconds(pid)? - begin) / duration)
}

/// Runs the future `work` makes on a new thread named `name`, in a runtime and LocalSet of
/// its own (a part of the load that must not share the caller's thread).
fn spawn_thread<T, F>(
    name: String,
    work: impl FnOnce() -> F + Send + 'static,
) -> io::Result<std::thread::JoinHandle<io::Result<T>>>
where
    T: Send + 'static,
    F: std::future::Future<Output = io::Result<T>>,
{
    std::thread::Builder::new().name(name).spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(local(work()))
    })
}

/// Waits for a thread of [`spawn_thread`] and returns what its work came to.
fn join_thread<T>(thread: std::thread::JoinHandle<io::Result<T>>) -> io::Result<T> {
    let name = thread.thread().name().unwrap_or("load").to_owned();
    thread.join().map_err(|_| io::Error::other(format!("{name} thread panicked")))?
}

/// Runs `work` on a LocalSet (the connections are single-threaded tasks).
pub async fn local<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::task::LocalSet::new().run_until(work).await
}

fn progress(what: &str, done: usize, total: usize) {
    eprint!("\r[{what}] {done}/{total}");
}
