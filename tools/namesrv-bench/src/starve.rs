//! The `listing-churn` attack: a peer on 127.0.0.2 pipelines pairs of a small registration
//! change and GET_TOPICS_BY_CLUSTER over the setup's 200,000 topics, to keep the registry busy,
//! while a broker with a 3 s heartbeat timeout goes silent (its connection open) and the liveness
//! probe is asked every 500 ms. Reports when the silent broker left the routes and how many
//! probes failed.

use std::cell::Cell;
use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

use namesrv_protocol::{ExtFields, RemotingCommand};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::conn::{io_error, Conn, Target};
use crate::fair::ATTACKER;
use crate::workload::{self, SimBroker};

/// Pairs in flight on the attacking connection.
const WINDOW: u64 = 8;
/// The silent broker's `heartbeatTimeoutMillis`.
const SILENT_TIMEOUT_MS: u64 = 3_000;
/// TOPIC_NOT_EXIST: the answer once the silent broker's only topic has left the routes.
const TOPIC_NOT_EXIST: i32 = 17;

/// Runs the attack until `stop` against `cluster`'s topics, probing `http`'s `/livez`.
pub async fn run(target: &Target, http: Option<&str>, cluster: &str, stop: Instant) -> io::Result<Value> {
    let http = http.ok_or_else(|| io::Error::other("the listing-churn attack needs --http"))?.to_owned();
    let mut attacker_target = target.clone();
    attacker_target.options.source = Some(ATTACKER);
    let churn = tokio::task::spawn_local(churn(attacker_target, cluster.to_owned(), stop));
    let failures = Rc::new(Cell::new(0u64));
    let livez = tokio::task::spawn_local(probe_livez(http, stop, failures.clone()));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let expired_after_ms = silent_broker(target, stop).await?;
    let pairs = churn.await.map_err(io::Error::other)??;
    let probes = livez.await.map_err(io::Error::other)?;
    Ok(json!({"pairs_answered": pairs, "silent_timeout_ms": SILENT_TIMEOUT_MS,
        "expired_after_ms": expired_after_ms, "livez_probes": probes, "livez_failures": failures.get()}))
}

/// Pairs of (a two-topic registration, alternately changed; a cluster listing), `WINDOW` in
/// flight, until `stop`. Returns the pairs answered.
async fn churn(target: Target, cluster: String, stop: Instant) -> io::Result<u64> {
    let mut conn = Conn::connect(&target).await?;
    let listing = RemotingCommand::request(224, Some(ExtFields::new().with("cluster", &cluster)));
    let shapes = [["ChurnA", "ChurnB"], ["ChurnA", "ChurnC"]];
    let (mut sent, mut answered) = (0u64, 0u64);
    while Instant::now() < stop {
        while sent - answered < WINDOW * 2 {
            let broker = SimBroker {
                cluster: cluster.clone(),
                name: "churn-broker".into(),
                addr: "198.51.100.250:20911".into(),
                topics: shapes[(sent / 2 % 2) as usize].iter().map(|t| (*t).to_owned()).collect(),
                queues: 4,
            };
            conn.feed(workload::register_request(&broker, sent + 1)).await?;
            conn.feed(listing.clone()).await?;
            sent += 2;
        }
        conn.flush().await?;
        match tokio::time::timeout_at(stop.into(), conn.next_answer()).await {
            Ok(answer) => {
                answer?;
                answered += 1;
            }
            Err(_) => break,
        }
    }
    Ok(answered / 2)
}

/// Registers a broker that promises a heartbeat within 3 s and never sends one, its connection
/// left open; then asks for its topic's route every 100 ms until it is gone. The milliseconds
/// from the registration to the first TOPIC_NOT_EXIST (or to `stop`, if it never left).
async fn silent_broker(target: &Target, stop: Instant) -> io::Result<u64> {
    let broker = SimBroker {
        cluster: "SilentCluster".into(),
        name: "silent-broker".into(),
        addr: "198.51.100.251:20911".into(),
        // Two topics: a first registration with only one is refused, as in Java.
        topics: vec!["SilentTopic".into(), "SilentTopic2".into()],
        queues: 4,
    };
    let mut request = workload::register_request(&broker, 1);
    let ext = request.ext_fields.get_or_insert_with(ExtFields::new);
    ext.insert("heartbeatTimeoutMillis", SILENT_TIMEOUT_MS.to_string());
    let mut silent = target.connect_raw().await?;
    let registered = Instant::now();
    let answer = silent.call(request).await.map_err(io_error)?;
    if answer.code != 0 {
        let remark = answer.remark.unwrap_or_default();
        return Err(io::Error::other(format!("the silent broker's registration answered {}: {remark}", answer.code)));
    }
    let mut client = Conn::connect(target).await?;
    while Instant::now() < stop {
        let asked = tokio::time::timeout(Duration::from_secs(5), client.call(workload::route_request("SilentTopic")));
        if let Ok(Ok(answer)) = asked.await {
            if answer.code == TOPIC_NOT_EXIST {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(silent);
    Ok(registered.elapsed().as_millis() as u64)
}

/// `GET /livez` every 500 ms, each on a fresh connection with a 1 s deadline, until `stop`;
/// a probe that fails or answers other than 200 counts in `failures`. Returns the probes made.
async fn probe_livez(http: String, stop: Instant, failures: Rc<Cell<u64>>) -> u64 {
    let mut probes = 0;
    while Instant::now() < stop {
        probes += 1;
        let status = tokio::time::timeout(Duration::from_secs(1), livez(&http)).await;
        if !matches!(status, Ok(Ok(200))) {
            failures.set(failures.get() + 1);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    probes
}

/// The status of one `GET /livez`.
async fn livez(http: &str) -> io::Result<u16> {
    let mut stream = TcpStream::connect(http).await?;
    stream.write_all(format!("GET /livez HTTP/1.1\r\nHost: {http}\r\nConnection: close\r\n\r\n").as_bytes()).await?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await?;
    let text = String::from_utf8_lossy(&head);
    Ok(text.get(9..12).and_then(|code| code.parse().ok()).unwrap_or(0))
}
