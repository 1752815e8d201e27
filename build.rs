//! Stamps the build with the commit it was built from (`BUILD_GIT_COMMIT`: `git rev-parse
//! --short HEAD`, or `unknown` from a source tarball or without git), for `namesrv --version`,
//! `namesrv_build_info` and the status API.
//!
//! Cargo re-runs this only when `.git/HEAD` or the branch it points to moves (not on every
//! build, which would rebuild the crate each time), or when this file changes (a changed build
//! script is rebuilt and re-run whatever it watches).
//!
//! nsadmin (tools/nsadmin) uses this same file as its build script (`build = "../../build.rs"`),
//! so every path here comes from git or `CARGO_MANIFEST_DIR`, never from the working directory.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=BUILD_GIT_COMMIT={commit}");
    for watched in watched_files() {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
}

/// `git ARGS` in the package directory: its trimmed output, or `None` when git is missing, this
/// is no repository, or the output is empty.
fn git(args: &[&str]) -> Option<String> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let out = Command::new("git").args(args).current_dir(dir).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// The files whose change means another commit: `HEAD`, the branch file it names, and
/// `packed-refs` (where a branch lives once packed). Only files that exist: cargo re-runs a
/// build script on every build while a path it watches is missing.
fn watched_files() -> Vec<PathBuf> {
    let path = |name: &str| git(&["rev-parse", "--git-path", name]).map(PathBuf::from);
    let mut files = vec![path("HEAD"), path("packed-refs")];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        files.push(path(&branch));
    }
    let dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_default();
    files
        .into_iter()
        .flatten()
        .map(|p| if p.is_absolute() { p } else { dir.join(p) })
        .filter(|p| Path::exists(p))
        .collect()
}
