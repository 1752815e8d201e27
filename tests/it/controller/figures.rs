//! The controller's figures (issue 39 item 6): a benchmark, not a test. Every figure is
//! `#[ignore]`d, prints one JSON line and asserts only that the failover (or catch-up) happened,
//! never how long it took. Run the `it` binary with
//! `controller::figures --ignored --nocapture --test-threads=1`; figures of a debug build
//! unless built with `--release`.

use std::time::{Duration, Instant};

use namesrv::protocol::command::FLAG_ONEWAY;
use namesrv::protocol::controller::header::{
    ApplyBrokerIdHeader, ControllerHeartbeatHeader, RegisterToControllerHeader,
};
use namesrv::protocol::controller::response::MasterFields;
use namesrv::protocol::RemotingCommand;
use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::controller_broker::{BrokerConfig, ControllerBroker};
use namesrv_testkit::http::{get, sample};
use namesrv_testkit::{eventually, route_addrs};

use super::{master_and_slave, master_and_slave_with, WAIT};

/// Repetitions of every timed figure.
const REPS: usize = 5;

/// Median and max of `samples`, in milliseconds.
fn median_max(samples: &[f64]) -> (f64, f64) {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    (s[s.len() / 2], s[s.len() - 1])
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}

/// Waits (polling every millisecond) until `b` received a 1008 naming it master; when, or `None`.
fn wait_notified_master(b: &ControllerBroker, within: Duration) -> Option<Instant> {
    let id = b.id();
    let until = Instant::now() + within;
    while Instant::now() < until {
        let named = b.state().notified.iter().any(|n| MasterFields::read(n).master_broker_id == id);
        if named {
            return Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    None
}

/// How many 904s `b` has sent.
fn beats_sent(b: &ControllerBroker) -> usize {
    b.state().sent.iter().filter(|c| c.code == 904).count()
}

fn json_line(figure: &str, fields: serde_json::Value) {
    let mut line =
        serde_json::json!({ "figure": figure, "build": if cfg!(debug_assertions) { "debug" } else { "release" } });
    for (k, v) in fields.as_object().unwrap() {
        line[k] = v.clone();
    }
    println!("{line}");
}

/// How long a test lets the cluster settle before failing a master: past the controller's
/// warm-up (no election until the longest heartbeat timeout, 1 s here, has passed since it began
/// serving; an earlier loss waits for that and a sweep, about 0.4 s in these clusters).
const SETTLE: Duration = Duration::from_secs(2);

/// Item 1: the master's connections close (kill); until the survivor holds a 1008 naming it.
fn failover_on_close(peers: usize) {
    let mut samples = Vec::new();
    for _ in 0..REPS {
        let cluster = ControllerCluster::start(peers, |_| {});
        cluster.wait_leader(WAIT);
        let (mut first, second) = master_and_slave(&cluster);
        std::thread::sleep(SETTLE);
        first.kill(); // returns once its thread (and every connection) is gone
        let closed = Instant::now();
        let got = wait_notified_master(&second, WAIT).expect("the survivor never got a 1008 naming it master");
        samples.push(ms(got - closed));
    }
    let (median, max) = median_max(&samples);
    json_line(
        "failover_on_close",
        serde_json::json!({ "peers": peers, "reps": REPS, "settle_ms": SETTLE.as_millis() as u64, "median_ms": median, "max_ms": max, "samples_ms": samples }),
    );
}

#[test]
#[ignore]
fn figure_failover_on_close_1_peer() {
    failover_on_close(1);
}

#[test]
#[ignore]
fn figure_failover_on_close_3_peers() {
    failover_on_close(3);
}

/// Item 2: the master hangs right after a heartbeat; from that heartbeat to the 1008.
#[test]
#[ignore]
fn figure_failover_on_hung_master() {
    let mut samples = Vec::new();
    let config = BrokerConfig::new("cb", "");
    for _ in 0..REPS {
        let cluster = ControllerCluster::start(1, |_| {});
        cluster.wait_leader(WAIT);
        let (first, second) = master_and_slave(&cluster);
        std::thread::sleep(SETTLE);
        let before = beats_sent(&first);
        let until = Instant::now() + WAIT;
        while beats_sent(&first) == before && Instant::now() < until {
            std::thread::sleep(Duration::from_micros(200));
        }
        first.hang();
        let last_beat = Instant::now();
        let got = wait_notified_master(&second, WAIT * 2).expect("no 1008 naming the slave after the master hung");
        samples.push(ms(got - last_beat));
    }
    let (median, max) = median_max(&samples);
    json_line(
        "failover_on_hung_master",
        serde_json::json!({
            "peers": 1, "reps": REPS, "settle_ms": SETTLE.as_millis() as u64, "median_ms": median, "max_ms": max, "samples_ms": samples,
            "heartbeat_timeout_ms": config.heartbeat_timeout_ms,
            "heartbeat_interval_ms": config.heartbeat_interval.as_millis() as u64,
            "scan_inactive_master_interval_ms": 200,
        }),
    );
}

/// Item 3: the master is killed; until the embedded NameServer's route names the survivor as 0.
#[test]
#[ignore]
fn figure_route_names_new_master() {
    let (mut route_samples, mut notify_samples) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        let cluster = ControllerCluster::start(1, |_| {});
        cluster.wait_leader(WAIT);
        let ns = cluster.server(0).addr;
        let (mut first, second) = master_and_slave_with(&cluster, &|c: &mut BrokerConfig| c.namesrv = Some(ns));
        let mut client = cluster.server(0).client();
        let master_addr = |client: &mut namesrv_testkit::Client| {
            client.route("T1").ok().and_then(|r| route_addrs(&r, "cb")["0"].as_str().map(str::to_owned))
        };
        assert!(eventually(WAIT, || master_addr(&mut client).as_deref() == Some(first.addr.as_str())));
        std::thread::sleep(SETTLE);
        first.kill();
        let closed = Instant::now();
        let until = closed + WAIT;
        let mut routed = None;
        while Instant::now() < until {
            if master_addr(&mut client).as_deref() == Some(second.addr.as_str()) {
                routed = Some(Instant::now());
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let routed = routed.expect("the route never named the new master as brokerId 0");
        route_samples.push(ms(routed - closed));
        let notified = wait_notified_master(&second, WAIT).expect("no 1008");
        notify_samples.push(ms(notified.min(routed) - closed));
    }
    let (median, max) = median_max(&route_samples);
    json_line(
        "route_names_new_master",
        serde_json::json!({ "peers": 1, "reps": REPS, "settle_ms": SETTLE.as_millis() as u64, "median_ms": median, "max_ms": max,
            "samples_ms": route_samples, "notify_seen_by_ms": notify_samples }),
    );
}

/// Item 4: `GROUPS` groups × 2 replicas registered, then heartbeats (904 one-way) pipelined
/// over `CONNS` connections for 5 s in batches, each batch followed by a 1005 on the same
/// connection (so a batch counts once the peer has read past it).
#[test]
#[ignore]
fn figure_heartbeat_capacity() {
    const GROUPS: usize = 100;
    const CONNS: usize = 4;
    const BATCH: usize = 500;
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let mut client = cluster.client(0);
    let addr = |g: usize, id: i64| format!("127.0.0.1:{}", 20000 + g * 2 + id as usize);
    for g in 0..GROUPS {
        for id in 1..=2i64 {
            let apply = ApplyBrokerIdHeader {
                cluster_name: "c".into(),
                broker_name: format!("hb{g}"),
                applied_broker_id: id,
                register_check_code: format!("{};1", addr(g, id)),
            };
            let answer = client.call(RemotingCommand::request(1013, Some(apply.to_ext())));
            assert_eq!(answer.code, 0, "apply id {id} in hb{g}: {answer:?}");
            let reg = RegisterToControllerHeader {
                cluster_name: "c".into(),
                broker_name: format!("hb{g}"),
                broker_id: id,
                broker_address: addr(g, id),
                invoke_time: Some(0),
            };
            assert_eq!(client.call(RemotingCommand::request(1003, Some(reg.to_ext()))).code, 0);
        }
    }
    let duration = Duration::from_secs(5);
    let started = Instant::now();
    let threads: Vec<_> = (0..CONNS)
        .map(|c| {
            let mut client = cluster.client(0);
            std::thread::spawn(move || {
                let mut count = 0u64;
                let mut batch = Vec::with_capacity(BATCH);
                let mut n = c;
                while started.elapsed() < duration {
                    batch.clear();
                    for _ in 0..BATCH {
                        let (g, id) = ((n / 2) % GROUPS, (n % 2) as i64 + 1);
                        n += CONNS;
                        let header = ControllerHeartbeatHeader {
                            cluster_name: "c".into(),
                            broker_addr: addr(g, id),
                            broker_name: format!("hb{g}"),
                            broker_id: Some(id),
                            epoch: Some(0),
                            max_offset: Some(0),
                            confirm_offset: Some(0),
                            heartbeat_timeout_mills: Some(10_000),
                            election_priority: Some(i32::MAX),
                        };
                        let mut beat = RemotingCommand::request(904, Some(header.to_ext()));
                        beat.flag = FLAG_ONEWAY;
                        batch.push(beat);
                    }
                    client.send_batch(&batch);
                    let answer = client.call(RemotingCommand::request(1005, None));
                    assert_eq!(answer.code, 0);
                    count += BATCH as u64;
                }
                count
            })
        })
        .collect();
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let took = started.elapsed();
    assert!(total > 0);
    json_line(
        "heartbeat_capacity",
        serde_json::json!({ "peers": 1, "groups": GROUPS, "replicas": 2, "connections": CONNS, "batch": BATCH,
            "heartbeats": total, "seconds": took.as_secs_f64(),
            "heartbeats_per_s": (total as f64 / took.as_secs_f64()).round(), "cpu": "not measured (in-process)" }),
    );
}

/// The entries peer `follower` lacks, as the leader `leader` exports it.
fn lag(cluster: &ControllerCluster, leader: usize, follower: usize) -> Option<f64> {
    let name = format!("namesrv_controller_raft_replication_lag{{peer=\"n{follower}\"}}");
    sample(&get(cluster.http(leader), "/metrics").body, &name)
}

/// Item 5: 3 peers; a follower stops, 200 writes (1013 of new groups), it restarts; until the
/// leader sees its log caught up (its lag 0).
#[test]
#[ignore]
fn figure_peer_restart_catch_up() {
    const WRITES: usize = 200;
    let mut samples = Vec::new();
    let mut write_ms = Vec::new();
    for rep in 0..REPS {
        let mut cluster = ControllerCluster::start(3, |_| {});
        let leader = cluster.wait_leader(WAIT);
        let follower = (0..3).find(|i| *i != leader).unwrap();
        assert!(eventually(WAIT, || lag(&cluster, leader, follower) == Some(0.0)));
        cluster.stop(follower);
        let mut client = cluster.client(leader);
        let writing = Instant::now();
        for g in 0..WRITES {
            let apply = ApplyBrokerIdHeader {
                cluster_name: "c".into(),
                broker_name: format!("w{rep}-{g}"),
                applied_broker_id: 1,
                register_check_code: format!("127.0.0.1:{};1", 30000 + g),
            };
            let answer = client.call(RemotingCommand::request(1013, Some(apply.to_ext())));
            assert_eq!(answer.code, 0, "write {g}: {answer:?}");
        }
        write_ms.push(ms(writing.elapsed()));
        assert!(lag(&cluster, leader, follower) >= Some(WRITES as f64), "the stopped peer lags");
        let restarted = Instant::now();
        cluster.restart(follower);
        let until = restarted + WAIT * 3;
        let mut caught = None;
        while Instant::now() < until {
            if lag(&cluster, leader, follower) == Some(0.0) {
                caught = Some(Instant::now());
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let caught = caught.expect("the restarted peer never caught up with the leader");
        samples.push(ms(caught - restarted));
    }
    let (median, max) = median_max(&samples);
    json_line(
        "peer_restart_catch_up",
        serde_json::json!({ "peers": 3, "writes": WRITES, "reps": REPS, "median_ms": median, "max_ms": max,
            "samples_ms": samples, "writes_took_ms": write_ms }),
    );
}
