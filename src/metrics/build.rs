//! What this binary is: its version and the commit it was built from (stamped by `build.rs`),
//! for `namesrv --version`, `namesrv_build_info` and the status API.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

/// The crate version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `git rev-parse --short HEAD` at build time, or `unknown` (a source tarball, no git).
pub const COMMIT: &str = env!("BUILD_GIT_COMMIT");

/// What `--version` prints after the program name.
pub const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("BUILD_GIT_COMMIT"), ")");

/// `version` and `commit` of `namesrv_build_info`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BuildLabels {
    version: &'static str,
    commit: &'static str,
}

/// `namesrv_build_info{version, commit}`: one series, always 1, to join other series with.
pub fn build_info() -> Family<BuildLabels, Gauge> {
    let family = Family::<BuildLabels, Gauge>::default();
    family.get_or_create(&BuildLabels { version: VERSION, commit: COMMIT }).set(1);
    family
}
