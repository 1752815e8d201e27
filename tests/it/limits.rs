//! Limits on what one peer can make the server hold, over real TCP: names, topics and KV
//! entries, the budget of partly received frames, the receive deadline and back-pressure.

use std::time::Duration;

use crate::common::checks::assert_success;
use crate::common::kv_config::{put_kv, SYSTEM_ERROR};
use crate::common::*;
use namesrv::protocol::RemotingCommand;

#[test]
fn oversized_or_control_character_names_are_refused_naming_the_field() {
    let server = TestServer::start();
    let mut conn = server.client();
    let huge = "b".repeat(1 << 20);
    let resp = conn.register(&Broker::new("c", &huge, 0, "127.0.0.1:1").topics(&["T1", "T2"]));
    assert_eq!(
        (resp.code, resp.remark.as_deref()),
        (SYSTEM_ERROR, Some("brokerName too long: 1048576 bytes, max 255"))
    );
    let resp = conn.register(&Broker::new(&huge, "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]));
    assert_eq!(resp.remark.as_deref(), Some("clusterName too long: 1048576 bytes, max 255"));
    let resp = conn.register(&Broker::new("c", "b\u{7}", 0, "127.0.0.1:1").topics(&["T1", "T2"]));
    assert_eq!(resp.remark.as_deref(), Some("brokerName contains a control character"));
    assert_eq!(server.client().cluster_info()["brokerAddrTable"], serde_json::json!({}), "nothing stored");

    let resp = put_kv(&mut conn, &"n".repeat(256), "k", "v");
    assert_eq!(resp.remark.as_deref(), Some("namespace too long: 256 bytes, max 255"));
}

#[test]
fn topic_names_java_accepts_are_registered_as_sent_bounded_only_by_the_byte_limits() {
    let server = TestServer::start();
    let mut conn = server.client();
    let long = "t".repeat(300);
    let names = ["Good1", "bad topic", long.as_str(), "a.b", "tópico", "x\u{7}y"];
    assert_success(&conn.register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&names)));
    let mut client = server.client();
    for name in names {
        assert!(client.route(name).is_ok(), "{name:?} is routed, as Java routes it");
    }
}

#[test]
fn a_registration_over_the_topic_cap_is_refused() {
    let server = TestServer::with(|s| s.limits.max_topics_per_broker = 3);
    let mut conn = server.client();
    let resp = conn.register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2", "T3", "T4"]));
    assert_eq!(resp.code, SYSTEM_ERROR);
    assert!(resp.remark.unwrap_or_default().contains("too many topics: more than 3"));
    assert_success(&conn.register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2", "T3"])));
}

#[test]
fn kv_values_and_the_kv_store_are_bounded() {
    let server = TestServer::with(|s| {
        s.limits.kv_max_value_bytes = 1000;
        s.limits.kv_max_store_bytes = 2500;
    });
    let mut client = server.client();
    let resp = put_kv(&mut client, "ns", "k", &"v".repeat(1001));
    assert_eq!((resp.code, resp.remark.as_deref()), (SYSTEM_ERROR, Some("kv value too large: 1001 bytes, max 1000")));
    for key in ["a", "b"] {
        assert_success(&put_kv(&mut client, "ns", key, &"v".repeat(1000)));
    }
    let resp = put_kv(&mut client, "ns", "c", &"v".repeat(1000));
    assert_eq!(resp.code, SYSTEM_ERROR);
    assert!(resp.remark.unwrap_or_default().starts_with("kv store full"), "refused past the store's size");
    assert_success(&put_kv(&mut client, "ns", "a", "small"));
}

#[test]
fn a_fifteen_mib_kv_value_is_refused_at_the_default_limit() {
    let server = TestServer::start();
    let mut client = server.client();
    let resp = put_kv(&mut client, "ns", "k", &"v".repeat(15 << 20));
    assert_eq!(resp.code, SYSTEM_ERROR);
    assert_eq!(resp.remark.as_deref(), Some("kv value too large: 15728640 bytes, max 1048576"));
}

/// Sends the first `sent` bytes of a frame announcing `total` bytes.
fn start_frame(client: &mut Client, total: usize, sent: usize) {
    let mut bytes = ((total - 4) as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(&[0, 0, 0, 2, b'{', b'}']);
    bytes.resize(sent, b' ');
    client.send_raw(&bytes);
}

#[test]
fn large_frames_that_do_not_fit_the_budget_close_their_connection_while_small_ones_pass() {
    let server = TestServer::with(|s| {
        s.limits.max_frame_bytes = 1 << 20;
        s.limits.frame_budget_bytes = 1 << 20;
        // One pool, first come: the shares of it are tested in fair_shares.
        s.limits.peer_share_percent = 100;
        s.limits.broker_reserve_percent = 0;
    });
    let mut first = server.client();
    start_frame(&mut first, 800 * 1024, 600 * 1024);
    std::thread::sleep(Duration::from_millis(100));
    let mut second = server.client();
    start_frame(&mut second, 800 * 1024, 600 * 1024);
    // Usually `first` holds the budget, but a slow I/O thread may let `second` reserve first.
    let second_refused = second.closed_by_server(Duration::from_secs(1));
    let first_refused = first.closed_by_server(Duration::from_millis(100));
    assert!(second_refused != first_refused, "the budget holds exactly one of them");
    assert_eq!(server.client().call(RemotingCommand::request(106, None)).code, 0, "small frames are never held up");
    drop(if second_refused { first } else { second });
    // The reservation comes back when the server handles the close, on the closed connection's
    // own I/O thread, so a new large frame is admitted soon after, not at once.
    let admitted = eventually(Duration::from_secs(3), || {
        let mut third = server.client();
        start_frame(&mut third, 800 * 1024, 600 * 1024);
        !third.closed_by_server(Duration::from_millis(300))
    });
    assert!(admitted, "a closed connection returns its reservation to the budget");
}

#[test]
fn a_frame_not_complete_within_the_receive_deadline_closes_its_connection() {
    let server = TestServer::with(|s| s.limits.frame_receive_timeout_secs = 1);
    let mut slow = server.client();
    start_frame(&mut slow, 100, 10);
    for _ in 0..3 {
        // A trickle keeps bytes coming but does not extend the deadline.
        std::thread::sleep(Duration::from_millis(300));
        let _ = slow.try_send_raw(b" ");
    }
    assert!(slow.closed_by_server(Duration::from_secs(3)));
}

#[test]
fn a_peer_that_never_reads_stalls_only_itself() {
    let server = TestServer::with(|s| {
        s.limits.write_buffer_high_bytes = 64 * 1024;
        s.limits.write_buffer_low_bytes = 16 * 1024;
    });
    let topics: Vec<String> = (0..2000).map(|i| format!("Topic-{i}")).collect();
    let refs: Vec<&str> = topics.iter().map(String::as_str).collect();
    let mut broker = server.client();
    assert_success(&broker.register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&refs)));
    let mut greedy = Client::with_timeout(server.addr, Duration::from_secs(2));
    let mut frame = bytes::BytesMut::new();
    let all_topics = RemotingCommand::request(206, None);
    for _ in 0..2000 {
        namesrv::protocol::codec::encode_frame(&all_topics, &mut frame).unwrap();
    }
    let _ = greedy.try_send_raw(&frame);
    let mut other = server.client();
    for _ in 0..20 {
        assert_eq!(other.route("Topic-7").map(|_| ()), Ok(()), "another connection keeps answering");
    }
}
