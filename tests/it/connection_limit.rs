//! The connection limit over real TCP: connections over `max_connections` are closed as they
//! are accepted while the open ones and the HTTP probes are served, and the real binary under a
//! low open-file limit keeps descriptors for its probes and state files.

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::common::checks::assert_success;
use crate::common::http::get;
use crate::common::kv_config::put_ok;
use crate::common::process::{namesrv_command, prlimited, Proc};
use crate::common::*;

#[test]
fn a_connection_over_max_connections_is_closed_and_the_open_ones_and_the_probes_are_served() {
    // One pool, first come: the shares of it are tested in fair_shares.
    let server = TestServer::with_http(|s| {
        s.limits.max_connections = 8;
        s.limits.peer_share_percent = 100;
        s.limits.broker_reserve_percent = 0;
    });
    let http = server.http_addr.unwrap();
    let mut open: Vec<Client> = (0..8).map(|_| server.client()).collect();
    assert_success(&open[0].register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"])));
    for conn in &mut open {
        assert!(conn.route("T1").is_ok(), "each of the 8 is served");
    }
    let mut ninth = server.client();
    assert!(ninth.closed_by_server(Duration::from_secs(5)), "the 9th connection is closed at once");
    assert_eq!(get(http, "/livez").status, 200);
    for conn in &mut open {
        assert!(conn.route("T1").is_ok(), "the open ones are still served");
    }
    drop(open.pop());
    // Once one closes, its place is free again.
    assert!(eventually(Duration::from_secs(5), || {
        let mut next = server.client();
        !next.closed_by_server(Duration::from_millis(100)) && next.route("T1").is_ok()
    }));
}

/// The value of `key=` in a log line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split(&format!("{key}=")).nth(1).and_then(|v| v.split_whitespace().next()).unwrap_or_default()
}

#[test]
fn with_the_open_file_limit_exhausted_by_idle_connections_the_probes_and_state_writes_still_work() {
    let dir = temp_dir();
    let base = namesrv_command(&dir);
    // The real binary under a 128-descriptor limit (prlimit wraps it, as `ulimit -n` would).
    let mut cmd = prlimited("--nofile=128:128", &base);
    cmd.env("NAMESRV_BIND_ADDRESS", "127.0.0.1").env("NAMESRV_LISTEN_PORT", "0").env("NAMESRV_IO_THREADS", "1");
    cmd.env("NAMESRV_PEER_SHARE_PERCENT", "100").env("NAMESRV_BROKER_RESERVE_PERCENT", "0");
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    let http: SocketAddr = field(&proc.wait_for_line(&["http endpoint up"]), "http_addr").parse().unwrap();
    let limit: usize = field(&proc.wait_for_line(&["connection limit"]), "max_connections").parse().unwrap();
    assert!((1..128 - 64).contains(&limit), "below the soft limit less the reserve: {limit}");
    assert!(proc.stderr().contains("fd_soft_limit=Some(128)"), "{}", proc.stderr());

    let mut first = Client::connect(addr);
    put_ok(&mut first, "ns", "before", "v");
    // More idle connections than the process has descriptors.
    let idle: Vec<TcpStream> = (0..200).map(|_| TcpStream::connect(addr).unwrap()).collect();
    assert_eq!(get(http, "/livez").status, 200, "the liveness probe answers");
    assert_eq!(get(http, "/readyz").status, 200);
    put_ok(&mut first, "ns", "after", "v");
    let mut probe = Client::connect(addr);
    assert!(probe.closed_by_server(Duration::from_secs(5)), "a connection over the limit is closed");
    assert!(first.route("NoSuchTopic").is_err());
    let warned = proc.stderr().matches("connection closed: max_connections reached").count();
    assert!((1..=2).contains(&warned), "one warn line per 10 s, got {warned}");
    assert_eq!(proc.stderr().matches("accept failed").count(), 0, "{}", proc.stderr());
    drop(idle);
}

#[test]
fn idle_http_connections_cannot_use_the_descriptors_state_writes_need() {
    let dir = temp_dir();
    let base = namesrv_command(&dir);
    let mut cmd = prlimited("--nofile=128:128", &base);
    cmd.env("NAMESRV_BIND_ADDRESS", "127.0.0.1").env("NAMESRV_LISTEN_PORT", "0").env("NAMESRV_IO_THREADS", "1");
    cmd.env("NAMESRV_HTTP_IDLE_TIMEOUT_MS", "500");
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    let http: SocketAddr = field(&proc.wait_for_line(&["http endpoint up"]), "http_addr").parse().unwrap();
    let limit: usize = field(&proc.wait_for_line(&["connection limit"]), "max_connections").parse().unwrap();
    assert!(limit <= 128 - 32 - 32, "HTTP connections and the state files' reserve come off: {limit}");

    let mut client = Client::connect(addr);
    // More idle HTTP connections than the process has descriptors: past http_max_connections
    // they wait in the listen queue and hold none of the server's.
    let idle: Vec<TcpStream> = (0..200).map(|_| TcpStream::connect(http).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    for i in 0..21 {
        put_ok(&mut client, "ns", &format!("key{i}"), "v");
    }
    // Idle connections are closed after http_idle_timeout_ms, so the queue drains and a probe
    // behind all 200 is answered.
    assert_eq!(get(http, "/livez").status, 200, "the liveness probe answers behind the idle queue");
    assert_eq!(proc.stderr().matches("accept failed").count(), 0, "{}", proc.stderr());
    drop(idle);
}
