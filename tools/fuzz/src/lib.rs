//! Fuzz targets for namesrv's peer-facing decoders, shared by two drivers: the coverage-guided
//! AFL++ entry point (`namesrv-afl`, built with `cargo afl`) and a plain replay-and-mutate smoke
//! (`fuzz-smoke`) that CI runs on stable without any fuzzing runtime.
//!
//! # Layout
//! - [`targets`]: one function per decoder, the registry [`targets::TARGETS`] and the limits.
//! - [`mutate`]: the seeded mutator of the smoke driver.
//! - [`seeds`]: the seed inputs built from the captured wire samples and the unit-test vectors.
#![forbid(unsafe_code)]

pub mod mutate;
pub mod seeds;
pub mod targets;

pub use targets::{find, Target, TARGETS};
