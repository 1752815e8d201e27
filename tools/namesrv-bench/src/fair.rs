//! The attacks on the shared budgets: one hostile peer, connecting from 127.0.0.2 (another
//! source address than the probe and the honest peers on 127.0.0.1), holds connection slots,
//! frame bytes, unread replies or HTTP connections, while honest peers register, query and write
//! beside it. Each reports what the honest peers got through.

use std::cell::Cell;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use namesrv_protocol::codec::encode_frame;
use namesrv_protocol::{ExtFields, RemotingCommand};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinHandle;

use crate::conn::{Conn, Target};
use crate::workload::{self, SimBroker};

/// Where the hostile peer connects from.
pub const ATTACKER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// How long an honest request may take before it counts as not got through.
const HONEST_TIMEOUT: Duration = Duration::from_secs(10);

/// A plain TCP connection to `addr` from [`ATTACKER`].
async fn connect_as_attacker(addr: &str) -> io::Result<TcpStream> {
    let to: SocketAddr = tokio::net::lookup_host(addr).await?.next().ok_or_else(|| io::Error::other("no address"))?;
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(ATTACKER, 0))?;
    socket.connect(to).await
}

/// Reads (and drops) what `stream` receives until `stop`; true when the server closed it first.
async fn hold(stream: &mut TcpStream, stop: Instant) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(stop.into(), stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// `count` attacker connections to `addr`, each sending `opening` (possibly nothing) and then
/// nothing more, opened again whenever the server closes one, until `stop`. Counts the closes.
fn idle_connections(
    addr: &str,
    count: usize,
    opening: &'static [u8],
    stop: Instant,
) -> (Vec<JoinHandle<()>>, Rc<Cell<u64>>) {
    let closed = Rc::new(Cell::new(0u64));
    let tasks = (0..count)
        .map(|_| {
            let (addr, closed) = (addr.to_owned(), closed.clone());
            tokio::task::spawn_local(async move {
                while Instant::now() < stop {
                    let Ok(mut stream) = connect_as_attacker(&addr).await else {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    };
                    if stream.write_all(opening).await.is_ok() && !hold(&mut stream, stop).await {
                        return;
                    }
                    closed.set(closed.get() + 1);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
        })
        .collect();
    (tasks, closed)
}

async fn join(tasks: Vec<JoinHandle<()>>) {
    for task in tasks {
        let _ = task.await;
    }
}

/// An honest broker group `honest-{index}` with `topics` topics of its own.
fn honest_broker(index: usize, topics: usize) -> SimBroker {
    SimBroker {
        cluster: "HonestCluster".into(),
        name: format!("honest-{index}"),
        addr: workload::doc_addr(2_000 + index, 30911),
        topics: (0..topics).map(|t| format!("Honest-{index}-{t}")).collect(),
        queues: 4,
    }
}

/// Honest brokers `indices` registering over fresh connections, spread over `spread`; each
/// connection kept open (its broker stays live). The number answered SUCCESS in time, the
/// slowest answer's milliseconds, and the connections.
async fn register_honestly(
    target: &Target,
    indices: std::ops::Range<usize>,
    topics: usize,
    spread: Duration,
) -> (usize, f64, Vec<Conn>) {
    let gap = spread / indices.len().max(1) as u32;
    let (mut ok, mut worst, mut held) = (0, Duration::ZERO, Vec::new());
    for index in indices {
        let request = workload::register_request(&honest_broker(index, topics), 1);
        let begin = Instant::now();
        let answered = tokio::time::timeout(HONEST_TIMEOUT, async {
            let mut conn = Conn::connect(target).await?;
            let answer = conn.call(request).await?;
            Ok::<_, io::Error>((answer.code, conn))
        })
        .await;
        worst = worst.max(begin.elapsed());
        if let Ok(Ok((0, conn))) = answered {
            ok += 1;
            held.push(conn);
        }
        tokio::time::sleep(gap.saturating_sub(begin.elapsed())).await;
    }
    (ok, worst.as_secs_f64() * 1000.0, held)
}

/// `count` honest clients, each on a fresh connection asking for `topic`'s route once.
async fn query_honestly(target: &Target, count: usize, topic: &str) -> usize {
    let mut ok = 0;
    for _ in 0..count {
        let answered = tokio::time::timeout(HONEST_TIMEOUT, async {
            let mut conn = Conn::connect(target).await?;
            conn.call(workload::route_request(topic)).await
        })
        .await;
        ok += usize::from(matches!(answered, Ok(Ok(ref a)) if a.code == 0));
    }
    ok
}

/// A frame's length prefix and header length announcing a 16 MiB frame, and nothing after.
const PREFIX_16_MIB: [u8; 8] = [0x00, 0xff, 0xff, 0xfc, 0x00, 0x00, 0x00, 0x02];

/// 64 connections that each send only the 8-byte prefix of a 16 MiB frame (1 GiB announced in
/// all), opened again when closed, while 45 honest brokers of 1,500 topics register.
pub async fn idle_prefixes(target: &Target, stop: Instant) -> Value {
    let (tasks, closed) = idle_connections(&target.addr, 64, &PREFIX_16_MIB, stop);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let spread = stop.saturating_duration_since(Instant::now()).mul_f64(0.8);
    let (ok, worst_ms, held) = register_honestly(target, 0..45, 1_500, spread).await;
    join(tasks).await;
    drop(held);
    json!({"attackers": 64, "closed_by_server": closed.get(), "registrations": 45,
        "registrations_ok": ok, "registration_worst_ms": worst_ms})
}

/// 300 connections that each pipeline 200 GET_ALL_TOPIC_LIST over the setup's topics (about
/// 45 KB a reply) and never read, while 20 honest brokers register.
pub async fn unread_small(target: &Target, stop: Instant) -> io::Result<Value> {
    let mut frames = BytesMut::new();
    for opaque in 0..200 {
        encode_frame(&RemotingCommand::request(206, None).with_opaque(opaque), &mut frames)
            .map_err(io::Error::other)?;
    }
    let frames = frames.freeze();
    let connected = Rc::new(Cell::new(0u64));
    let mut tasks = Vec::new();
    for _ in 0..300 {
        let (addr, frames, connected) = (target.addr.clone(), frames.clone(), connected.clone());
        tasks.push(tokio::task::spawn_local(async move {
            let Ok(mut stream) = connect_as_attacker(&addr).await else { return };
            connected.set(connected.get() + 1);
            // The server stops reading at its marks, so this write may never finish.
            let _ = tokio::time::timeout_at(stop.into(), stream.write_all(&frames)).await;
            tokio::time::sleep_until(stop.into()).await;
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let spread = stop.saturating_duration_since(Instant::now()).mul_f64(0.8);
    let (ok, worst_ms, held) = register_honestly(target, 0..20, 100, spread).await;
    join(tasks).await;
    drop(held);
    Ok(json!({"attackers": 300, "connected": connected.get(), "replies_asked": 300 * 200,
        "registrations": 20, "registrations_ok": ok, "registration_worst_ms": worst_ms}))
}

/// 1,000 connections that never send a byte, opened again when closed, while 20 honest brokers
/// register and 20 honest clients ask for a route (run it with a small `max_connections`).
pub async fn idle_slots(target: &Target, probe_topic: &str, stop: Instant) -> Value {
    let (tasks, closed) = idle_connections(&target.addr, 1_000, b"", stop);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let spread = stop.saturating_duration_since(Instant::now()).mul_f64(0.5);
    let (registered, worst_ms, held) = register_honestly(target, 0..20, 10, spread).await;
    let clients_ok = query_honestly(target, 20, probe_topic).await;
    join(tasks).await;
    drop(held);
    json!({"attackers": 1_000, "closed_by_server": closed.get(), "registrations": 20,
        "registrations_ok": registered, "registration_worst_ms": worst_ms, "clients": 20, "clients_ok": clients_ok})
}

/// 500 idle connections to the HTTP endpoint `http` while 21 KV puts are made (run it under a
/// low open-file limit: the idle connections must not take the descriptors state writes need).
pub async fn http_idle(target: &Target, http: Option<&str>, stop: Instant) -> io::Result<Value> {
    let http = http.ok_or_else(|| io::Error::other("the http-idle attack needs --http"))?;
    let (tasks, closed) = idle_connections(http, 500, b"", stop);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut conn = Conn::connect(target).await?;
    let mut puts_ok = 0;
    for i in 0..21 {
        let ext = ExtFields::new().with("namespace", "hostile").with("key", format!("k{i}")).with("value", "v");
        let answer = tokio::time::timeout(HONEST_TIMEOUT, conn.call(RemotingCommand::request(100, Some(ext)))).await;
        puts_ok += usize::from(matches!(answer, Ok(Ok(ref a)) if a.code == 0));
    }
    join(tasks).await;
    Ok(json!({"attackers": 500, "closed_by_server": closed.get(), "puts": 21, "puts_ok": puts_ok}))
}

/// Topics every fan-out broker registers (a 10 MB body, under the 16 MiB frame limit).
const FAN_OUT_TOPICS: usize = 50_000;

/// From [`ATTACKER`]: one connection registering broker groups `fanout-N`, each with the same
/// 50,000 topics, until refused (at most 80: 4M queue entries), while 5 honest brokers that
/// registered before keep re-registering and a new one registers after.
pub async fn fan_out(target: &Target, stop: Instant) -> io::Result<Value> {
    let (_, _, mut honest) = register_honestly(target, 0..5, 20, Duration::ZERO).await;
    let mut attacker_target = target.clone();
    attacker_target.options.source = Some(ATTACKER);
    let mut conn = Conn::connect(&attacker_target).await?;
    let mut broker = SimBroker {
        cluster: "FanOutCluster".into(),
        name: String::new(),
        addr: String::new(),
        topics: (0..FAN_OUT_TOPICS).map(|t| format!("FanOutTopic-{t}")).collect(),
        queues: 8,
    };
    let template = workload::RegisterTemplate::new(&broker);
    let (mut accepted, mut refused, mut heartbeats_ok) = (0, 0, 0);
    for index in 0..80 {
        if Instant::now() >= stop {
            break;
        }
        broker.name = format!("fanout-{index}");
        broker.addr = workload::doc_addr(3_000 + index, 40911);
        let mut request = template.request(1);
        let ext = request.ext_fields.get_or_insert_with(ExtFields::new);
        ext.insert("brokerName", broker.name.clone());
        ext.insert("brokerAddr", broker.addr.clone());
        if conn.call(request).await?.code == 0 {
            accepted += 1;
        } else {
            refused += 1;
            break;
        }
        // The honest brokers' heartbeats: a re-registration of what they hold.
        for (i, honest_conn) in honest.iter_mut().enumerate() {
            let again = workload::register_request(&honest_broker(i, 20), 2 + index as u64);
            heartbeats_ok += usize::from(honest_conn.call(again).await.is_ok_and(|a| a.code == 0));
        }
    }
    let (new_ok, _, held) = register_honestly(target, 5..6, 20, Duration::ZERO).await;
    drop((honest, held));
    Ok(json!({"brokers_accepted": accepted, "refused": refused, "topics_each": FAN_OUT_TOPICS,
        "queue_entries_accepted": accepted * FAN_OUT_TOPICS, "honest_heartbeats": accepted * 5,
        "honest_heartbeats_ok": heartbeats_ok, "new_honest_registration_ok": new_ok == 1}))
}
