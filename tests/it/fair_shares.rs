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
