//! Warm restart, on the real binary over real TCP: the route snapshot written at shutdown (or a
//! few seconds after a change, for a kill -9) is loaded at start, so routes are served at once
//! with the same bodies; brokers that come back stay, the others go on their own timeout.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::checks::assert_success;
use crate::common::kv_config::update_config;
use crate::common::process::{namesrv_command, Proc};
use crate::common::*;

const WAIT: Duration = Duration::from_secs(10);

/// The binary on `dir`'s state files with a 3 s broker timeout, scanned every 200 ms, and
/// `settings` (`key=value`) on top.
fn command(dir: &Path, settings: &[&str]) -> Command {
    let mut cmd = namesrv_command(dir);
    cmd.args(["--listen", "127.0.0.1:0", "--set", "broker_timeout_ms=3000", "--set", "scan_interval_ms=200"]);
    cmd.args(["--set", "runtime_min_broker_timeout_ms=1000"]);
    for setting in settings {
        cmd.args(["--set", setting]);
    }
    cmd
}

/// The readiness wait on: a loaded snapshot must skip it.
const WAITING: &[&str] = &["need_wait_for_service=true", "wait_seconds_for_service=60"];

/// The raw route body of `topic`, or the response code.
fn route_bytes(client: &mut Client, topic: &str) -> Result<Vec<u8>, i32> {
    let resp = client.call(route_request(topic, 479));
    match resp.code {
        0 => Ok(resp.body.map(|b| b.to_vec()).unwrap_or_default()),
        code => Err(code),
    }
}

/// Registers each broker over its own connection, kept open.
fn register_all(addr: std::net::SocketAddr, brokers: &[&Broker]) -> Vec<Client> {
    brokers
        .iter()
        .map(|b| {
            let mut conn = Client::connect(addr);
            assert_success(&conn.register(b));
            conn
        })
        .collect()
}

#[test]
fn after_sigterm_routes_are_served_at_once_and_only_brokers_that_come_back_stay() {
    let dir = temp_dir();
    let b1 = Broker::new("C", "b1", 0, "10.0.3.1:10911").topics(&["T1", "TS"]);
    let b2 = Broker::new("C", "b2", 0, "10.0.3.2:10911").topics(&["T2", "TS"]);
    let b3 = Broker {
        heartbeat_timeout_ms: Some(8_000),
        ..Broker::new("C", "b3", 0, "10.0.3.3:10911").topics(&["T3", "T4"])
    };
    let mut first = Proc::spawn(command(&dir, &[]));
    let conns = register_all(first.addr(), &[&b1, &b2, &b3]);
    let mut client = Client::connect(first.addr());
    let before: Vec<_> = ["T1", "T2", "T3", "TS"].iter().map(|t| route_bytes(&mut client, t).unwrap()).collect();
    first.terminate();
    assert!(first.wait(WAIT).success());
    drop(conns);
    assert!(first.stderr().contains("route snapshot written at shutdown"), "{}", first.stderr());

    let spawned = Instant::now();
    let mut second = Proc::spawn(command(&dir, WAITING));
    let mut client = Client::connect(second.addr());
    let after: Vec<_> = ["T1", "T2", "T3", "TS"].iter().map(|t| route_bytes(&mut client, t)).collect();
    eprintln!("restart to first routes: {} ms", spawned.elapsed().as_millis());
    assert_eq!(after, before.into_iter().map(Ok).collect::<Vec<_>>(), "same bodies right after the port opens");
    second.wait_for_line(&["route snapshot loaded", "brokers=3", "age_ms="]);
    let http = second.http_addr();
    let ready = crate::common::http::get(http, "/readyz");
    assert_eq!(ready.status, 200, "ready at once despite need_wait_for_service: {}", ready.body);
    let metrics = crate::common::http::get(http, "/metrics").body;
    assert!(
        eventually(WAIT, || crate::common::http::get(http, "/metrics").body.contains("namesrv_provisional_brokers 3")),
        "{metrics}"
    );

    // b1 comes back and keeps registering; b2 and b3 do not.
    let mut back = Client::connect(second.addr());
    let deadline = Instant::now() + WAIT;
    while route_bytes(&mut client, "T2").is_ok() {
        assert_success(&back.register(&b1));
        assert!(Instant::now() < deadline, "b2 never expired:\n{}", second.stderr());
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(route_bytes(&mut client, "T1").is_ok(), "b1 came back");
    assert!(route_bytes(&mut client, "T3").is_ok(), "b3 has 8 s, counted from the restart");
    let deadline = Instant::now() + WAIT;
    while route_bytes(&mut client, "T3").is_ok() {
        assert_success(&back.register(&b1));
        assert!(Instant::now() < deadline, "b3 never expired:\n{}", second.stderr());
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(route_bytes(&mut client, "T1").is_ok());
    assert!(second.stderr().contains("broker expired"), "{}", second.stderr());
}

#[test]
fn a_runtime_config_update_after_a_warm_start_keeps_routes_served_and_readyz_agrees() {
    let dir = temp_dir();
    let mut first = Proc::spawn(command(&dir, &[]));
    let b1 = Broker::new("C", "b1", 0, "10.0.7.1:10911").topics(&["T1", "T2"]);
    let _conns = register_all(first.addr(), &[&b1]);
    first.terminate();
    assert!(first.wait(WAIT).success());

    let mut second = Proc::spawn(command(&dir, WAITING));
    let http = second.http_addr();
    let mut client = Client::connect(second.addr());
    assert!(route_bytes(&mut client, "T1").is_ok(), "served at once:\n{}", second.stderr());
    // need_wait_for_service is still on in the settings: the update hands them to the registry.
    assert_success(&update_config(&mut client, Some("enableTopicList=false")));
    assert!(route_bytes(&mut client, "T1").is_ok(), "still served after the update:\n{}", second.stderr());
    let ready = crate::common::http::get(http, "/readyz");
    assert_eq!(ready.status, 200, "{}", ready.body);

    // A cold start inside the wait: the route query and /readyz agree the other way.
    let mut cold = Proc::spawn(command(&temp_dir(), WAITING));
    let http = cold.http_addr();
    assert_eq!(route_bytes(&mut Client::connect(cold.addr()), "T1"), Err(1), "not ready: SYSTEM_ERROR");
    let waiting = crate::common::http::get(http, "/readyz");
    assert_eq!(waiting.status, 503, "{}", waiting.body);
    assert!(waiting.body.contains("waiting for service"), "{}", waiting.body);
}

#[test]
fn after_kill_9_past_the_staleness_window_routes_are_served_at_once() {
    let dir = temp_dir();
    let snapshot = dir.join("routeSnapshot.json");
    let mut first = Proc::spawn(command(&dir, &["broker_timeout_ms=60000"]));
    let b1 = Broker::new("C", "b1", 0, "10.0.4.1:10911").topics(&["T1", "T2"]);
    let _c1 = register_all(first.addr(), &[&b1]);
    assert!(eventually(WAIT, || std::fs::read_to_string(&snapshot).is_ok_and(|s| s.contains("10.0.4.1"))));
    let b2 = Broker::new("C", "b2", 0, "10.0.4.2:10911").topics(&["T3", "T4"]);
    let _c2 = register_all(first.addr(), &[&b2]);
    let changed = Instant::now();
    assert!(eventually(WAIT, || std::fs::read_to_string(&snapshot).is_ok_and(|s| s.contains("10.0.4.2"))));
    eprintln!("change to snapshot on disk: {} ms", changed.elapsed().as_millis());
    first.kill_9();

    let mut second = Proc::spawn(command(&dir, WAITING));
    let mut client = Client::connect(second.addr());
    for topic in ["T1", "T2", "T3", "T4"] {
        assert!(route_bytes(&mut client, topic).is_ok(), "{topic}:\n{}", second.stderr());
    }
}

#[test]
fn a_broker_back_at_another_address_or_another_broker_at_its_address_replaces_the_provisional_entry() {
    let dir = temp_dir();
    let mut first = Proc::spawn(command(&dir, &[]));
    let b1 = Broker::new("C", "b1", 0, "10.0.5.1:10911").topics(&["T1", "T2"]);
    let b2 = Broker::new("C", "b2", 0, "10.0.5.2:10911").topics(&["T3", "T4"]);
    let _conns = register_all(first.addr(), &[&b1, &b2]);
    first.terminate();
    assert!(first.wait(WAIT).success());

    let mut second = Proc::spawn(command(&dir, &[]));
    let moved = Broker { addr: "10.0.5.9:10911".into(), ..b1.clone() };
    let taker = Broker::new("C", "b9", 0, &b2.addr).topics(&["T9", "T8"]);
    let _conns = register_all(second.addr(), &[&moved, &taker]);
    let mut client = Client::connect(second.addr());
    assert_eq!(route_addrs(&client.route("T1").unwrap(), "b1"), serde_json::json!({"0": "10.0.5.9:10911"}));
    assert_eq!(client.route("T3"), Err(17), "b2's address serves b9 now");
    let info = client.cluster_info().to_string();
    assert!(!info.contains("10.0.5.1:") && !info.contains("b2"), "{info}");
}

#[test]
fn an_unreadable_snapshot_is_ignored_with_a_warning_and_warm_restart_can_be_turned_off() {
    let dir = temp_dir();
    std::fs::write(dir.join("routeSnapshot.json"), b"{not json").unwrap();
    let mut proc = Proc::spawn(command(&dir, &[]));
    let addr = proc.addr();
    proc.wait_for_line(&["WARN", "route snapshot ignored", "not a route snapshot"]);
    let b1 = Broker::new("C", "b1", 0, "10.0.6.1:10911").topics(&["T1", "T2"]);
    let _conns = register_all(addr, &[&b1]);
    proc.terminate();
    assert!(proc.wait(WAIT).success());
    let snapshot = std::fs::read_to_string(dir.join("routeSnapshot.json")).unwrap();
    assert!(snapshot.contains("10.0.6.1"), "{snapshot}");

    let mut proc = Proc::spawn(command(&dir, &["warm_restart=false"]));
    assert_eq!(Client::connect(proc.addr()).route("T1"), Err(17));
    assert!(!proc.stderr().contains("route snapshot"), "{}", proc.stderr());
    proc.terminate();
    assert!(proc.wait(WAIT).success());

    let mut proc = Proc::spawn(command(&dir, &["warm_restart_max_age_ms=0"]));
    assert_eq!(Client::connect(proc.addr()).route("T1"), Err(17));
    proc.wait_for_line(&["WARN", "route snapshot ignored", "more than warm_restart_max_age_ms = 0"]);
}

/// The snapshot `first` wrote at SIGTERM, broker b1 (T1, T2) registered with `settings`.
fn snapshot_of_b1(dir: &Path, settings: &[&str]) -> String {
    let mut first = Proc::spawn(command(dir, settings));
    let b1 = Broker::new("C", "b1", 0, "10.0.8.1:10911").topics(&["T1", "T2"]);
    let _conns = register_all(first.addr(), &[&b1]);
    first.terminate();
    assert!(first.wait(WAIT).success());
    std::fs::read_to_string(dir.join("routeSnapshot.json")).unwrap()
}

/// `text` with the number after `"key":` replaced by `value`.
fn with_number(text: &str, key: &str, value: &str) -> String {
    let at = text.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("no {key} in {text}")) + key.len() + 3;
    let end = at + text[at..].find(|c: char| !c.is_ascii_digit()).unwrap();
    format!("{}{value}{}", &text[..at], &text[end..])
}

#[test]
fn a_snapshot_from_the_future_is_refused_and_a_ghost_timeout_in_one_is_clamped() {
    let dir = temp_dir();
    let written = snapshot_of_b1(&dir, &[]);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let future = with_number(&written, "taken_at_ms", &(now + 86_400_000).to_string());
    std::fs::write(dir.join("routeSnapshot.json"), future).unwrap();
    let mut second = Proc::spawn(command(&dir, &[]));
    second.wait_for_line(&["WARN", "route snapshot ignored", "taken in the future"]);
    assert_eq!(route_bytes(&mut Client::connect(second.addr()), "T1"), Err(17));
    second.terminate();
    assert!(second.wait(WAIT).success());

    let ghost = with_number(&written, "timeout_ms", &u64::MAX.to_string());
    std::fs::write(dir.join("routeSnapshot.json"), ghost).unwrap();
    let mut third = Proc::spawn(command(&dir, &["max_heartbeat_timeout_ms=2000"]));
    let mut client = Client::connect(third.addr());
    assert!(route_bytes(&mut client, "T1").is_ok(), "loaded:\n{}", third.stderr());
    assert!(
        eventually(Duration::from_secs(6), || route_bytes(&mut client, "T1").is_err()),
        "a member asking for u64::MAX is clamped to 2 s:\n{}",
        third.stderr()
    );
}

#[test]
fn a_snapshot_too_large_for_the_limits_is_refused_before_it_is_read() {
    let dir = temp_dir();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    let path = dir.join("routeSnapshot.json");
    let file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, format!("{{\"format\":1,\"taken_at_ms\":{now},\"groups\":[").as_bytes())
        .unwrap();
    file.set_len(1_900_000_000).unwrap();
    let mut proc = Proc::spawn(command(&dir, &["max_queue_entries_total=10000"]));
    proc.wait_for_line(&["WARN", "route snapshot ignored", "too large for the limits"]);
    assert_eq!(route_bytes(&mut Client::connect(proc.addr()), "T1"), Err(17), "it serves");
    assert!(proc.peak_rss_bytes() < 200 << 20, "peak RSS {} bytes: the file was read", proc.peak_rss_bytes());
}

#[test]
fn brokers_from_the_snapshot_are_shown_provisional_and_silent_since_their_last_heartbeat() {
    let dir = temp_dir();
    let mut first = Proc::spawn(command(&dir, &[]));
    let b1 = Broker::new("C", "b1", 0, "10.0.9.1:10911").topics(&["T1", "T2"]);
    let heard = Instant::now();
    let conns = register_all(first.addr(), &[&b1]);
    std::thread::sleep(Duration::from_millis(1_200));
    first.terminate();
    assert!(first.wait(WAIT).success());
    drop(conns);

    let mut second = Proc::spawn(command(&dir, &[]));
    let http = second.http_addr();
    let brokers = || -> serde_json::Value {
        serde_json::from_str(&crate::common::http::get(http, "/api/v1/brokers").body).unwrap()
    };
    let listed = brokers();
    let b = &listed[0];
    assert_eq!(b["provisional"], true, "{listed}");
    let silent = b["silent_ms"].as_u64().unwrap();
    assert!(
        silent >= 1_200 && silent <= heard.elapsed().as_millis() as u64,
        "since the heartbeat before the restart: {b}"
    );
    assert!(b["snapshot_age_ms"].as_u64().is_some_and(|age| age < silent), "{b}");
    let left = b["expires_in_ms"].as_u64().unwrap();
    assert!(left > 1_000 && left <= 3_000, "its timeout runs from the load: {b}");

    let mut back = Client::connect(second.addr());
    assert_success(&back.register(&b1));
    let listed = brokers();
    let b = &listed[0];
    assert_eq!((b["provisional"].as_bool(), b.get("snapshot_age_ms")), (Some(false), None), "{listed}");
    assert!(b["silent_ms"].as_u64().unwrap() < 1_000, "{b}");
}
