//! The controller's figures on `/metrics` of each peer, scraped over HTTP: the Raft role, term
//! and leader changes follow a change of leader, the leader shows each follower's lag, and no
//! term or index is published; elections are counted by cause
//! and result, failovers timed, and the serving leader exports each broker group's alive
//! brokers and in-sync set, as test brokers fail over.

use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::eventually;
use namesrv_testkit::http::{get, sample};

use super::{master_and_slave, wait_role, WAIT};

/// Series `name` scraped from peer `i` (absent: `None`).
fn scrape(cluster: &ControllerCluster, i: usize, name: &str) -> Option<f64> {
    sample(&get(cluster.http(i), "/metrics").body, name)
}

/// Series `name` scraped from peer `i`, which must export it.
fn figure(cluster: &ControllerCluster, i: usize, name: &str) -> f64 {
    scrape(cluster, i, name).unwrap_or_else(|| panic!("{name} missing on peer {i}"))
}

#[test]
fn raft_role_term_changes_and_lags_follow_a_new_leader_and_no_term_or_index_is_published() {
    let mut cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let follower = (0..3).find(|i| *i != leader).unwrap();
    assert!(eventually(WAIT, || figure(&cluster, leader, "namesrv_controller_raft_leader") == 1.0));
    assert_eq!(figure(&cluster, follower, "namesrv_controller_raft_leader"), 0.0);
    assert!(eventually(WAIT, || figure(&cluster, leader, "namesrv_controller_serving") == 1.0));
    assert_eq!(figure(&cluster, follower, "namesrv_controller_serving"), 0.0);
    assert!(eventually(WAIT, || figure(&cluster, follower, "namesrv_controller_raft_leader_known") == 1.0));
    let terms = figure(&cluster, follower, "namesrv_controller_raft_term_changes_total");
    let changes = figure(&cluster, follower, "namesrv_controller_raft_leader_changes_total");
    assert!(terms >= 1.0 && changes >= 1.0, "term changes {terms}, leader changes {changes}");
    assert_eq!(figure(&cluster, leader, "namesrv_controller_enabled"), 1.0);
    let text = get(cluster.http(leader), "/metrics").body;
    assert!(!text.contains("raft_term ") && !text.contains("_index"), "no term or index published:\n{text}");
    assert!(
        eventually(WAIT, || (0..3).filter(|i| *i != leader).all(|i| {
            let name = format!("namesrv_controller_raft_replication_lag{{peer=\"n{i}\"}}");
            sample(&get(cluster.http(leader), "/metrics").body, &name) == Some(0.0)
        })),
        "the leader shows both followers caught up"
    );
    // Each follower's own figures before the change: peers count the changes they saw.
    let before: Vec<(f64, f64)> = (0..3)
        .map(|i| {
            if i == leader {
                return (0.0, 0.0);
            }
            assert!(eventually(WAIT, || figure(&cluster, i, "namesrv_controller_raft_leader_known") == 1.0));
            let terms = figure(&cluster, i, "namesrv_controller_raft_term_changes_total");
            (terms, figure(&cluster, i, "namesrv_controller_raft_leader_changes_total"))
        })
        .collect();

    cluster.stop(leader);
    let new_leader = cluster.wait_leader(WAIT);
    assert!(eventually(WAIT, || figure(&cluster, new_leader, "namesrv_controller_raft_leader") == 1.0));
    let survivor = (0..3).find(|i| *i != leader && *i != new_leader).unwrap();
    let (term_before, changes_before) = before[survivor];
    assert!(
        eventually(WAIT, || figure(&cluster, survivor, "namesrv_controller_raft_leader_changes_total")
            > changes_before),
        "the surviving follower counted the new leader"
    );
    assert!(figure(&cluster, survivor, "namesrv_controller_raft_term_changes_total") > term_before, "a new term");
    assert_eq!(figure(&cluster, survivor, "namesrv_controller_raft_leader"), 0.0);
}

/// Waits until peer `i` exports `name` at `value`.
fn wait_figure(cluster: &ControllerCluster, i: usize, name: &str, value: f64) {
    let reached = eventually(WAIT, || scrape(cluster, i, name) == Some(value));
    let text = get(cluster.http(i), "/metrics").body;
    let controller: Vec<&str> = text.lines().filter(|l| l.starts_with("namesrv_controller_")).collect();
    assert!(reached, "{name} never {value} on peer {i}:\n{}", controller.join("\n"));
}

/// `namesrv_controller_elections_total` of `cause` and `result`.
fn elections(cause: &str, result: &str) -> String {
    format!(r#"namesrv_controller_elections_total{{cause="{cause}",result="{result}"}}"#)
}

/// A master and an in-sync slave of group `cb` on a one-peer cluster, its group figures checked.
fn group_of_two() -> (
    ControllerCluster,
    namesrv_testkit::controller_broker::ControllerBroker,
    namesrv_testkit::controller_broker::ControllerBroker,
) {
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    assert_eq!(figure(&cluster, 0, &elections("connection_closed", "elected")), 0.0, "exported at 0");
    let (first, second) = master_and_slave(&cluster);
    assert_eq!(figure(&cluster, 0, &elections("broker", "elected")), 1.0, "the first broker's own election");
    wait_figure(&cluster, 0, r#"namesrv_controller_group_brokers_alive{group="cb"}"#, 2.0);
    wait_figure(&cluster, 0, r#"namesrv_controller_group_sync_state_set_size{group="cb"}"#, 2.0);
    wait_figure(&cluster, 0, "namesrv_controller_groups", 1.0);
    wait_figure(&cluster, 0, "namesrv_controller_groups_without_master", 0.0);
    (cluster, first, second)
}

#[test]
fn a_killed_master_counts_an_election_by_connection_close_and_times_its_failover() {
    let (cluster, mut first, second) = group_of_two();
    first.kill();
    wait_role(&second, true);
    wait_figure(&cluster, 0, &elections("connection_closed", "elected"), 1.0);
    wait_figure(&cluster, 0, r#"namesrv_controller_failover_seconds_count{cause="connection_closed"}"#, 1.0);
    let took = figure(&cluster, 0, r#"namesrv_controller_failover_seconds_sum{cause="connection_closed"}"#);
    assert!(took > 0.0 && took < 2.0, "failover took {took} s");
    wait_figure(&cluster, 0, r#"namesrv_controller_group_brokers_alive{group="cb"}"#, 1.0);
    wait_figure(&cluster, 0, r#"namesrv_controller_group_sync_state_set_size{group="cb"}"#, 1.0);
    wait_figure(&cluster, 0, "namesrv_controller_groups_without_master", 0.0);
}

#[test]
fn a_hung_master_counts_an_election_by_heartbeat_timeout_and_a_group_left_without_master_shows() {
    let (cluster, first, mut second) = group_of_two();
    first.hang();
    wait_role(&second, true);
    wait_figure(&cluster, 0, &elections("heartbeat_timeout", "elected"), 1.0);
    wait_figure(&cluster, 0, r#"namesrv_controller_failover_seconds_count{cause="heartbeat_timeout"}"#, 1.0);
    assert_eq!(figure(&cluster, 0, &elections("connection_closed", "elected")), 0.0);
    // The new master dies too, and the hung one is out of the in-sync set: nobody to elect.
    second.kill();
    wait_figure(&cluster, 0, "namesrv_controller_groups_without_master", 1.0);
    wait_figure(&cluster, 0, r#"namesrv_controller_group_brokers_alive{group="cb"}"#, 0.0);
}
