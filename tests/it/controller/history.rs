//! The invariant checker over a test's history: what every broker believed, in order. Epochs
//! only grow for each broker; all brokers agree on the master of every epoch; no two brokers
//! believe themselves master with one epoch.

use std::collections::BTreeMap;

use namesrv_testkit::controller_broker::{ControllerBroker, RoleSeen};

/// Checks the role logs of a group's brokers (one log per broker, in the order it believed them).
pub fn check_roles(logs: &[Vec<RoleSeen>]) {
    let mut masters: BTreeMap<i32, i64> = BTreeMap::new();
    for log in logs {
        for pair in log.windows(2) {
            assert!(pair[0].epoch < pair[1].epoch, "a broker's epoch went back or repeated: {log:?}");
        }
        for seen in log {
            let master = *masters.entry(seen.epoch).or_insert(seen.master);
            assert_eq!(master, seen.master, "two masters with epoch {}: {logs:?}", seen.epoch);
        }
    }
    for epoch in masters.keys() {
        let claiming = logs.iter().filter(|log| log.iter().any(|s| s.epoch == *epoch && s.is_master)).count();
        assert!(claiming <= 1, "{claiming} brokers believed themselves master at epoch {epoch}: {logs:?}");
    }
}

/// [`check_roles`] over running brokers and the logs of killed ones.
pub fn check(brokers: &[&ControllerBroker], killed: &[Vec<RoleSeen>]) {
    let mut logs: Vec<Vec<RoleSeen>> = brokers.iter().map(|b| b.state().roles.clone()).collect();
    logs.extend(killed.iter().cloned());
    check_roles(&logs);
}

#[test]
fn the_checker_catches_two_masters_in_one_epoch() {
    let a = vec![RoleSeen { epoch: 1, master: 1, is_master: true }];
    let b = vec![RoleSeen { epoch: 1, master: 2, is_master: true }];
    assert!(std::panic::catch_unwind(|| check_roles(&[a.clone(), b])).is_err());
    let back =
        vec![RoleSeen { epoch: 2, master: 1, is_master: true }, RoleSeen { epoch: 1, master: 1, is_master: true }];
    assert!(std::panic::catch_unwind(|| check_roles(&[back])).is_err());
    check_roles(&[a, vec![RoleSeen { epoch: 1, master: 1, is_master: false }]]);
}
