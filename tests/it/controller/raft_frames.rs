//! Raft frames forged from a peer's own address (any process on a controller host): three
//! peers on 127.0.0.1 pin each other's keys on first use, so a frame in a peer's name that the
//! peer did not sign (unsigned, or signed with another key) is refused whatever its term, and
//! neither moves a follower's term nor takes the group from its leader.

use std::time::Duration;

use namesrv::controller::raft::auth::{wall_ms, PeerAuth};
use namesrv::controller::raft::node_id;
use namesrv::protocol::{ExtFields, RemotingCommand};
use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::http::{get, sample};
use namesrv_testkit::{eventually, Client};

use super::WAIT;

/// The frames refused, as the controller port answers them (CONTROLLER_INVALID_REQUEST).
const INVALID_REQUEST: i32 = 2005;

/// The testkit's Raft group.
const GROUP: &str = "g1";

/// An AppendEntries body from `leader` as leader of `term`, committing nothing.
fn append_entries(leader: &str, term: u64) -> Vec<u8> {
    let vote = serde_json::json!({ "leader_id": { "term": term, "node_id": node_id(leader) }, "committed": true });
    let rpc = serde_json::json!({ "vote": vote, "prev_log_id": null, "entries": [], "leader_commit": null });
    serde_json::to_vec(&rpc).unwrap()
}

/// A Vote body from `candidate` asking for `term`, its log far ahead of anyone's.
fn vote(candidate: &str, term: u64) -> Vec<u8> {
    let vote = serde_json::json!({ "leader_id": { "term": term, "node_id": node_id(candidate) }, "committed": false });
    let last = serde_json::json!({ "leader_id": { "term": term, "node_id": node_id(candidate) }, "index": 1u64 << 40 });
    serde_json::to_vec(&serde_json::json!({ "vote": vote, "last_log_id": last })).unwrap()
}

/// A frame of `code` from peer `from` to peer `to`, signed by `signer` when there is one.
fn frame(code: i32, (from, to): (&str, &str), body: Vec<u8>, signer: Option<&PeerAuth>) -> RemotingCommand {
    let mut ext = ExtFields::new().with("group", GROUP).with("from", from).with("to", to);
    if let Some(signer) = signer {
        let name = namesrv::protocol::controller::ControllerRequestCode::from_i32(code).unwrap().name();
        signer.sign_frame(&mut ext, [name, GROUP, from, to], &body, wall_ms());
    }
    RemotingCommand::request(code, Some(ext)).with_body(body)
}

/// Terms peer `i` moved into.
fn term_changes(cluster: &ControllerCluster, i: usize) -> f64 {
    sample(&get(cluster.http(i), "/metrics").body, "namesrv_controller_raft_term_changes_total").unwrap_or(-1.0)
}

#[test]
fn frames_in_a_peers_name_it_did_not_sign_are_refused_whatever_their_term() {
    let cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let follower = (0..3).find(|i| *i != leader).unwrap();
    let other = (0..3).find(|i| *i != leader && *i != follower).unwrap();
    let (leader_name, follower_name, other_name) = (format!("n{leader}"), format!("n{follower}"), format!("n{other}"));
    // Every peer has heard every other (so each key is pinned) once the leader's lags are known.
    assert!(eventually(WAIT, || [follower, other].iter().all(|i| {
        let name = format!("namesrv_controller_raft_replication_lag{{peer=\"n{i}\"}}");
        sample(&get(cluster.http(leader), "/metrics").body, &name) == Some(0.0)
    })));
    let terms_before = term_changes(&cluster, follower);
    let stranger_dir = std::env::temp_dir().join(format!("namesrv-stranger-{}", std::process::id()));
    let stranger = PeerAuth::open(&stranger_dir, None).unwrap();
    let route = (leader_name.as_str(), follower_name.as_str());
    let mut attacker = Client::connect(cluster.addr(follower));
    let candidate = (other_name.as_str(), follower_name.as_str());
    for (what, forged, why) in [
        (
            "an unsigned append as leader of a far term",
            frame(1901, route, append_entries(&leader_name, 1 << 20), None),
            "peerTime",
        ),
        (
            "an append signed by another key",
            frame(1901, route, append_entries(&leader_name, 1 << 20), Some(&stranger)),
            "another key",
        ),
        ("an unsigned vote request", frame(1902, candidate, vote(&other_name, 1 << 21), None), "peerTime"),
        (
            "a vote signed by another key",
            frame(1902, candidate, vote(&other_name, 1 << 21), Some(&stranger)),
            "another key",
        ),
    ] {
        let answer = attacker.call(forged);
        assert_eq!(answer.code, INVALID_REQUEST, "{what}: {answer:?}");
        assert!(answer.remark.as_deref().unwrap_or_default().contains(why), "{what}: {answer:?}");
    }
    // The stranger's own name is no peer's: refused before any key is looked at.
    let answer = attacker.call(frame(1901, ("n9", &follower_name), append_entries("n9", 1 << 20), Some(&stranger)));
    assert_eq!(answer.code, INVALID_REQUEST, "{answer:?}");
    assert!(answer.remark.as_deref().unwrap_or_default().contains("not a peer"), "{answer:?}");

    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(cluster.leader(), Some(leader), "the group kept its leader");
    assert_eq!(term_changes(&cluster, follower), terms_before, "the follower's term never moved");
    let _ = std::fs::remove_dir_all(stranger_dir);
}

#[test]
fn with_a_cluster_secret_the_group_forms_and_a_frame_without_its_hmac_is_refused() {
    let secret = std::env::temp_dir().join(format!("namesrv-peer-secret-{}", std::process::id()));
    std::fs::write(&secret, "  a secret the three peers share\n").unwrap();
    let path = secret.display().to_string();
    let cluster = ControllerCluster::start(3, |s| s.controller.controller_peer_secret_file = path.clone());
    let leader = cluster.wait_leader(WAIT);
    let follower = (0..3).find(|i| *i != leader).unwrap();
    let (leader_name, follower_name) = (format!("n{leader}"), format!("n{follower}"));
    let dir = std::env::temp_dir().join(format!("namesrv-stranger-mac-{}", std::process::id()));
    let stranger = PeerAuth::open(&dir, Some(b"a guess at the secret")).unwrap();
    let forged = frame(1901, (&leader_name, &follower_name), append_entries(&leader_name, 1 << 20), Some(&stranger));
    let answer = Client::connect(cluster.addr(follower)).call(forged);
    assert_eq!(answer.code, INVALID_REQUEST, "{answer:?}");
    assert!(answer.remark.as_deref().unwrap_or_default().contains("HMAC"), "{answer:?}");
    assert_eq!(cluster.leader(), Some(leader));
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_file(secret);
}
