//! `namesrv healthcheck` (the image's HEALTHCHECK) against a real server: a route query over the
//! remoting port, `/livez` over HTTP, the address from the settings, and a closed port failing
//! within its timeout.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{temp_dir, TestServer};

/// `namesrv ARGS` with no defaults file and no namesrv variables from the environment.
fn namesrv(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_namesrv"));
    for (key, _) in std::env::vars().filter(|(k, _)| k.starts_with("NAMESRV_")) {
        cmd.env_remove(key);
    }
    cmd.arg("--config-dir").arg(temp_dir()).args(args).output().expect("run namesrv")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An address nothing listens on (bound, then closed).
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").to_string()
}

#[test]
fn a_serving_namesrv_is_healthy_by_route_query_and_by_livez() {
    let server = TestServer::with_http(|_| {});
    let out = namesrv(&["healthcheck", "--addr", &server.ns()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    assert!(line.starts_with(&format!("healthy: {} answered a route query", server.ns())), "{line}");
    let http = server.http_addr.expect("http").to_string();
    let out = namesrv(&["healthcheck", "--http", &http]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with(&format!("healthy: {http} answered /livez with 200")));
}

#[test]
fn without_an_address_the_settings_say_where_to_ask() {
    let server = TestServer::with_http(|_| {});
    let port = server.addr.port().to_string();
    // HTTP off in the settings: the remoting port, its wildcard host asked on loopback.
    let listen = format!("0.0.0.0:{port}");
    let out = namesrv(&["--listen", &listen, "--set", "http_listen=", "healthcheck"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("127.0.0.1:{port} answered a route query")), "{}", text(&out.stdout));
    // HTTP on: /livez.
    let http = server.http_addr.expect("http").to_string();
    let out = namesrv(&["--listen", &listen, "--set", &format!("http_listen={http}"), "healthcheck"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("answered /livez with 200"), "{}", text(&out.stdout));
    // Port 0 names no server.
    let out = namesrv(&["--listen", "127.0.0.1:0", "--set", "http_listen=", "healthcheck"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("port 0"), "{}", text(&out.stderr));
}

#[test]
fn a_closed_port_or_a_non_http_answer_is_unhealthy_within_the_timeout() {
    let server = TestServer::with_http(|_| {});
    let dead = closed_port();
    let remoting = server.ns();
    for args in [
        vec!["healthcheck", "--addr", &dead, "--timeout-ms", "1000"],
        vec!["healthcheck", "--http", &dead, "--timeout-ms", "1000"],
        // The remoting port does not speak HTTP.
        vec!["healthcheck", "--http", &remoting, "--timeout-ms", "1000"],
    ] {
        let started = Instant::now();
        let out = namesrv(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out.stdout));
        assert!(text(&out.stderr).starts_with("unhealthy: "), "{args:?}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{args:?} took {:?}", started.elapsed());
    }
}
