//! Stalls of our own, on the real binary over real TCP: a process paused (SIGSTOP/SIGCONT, as a
//! GC-like pause or a frozen VM would) longer than the brokers' timeout expires none of the
//! brokers that kept sending meanwhile, and a broker that really went silent still expires.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::common::checks::assert_success;
use crate::common::process::{namesrv_command, Proc};
use crate::common::*;

/// Registers every broker, each over its own connection, every 300 ms until `stop`; waits up to
/// 30 s for each answer (a paused server answers late, not never). Returns what went wrong.
fn heartbeat(mut conns: Vec<(Client, Broker)>, stop: Arc<AtomicBool>) -> JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut errors = Vec::new();
        let mut opaque = 1_000;
        while !stop.load(Ordering::Relaxed) && errors.is_empty() {
            for (client, broker) in &mut conns {
                let mut request = broker.register_request();
                opaque += 1;
                request.opaque = opaque;
                client.send(&request);
                match client.read_frame_within(Duration::from_secs(30)) {
                    Incoming::Frame(r) if r.code == 0 && r.opaque == opaque => {}
                    other => errors.push(format!("{}: {other:?}", broker.name)),
                }
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        errors
    })
}

#[test]
fn a_pause_longer_than_the_timeout_expires_no_broker_that_kept_sending_but_a_silent_one_still_expires() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0", "--set", "broker_timeout_ms=3000", "--set", "scan_interval_ms=500"]);
    cmd.args(["--set", "runtime_min_broker_timeout_ms=1000"]);
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    let mut silent = Client::connect(addr);
    assert_success(&silent.register(&Broker::new("C", "silent", 0, "10.0.2.1:10911").topics(&["S1", "S2"])));
    let brokers: Vec<Broker> = (0..6)
        .map(|i| Broker::new("C", &format!("b{i}"), 0, &format!("10.0.1.{i}:10911")).topics(&[&format!("T{i}"), "TS"]))
        .collect();
    let conns = brokers.iter().map(|b| (Client::connect(addr), b.clone())).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let beats = heartbeat(conns, stop.clone());
    std::thread::sleep(Duration::from_millis(1_000));

    proc.pause();
    std::thread::sleep(Duration::from_millis(5_000));
    proc.resume();
    std::thread::sleep(Duration::from_millis(2_000));

    let mut client = Client::connect(addr);
    let gone: Vec<&str> =
        brokers.iter().filter(|b| client.route(&b.topics[0].0).is_err()).map(|b| b.name.as_str()).collect();
    let stderr = proc.stderr();
    let expired: Vec<&str> =
        stderr.lines().filter(|l| l.contains("broker expired") && l.contains("broker=b")).collect();
    assert!(expired.is_empty(), "brokers that kept sending expired:\n{}", expired.join("\n"));
    assert!(gone.is_empty(), "routes gone: {gone:?}\n{stderr}");
    assert!(stderr.contains("expiry tick late"), "the stall is logged:\n{stderr}");

    let silent_expired = |l: &str| l.contains("broker expired") && l.contains("broker=silent");
    assert!(
        eventually(Duration::from_secs(15), || proc.stderr().lines().any(silent_expired)),
        "the silent broker never expired:\n{}",
        proc.stderr()
    );
    assert_eq!(client.route("S1"), Err(17));
    stop.store(true, Ordering::Relaxed);
    let errors = beats.join().unwrap();
    assert!(errors.is_empty(), "heartbeats failed: {errors:?}\n{}", proc.stderr());
    assert!(!proc.stderr().lines().any(|l| l.contains("broker expired") && l.contains("broker=b")));
}
