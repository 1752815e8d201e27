//! The registry cannot be starved: under a flood of requests that each cost it work (topic
//! listings of a large table, pipelined with registrations that change the table so no listing
//! can be reused), a silent broker still expires within its timeout plus a scan, and `/livez`
//! answers every probe.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::http::get;
use crate::common::requests::request;
use crate::common::*;
use namesrv::protocol::RemotingCommand;

/// GET_TOPICS_BY_CLUSTER.
const TOPICS_BY_CLUSTER: i32 = 224;

/// One attacker: pipelines `pairs` of (a registration of broker `name` whose two topics change
/// every time, a listing of cluster `C`) at once, reads every answer, and repeats until `stop`.
fn churn(addr: std::net::SocketAddr, name: String, pairs: usize, stop: Arc<AtomicBool>) -> JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut client = Client::connect(addr);
        let mut broker =
            Broker::new("C", &name, 0, &format!("{name}:10911")).topics(&[format!("{name}-a"), format!("{name}-b")]);
        let mut answered = 0;
        let mut round = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let mut batch: Vec<RemotingCommand> = Vec::with_capacity(2 * pairs);
            for _ in 0..pairs {
                round += 1;
                broker = broker.topics(&[format!("{name}-a"), format!("{name}-{round}")]).bump();
                batch.push(broker.register_request());
                batch.push(request(TOPICS_BY_CLUSTER, &[("cluster", "C")]));
            }
            client.send_batch(&batch);
            for _ in 0..batch.len() {
                if client.read_frame().is_none() {
                    return answered;
                }
                answered += 1;
            }
        }
        answered
    })
}

#[test]
fn under_listing_churn_a_silent_broker_expires_on_time_and_livez_answers_every_probe() {
    let server = TestServer::with_http(|s| s.routing.scan_interval_ms = 200);
    let http = server.http_addr.unwrap();
    for g in 0..4 {
        let topics: Vec<String> = (0..20_000).map(|t| format!("big-{g}-topic-{t:05}")).collect();
        server.register(&Broker::new("C", &format!("big-{g}"), 0, &format!("10.9.0.{g}:10911")).topics(&topics));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let attackers: Vec<_> = (0..4).map(|i| churn(server.addr, format!("churn-{i}"), 16, stop.clone())).collect();
    std::thread::sleep(Duration::from_millis(500));

    // The victim registers with a 3 s timeout and then says nothing over its open connection.
    let mut victim = server.client();
    let silent = Broker { heartbeat_timeout_ms: Some(3_000), ..Broker::new("C", "silent", 0, "10.9.1.1:10911") };
    let registered = Instant::now();
    assert_eq!(victim.register(&silent.topics(&["Silent1", "Silent2"])).code, 0);

    let mut client = server.client();
    let mut probes = Vec::new();
    let mut expired_after = None;
    while registered.elapsed() < Duration::from_secs(10) {
        let probe = Instant::now();
        let status = get(http, "/livez").status;
        probes.push((status, probe.elapsed()));
        if client.route("Silent1").is_err() {
            expired_after = Some(registered.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    stop.store(true, Ordering::Relaxed);
    let answered: usize = attackers.into_iter().map(|a| a.join().unwrap()).sum();
    assert!(answered > 100, "the attack ran: {answered} answers");
    let expired_after = expired_after.expect("the silent broker never expired within 10 s");
    assert!(
        expired_after <= Duration::from_millis(3_000 + 2 * 200 + 1_000),
        "expired {} ms after it registered, its timeout is 3 s",
        expired_after.as_millis()
    );
    let failed: Vec<_> =
        probes.iter().filter(|(status, took)| *status != 200 || *took > Duration::from_secs(1)).collect();
    assert!(failed.is_empty(), "livez failed {} of {} probes: {failed:?}", failed.len(), probes.len());
}
