//! RocketMQ 5 controller mode: the controller's answers against the frames a Java 5.3.3
//! controller sent (`wire`), the test broker's requests against a Java broker's (`broker`),
//! and clusters of 1 and 3 peers with brokers failing over (`cluster`, `peers`), every
//! history checked by `history`.

mod api;
mod attacks;
mod broker;
mod cluster;
mod config;
mod figures;
mod history;
mod metrics;
mod peers;
mod raft_frames;
mod restarts;
mod security;
mod wire;

use std::time::Duration;

use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::controller_broker::{BrokerConfig, ControllerBroker};
use namesrv_testkit::eventually;

/// How long a test waits for anything the controller does.
const WAIT: Duration = Duration::from_secs(10);

/// Starts a broker of group `cb` against `cluster`.
fn broker(cluster: &ControllerCluster, edit: impl FnOnce(&mut BrokerConfig)) -> ControllerBroker {
    let mut config = BrokerConfig::new("cb", &cluster.controller_addr());
    edit(&mut config);
    ControllerBroker::start(config)
}

/// Waits until `b` believes it is the master (or a slave, with `master` false).
fn wait_role(b: &ControllerBroker, master: bool) {
    assert!(
        eventually(WAIT, || {
            let known = b.state().master.is_some();
            known && b.id().is_some() && b.is_master() == master
        }),
        "broker {} never became {}: {:?}",
        b.addr,
        if master { "master" } else { "slave" },
        b.state().roles
    );
}

/// A master and a slave in one in-sync set: the first broker elected, the second joined.
fn master_and_slave(cluster: &ControllerCluster) -> (ControllerBroker, ControllerBroker) {
    master_and_slave_with(cluster, &|_| {})
}

/// [`master_and_slave`] with both brokers configured by `edit`.
fn master_and_slave_with(
    cluster: &ControllerCluster,
    edit: &dyn Fn(&mut BrokerConfig),
) -> (ControllerBroker, ControllerBroker) {
    let first = broker(cluster, edit);
    wait_role(&first, true);
    let second = broker(cluster, edit);
    wait_role(&second, false);
    first.set_in_sync(&[second.id().unwrap()]);
    assert!(
        eventually(WAIT, || second.state().sync_set.len() == 2 || first.state().sync_set.len() == 2),
        "the slave never joined the in-sync set"
    );
    (first, second)
}
