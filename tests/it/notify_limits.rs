//! NOTIFY_MIN_BROKER_ID_CHANGE within its limits: a peer that churns the lowest id of a group
//! with many members cannot make the NameServer open connections without bound.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::common::checks::assert_success;
use crate::common::*;

/// A member of acting-master group `broker-n` at `addr`.
fn member(id: i64, addr: &str) -> Broker {
    let mut b = Broker::new("c", "broker-n", id, addr).topics(&["T1", "T2"]);
    b.ha_addr = "127.0.0.1:1".into();
    b.enable_acting_master = Some(true);
    b
}

/// Connections accepted by `listeners` until none has come for `quiet`.
fn accepted_until_quiet(listeners: &[TcpListener], quiet: Duration) -> usize {
    let mut count = 0;
    let mut last = Instant::now();
    while last.elapsed() < quiet {
        let mut any = false;
        for l in listeners {
            while l.accept().is_ok() {
                count += 1;
                any = true;
            }
        }
        if any {
            last = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    count
}

#[test]
fn a_churned_lowest_id_opens_no_more_connections_than_the_limits_allow() {
    let server = TestServer::with(|s| {
        s.routing.notify_min_broker_id_changed = true;
        s.routing.notify_max_per_second = 5;
        s.routing.notify_max_in_flight = 4;
    });
    // Ten members (ids 1..=10), each at a listener of its own that counts connections.
    let listeners: Vec<TcpListener> = (0..10).map(|_| TcpListener::bind("127.0.0.1:0").expect("bind")).collect();
    let mut members = server.client();
    for (i, l) in listeners.iter().enumerate() {
        l.set_nonblocking(true).unwrap();
        assert_success(&members.register(&member(i as i64 + 1, &l.local_addr().unwrap().to_string())));
    }
    // Id 0 comes and goes: each change would notify the ten others (200 connections in all).
    let started = Instant::now();
    let lowest = member(0, "127.0.0.1:2");
    let mut churn = server.client();
    for _ in 0..10 {
        assert_success(&churn.register(&lowest));
        assert_success(&churn.unregister(&lowest));
    }
    let delivered = accepted_until_quiet(&listeners, Duration::from_millis(700));
    let seconds = started.elapsed().as_secs() as usize + 1;
    assert!(delivered >= 1, "notifications are still sent within the limits");
    assert!(delivered <= 5 * (seconds + 1), "{delivered} connections in about {seconds} s, at most 5 a second");
}
