//! The shared harness: the `namesrv-testkit` crate, plus what needs this test binary's build
//! (the path of the `namesrv` executable: `process`).

pub use namesrv_testkit::*;

pub mod process;
