//! openraft's own storage suite run on the controller's log store and state machine, and the
//! log read back after a restart.

use openraft::testing::{StoreBuilder, Suite};
use openraft::StorageError;

use super::log::tests::dir;
use super::log::LogStore;
use super::machine::Machine;
use super::RaftTypes;

/// Fresh stores in a fresh directory for each case of the suite.
struct Fresh;

impl StoreBuilder<RaftTypes, LogStore, Machine, ()> for Fresh {
    async fn build(&self) -> Result<((), LogStore, Machine), StorageError<u64>> {
        let dir = dir("suite");
        let log = LogStore::open(&dir).expect("open the log");
        let machine = Machine::open(&dir, log.io()).expect("open the machine");
        Ok(((), log, machine))
    }
}

#[test]
fn openraft_storage_suite_passes() {
    Suite::test_all(Fresh).unwrap();
}
