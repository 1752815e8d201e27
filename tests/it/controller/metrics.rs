//! The controller's figures on `/metrics` of each peer, scraped over HTTP: the Raft role, term,
//! applied index and leader changes follow a change of leader.

use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::eventually;
use namesrv_testkit::http::{get, sample};

use super::WAIT;

/// Series `name` scraped from peer `i` (absent: `None`).
fn scrape(cluster: &ControllerCluster, i: usize, name: &str) -> Option<f64> {
    sample(&get(cluster.http(i), "/metrics").body, name)
}

/// Series `name` scraped from peer `i`, which must export it.
fn figure(cluster: &ControllerCluster, i: usize, name: &str) -> f64 {
    scrape(cluster, i, name).unwrap_or_else(|| panic!("{name} missing on peer {i}"))
}

#[test]
fn raft_role_term_and_leader_changes_follow_a_new_leader() {
    let mut cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let follower = (0..3).find(|i| *i != leader).unwrap();
    assert!(eventually(WAIT, || figure(&cluster, leader, "namesrv_controller_raft_leader") == 1.0));
    assert_eq!(figure(&cluster, follower, "namesrv_controller_raft_leader"), 0.0);
    assert!(eventually(WAIT, || figure(&cluster, follower, "namesrv_controller_raft_leader_known") == 1.0));
    let term = figure(&cluster, follower, "namesrv_controller_raft_term");
    let changes = figure(&cluster, follower, "namesrv_controller_raft_leader_changes_total");
    assert!(term >= 1.0 && changes >= 1.0, "term {term}, leader changes {changes}");
    assert!(figure(&cluster, leader, "namesrv_controller_raft_applied_index") >= 1.0, "the leader's blank entry");

    cluster.stop(leader);
    let new_leader = cluster.wait_leader(WAIT);
    assert!(eventually(WAIT, || figure(&cluster, new_leader, "namesrv_controller_raft_leader") == 1.0));
    let survivor = (0..3).find(|i| *i != leader && *i != new_leader).unwrap();
    assert!(
        eventually(WAIT, || figure(&cluster, survivor, "namesrv_controller_raft_leader_changes_total") > changes),
        "the surviving follower counted the new leader"
    );
    assert!(figure(&cluster, survivor, "namesrv_controller_raft_term") > term, "a new term");
    assert_eq!(figure(&cluster, survivor, "namesrv_controller_raft_leader"), 0.0);
}
