//! Operating a controller group: a graceful stop of a peer, the leader above all, closes the
//! brokers' connections as it goes, which are no broker's loss: a rolling restart of every peer
//! moves no master and changes no epoch.

use std::time::Duration;

use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::eventually;

use super::{master_and_slave, WAIT};

#[test]
fn a_rolling_restart_of_every_peer_leader_first_moves_no_master() {
    let mut cluster = ControllerCluster::start(3, |_| {});
    let leader = cluster.wait_leader(WAIT);
    let (first, second) = master_and_slave(&cluster);
    let (master, epoch) = (first.id().unwrap(), first.epoch());
    let followers: Vec<usize> = (0..3).filter(|i| *i != leader).collect();
    for peer in [leader, followers[0], followers[1]] {
        cluster.stop(peer);
        let next = cluster.wait_leader(WAIT);
        assert_ne!(next, peer);
        cluster.restart(peer);
        assert!(eventually(WAIT, || cluster.metadata(peer).is_some_and(|m| m.controller_leader_id.is_some())));
        // Past the new leader's warm-up and a broker heartbeat timeout.
        std::thread::sleep(Duration::from_millis(1_500));
        assert!(first.is_master() && !second.is_master(), "peer {peer} stopped: {:?}", first.state().roles);
    }
    assert_eq!((first.id(), first.epoch()), (Some(master), epoch), "{:?}", first.state().roles);
    let masters: Vec<i64> = first.state().roles.iter().map(|r| r.master).collect();
    assert!(masters.iter().all(|m| *m == master), "the master never moved: {masters:?}");
}
