//! Route snapshot writes that fail, on the real binary: counted on /metrics by reason (for the
//! NamesrvRouteSnapshotWriteFailing alert), the last good write's time exported, and the
//! warning written once a minute at most however often the writes are tried.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::checks::assert_success;
use crate::common::http;
use crate::common::process::{namesrv_command, Proc};
use crate::common::*;

const WAIT: Duration = Duration::from_secs(15);

fn command(dir: &Path) -> Command {
    let mut cmd = namesrv_command(dir);
    cmd.args(["--listen", "127.0.0.1:0", "--set", "scan_interval_ms=200"]);
    cmd
}

fn failures(text: &str) -> f64 {
    ["no_space", "read_only", "permission", "other"]
        .iter()
        .map(|r| http::sample(text, &format!("namesrv_route_snapshot_write_failures_total{{reason=\"{r}\"}}")).unwrap())
        .sum()
}

#[test]
fn snapshot_write_failures_are_counted_and_warned_about_once_a_minute() {
    let dir = temp_dir();
    // The snapshot's name taken by a directory that is not empty: the file cannot replace it,
    // whoever the server runs as (root too).
    std::fs::create_dir_all(dir.join("routeSnapshot.json").join("taken")).unwrap();
    let mut proc = Proc::spawn(command(&dir));
    let addr = proc.addr();
    let http_addr = proc.http_addr();
    let start = http::get(http_addr, "/metrics").body;
    assert_eq!(failures(&start), 0.0, "every reason exported at 0 from the start:\n{start}");
    assert_eq!(http::sample(&start, "namesrv_route_snapshot_last_write_timestamp_seconds"), Some(0.0));

    // Each change is a snapshot due (at most one per 5 s): two changes, two failed writes.
    let mut conn = Client::connect(addr);
    assert_success(&conn.register(&Broker::new("C", "b1", 0, "10.0.7.1:10911").topics(&["T1", "T2"])));
    let metrics = || http::get(http_addr, "/metrics").body;
    assert!(eventually(WAIT, || failures(&metrics()) >= 1.0), "{}\n{}", metrics(), proc.stderr());
    assert_success(&conn.register(&Broker::new("C", "b2", 0, "10.0.7.2:10911").topics(&["T3", "T4"])));
    assert!(eventually(WAIT, || failures(&metrics()) >= 2.0), "{}\n{}", metrics(), proc.stderr());
    let text = metrics();
    assert_eq!(
        http::sample(&text, "namesrv_route_snapshot_write_failures_total{reason=\"other\"}"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(http::sample(&text, "namesrv_route_snapshot_last_write_timestamp_seconds"), Some(0.0));
    let warnings = proc.stderr().matches("route snapshot not written").count();
    assert_eq!(warnings, 1, "one warning a minute:\n{}", proc.stderr());

    // The state directory repaired: the next snapshot is written and its time exported.
    std::fs::remove_dir_all(dir.join("routeSnapshot.json")).unwrap();
    assert_success(&conn.register(&Broker::new("C", "b3", 0, "10.0.7.3:10911").topics(&["T5", "T6"])));
    let written = || http::sample(&metrics(), "namesrv_route_snapshot_last_write_timestamp_seconds").unwrap_or(0.0);
    assert!(eventually(WAIT, || written() > 0.0), "{}\n{}", metrics(), proc.stderr());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    assert!((now - written()).abs() < 60.0, "written at {}, now {now}", written());
    assert!(dir.join("routeSnapshot.json").is_file());
}
