//! Shared capacity is shared fairly: what one source address takes is bounded by its own share,
//! so an honest peer from another address gets through while it attacks. Attackers connect
//! from 127.0.0.2 and honest peers from 127.0.0.1 (all of 127/8 is loopback on Linux): two
//! hosts, as the server counts them.

use std::time::{Duration, Instant};

use crate::common::requests::request;
use crate::common::*;
use namesrv::protocol::RemotingCommand;

/// GET_TOPICS_BY_CLUSTER.
const TOPICS_BY_CLUSTER: i32 = 224;

/// Where attackers connect from.
pub const ATTACKER: &str = "127.0.0.2";

#[test]
fn a_peer_pipelining_topic_listings_waits_at_its_own_rate_and_another_address_is_served_at_once() {
    let server = TestServer::with(|s| s.limits.costly_requests_per_second_per_peer = 5);
    server.register(&Broker::new("C", "b1", 0, "10.8.0.1:10911").topics(&["T1", "T2"]));
    let mut attacker = Client::connect_from(ATTACKER, server.addr);
    let listings: Vec<RemotingCommand> = (0..30).map(|_| request(TOPICS_BY_CLUSTER, &[("cluster", "C")])).collect();
    let began = Instant::now();
    attacker.send_batch(&listings);

    std::thread::sleep(Duration::from_millis(200));
    let mut honest = Client::connect_from("127.0.0.1", server.addr);
    let asked = Instant::now();
    assert_eq!(honest.call(request(TOPICS_BY_CLUSTER, &[("cluster", "C")])).code, 0);
    let honest_wait = asked.elapsed();

    for _ in 0..listings.len() {
        assert_eq!(attacker.read_frame().expect("every listing is answered").code, 0);
    }
    let attacker_took = began.elapsed();
    // 10 at once (a burst of twice the rate), then 20 more at 5 a second: at least 4 s.
    assert!(attacker_took >= Duration::from_secs(3), "30 listings in {} ms", attacker_took.as_millis());
    assert!(honest_wait < Duration::from_secs(1), "the other address waited {} ms", honest_wait.as_millis());
}

#[test]
fn a_connection_that_sends_nothing_or_stops_in_the_middle_of_a_frame_is_closed_on_its_deadline() {
    let server = TestServer::with(|s| {
        s.limits.first_byte_timeout_ms = 300;
        s.limits.frame_progress_timeout_ms = 300;
    });
    let began = Instant::now();
    let mut silent = Client::connect_from(ATTACKER, server.addr);
    let mut stalled = Client::connect_from(ATTACKER, server.addr);
    // A frame of 200 bytes announced, 9 of them sent.
    stalled.send_raw(&[0, 0, 0, 200, 0, 0, 0, 50, b'{']);
    let mut honest = Client::connect_from("127.0.0.1", server.addr);
    for _ in 0..6 {
        assert_eq!(honest.call(request(106, &[])).code, 0, "a peer that keeps talking stays");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(silent.closed_by_server(Duration::from_secs(5)), "no byte: closed (idle would take 120 s)");
    assert!(stalled.closed_by_server(Duration::from_secs(5)), "a stalled frame: closed (its deadline is 30 s)");
    assert!(began.elapsed() < Duration::from_secs(5), "took {} ms", began.elapsed().as_millis());
}

#[test]
fn a_peer_that_does_not_read_its_replies_is_closed_and_what_they_held_goes_back() {
    let server = TestServer::with_http(|s| {
        s.limits.reply_drain_timeout_ms = 500;
        s.limits.costly_requests_per_second_per_peer = 0;
    });
    let topics: Vec<String> = (0..20_000).map(|t| format!("a-rather-long-topic-name-{t:06}")).collect();
    server.register(&Broker::new("C", "big", 0, "10.8.0.2:10911").topics(&topics));
    server.wait_for_open_connections(1);

    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind(&"127.0.0.2:0".parse::<std::net::SocketAddr>().unwrap().into()).unwrap();
    socket.connect(&server.addr.into()).unwrap();
    let mut reader: std::net::TcpStream = socket.into();
    let mut frames = bytes::BytesMut::new();
    for _ in 0..32 {
        namesrv::protocol::codec::encode_frame(&request(TOPICS_BY_CLUSTER, &[("cluster", "C")]), &mut frames).unwrap();
    }
    std::io::Write::write_all(&mut reader, &frames).unwrap();
    // It never reads: 32 listings of about 700 KB cannot all be written.
    server.wait_for_open_connections(2);
    server.wait_for_open_connections(1);
    let mut honest = server.client();
    assert_eq!(honest.call(request(TOPICS_BY_CLUSTER, &[("cluster", "C")])).code, 0);
}

/// Topics of `n` names, long enough that a registration is a large frame (over 64 KiB).
fn many_topics(n: usize) -> Vec<String> {
    (0..n).map(|t| format!("honest-topic-with-a-long-name-{t:05}")).collect()
}

#[test]
fn length_prefixes_announcing_large_frames_hold_nothing_and_registrations_get_through() {
    let server = TestServer::with_http(|s| {
        s.limits.frame_budget_bytes = 32 << 20;
        s.limits.frame_progress_timeout_ms = 600_000;
    });
    // Each announces a frame of 4 MiB and sends only its first 8 bytes: 8 of them announce
    // the whole budget.
    let mut prefixes: Vec<Client> = (0..16).map(|_| Client::connect_from(ATTACKER, server.addr)).collect();
    for prefix in &mut prefixes {
        prefix.send_raw(&[0, 0x40, 0, 0, 0, 0, 0, 20]);
    }
    server.wait_for_open_connections(16);
    let topics = many_topics(2_000);
    let mut broker = Client::connect_from("127.0.0.1", server.addr);
    for n in 0..10 {
        let registered = broker.register(&Broker::new("C", &format!("b{n}"), 0, "10.8.0.3:10911").topics(&topics));
        assert_eq!(registered.code, 0, "registration {n}: {:?}", registered.remark);
    }
    for prefix in &mut prefixes {
        assert!(!prefix.closed_by_server(Duration::from_millis(1)), "within their deadlines, held but not charged");
    }
}

#[test]
fn one_address_holds_at_most_its_share_of_the_connection_slots() {
    let server = TestServer::with(|s| {
        s.limits.max_connections = 20;
        s.limits.peer_share_percent = 25;
    });
    let mut idle: Vec<Client> = (0..20).map(|_| Client::connect_from(ATTACKER, server.addr)).collect();
    std::thread::sleep(Duration::from_millis(300));
    let kept = idle.iter_mut().filter_map(|c| (!c.closed_by_server(Duration::from_millis(50))).then_some(())).count();
    assert_eq!(kept, 5, "25% of 20 slots");
    let mut honest = Client::connect_from("127.0.0.1", server.addr);
    assert_eq!(honest.call(request(106, &[])).code, 0, "another address still gets a slot");
}

#[test]
fn the_last_connection_slots_are_kept_for_brokers() {
    let server = TestServer::with_http(|s| {
        s.limits.max_connections = 10;
        s.limits.peer_share_percent = 100;
        s.limits.broker_reserve_percent = 20;
    });
    let mut clients: Vec<Client> = (0..8).map(|_| Client::connect_from(ATTACKER, server.addr)).collect();
    for client in &mut clients {
        assert_eq!(client.call(request(106, &[])).code, 0);
    }
    let mut late_client = Client::connect_from(ATTACKER, server.addr);
    late_client.send(&request(106, &[]));
    assert!(late_client.closed_by_server(Duration::from_secs(5)), "a reserved slot asked for no registration");
    server.wait_for_open_connections(8);
    let mut broker = Client::connect_from(ATTACKER, server.addr);
    let registered = broker.register(&Broker::new("C", "b", 0, "10.8.0.4:10911").topics(&["T1", "T2"]));
    assert_eq!(registered.code, 0, "a broker takes a reserved slot: {:?}", registered.remark);
    assert_eq!(broker.call(request(106, &[])).code, 0, "and keeps it");
}
