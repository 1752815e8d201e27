//! The standard `process_*` figures, read from `/proc/self` when scraped (Linux; elsewhere
//! they are left out). Each figure is read on its own, so one unreadable file loses only its own
//! figure; and nothing is read outside `/proc/self`, so a `/proc` mounted with `subset=pid` (the
//! systemd unit's `ProcSubset=pid`, which hides `/proc/stat`) keeps them all.

use std::path::{Path, PathBuf};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::clock;

/// Clock ticks per second of `/proc/<pid>/stat` times (the kernel's USER_HZ, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// Page size for `/proc/self/statm` (4 KiB on the platforms this runs on).
const PAGE_BYTES: f64 = 4096.0;

/// Reads the process's CPU time, memory and open files on each scrape; its start time once.
#[derive(Debug)]
pub struct ProcessCollector {
    /// `/proc/self`, or a directory laid out like it.
    dir: PathBuf,
    /// Seconds since the Unix epoch, fixed when the collector was made: a later step of the wall
    /// clock does not move it, so a changed start time always means a restart.
    start_time_seconds: f64,
}

impl Default for ProcessCollector {
    fn default() -> Self {
        Self::at("/proc/self")
    }
}

impl ProcessCollector {
    /// A collector reading the process directory `dir` (`/proc/self` in the server).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        let start_time_seconds = start_time_seconds(&dir);
        Self { dir, start_time_seconds }
    }

    /// The `/proc/self/stat` fields after the parenthesised command name (which may hold spaces).
    fn stat_fields(&self) -> Option<Vec<f64>> {
        stat_fields(&self.dir)
    }

    fn cpu_seconds(&self) -> Option<f64> {
        let fields = self.stat_fields()?;
        Some((field(&fields, 14)? + field(&fields, 15)?) / TICKS_PER_SECOND)
    }

    /// (virtual, resident) bytes.
    fn memory_bytes(&self) -> Option<(f64, f64)> {
        let statm = std::fs::read_to_string(self.dir.join("statm")).ok()?;
        let mut pages = statm.split_whitespace().map(|v| v.parse::<f64>().ok());
        Some((pages.next()?? * PAGE_BYTES, pages.next()?? * PAGE_BYTES))
    }

    fn open_fds(&self) -> Option<f64> {
        Some(std::fs::read_dir(self.dir.join("fd")).ok()?.count() as f64)
    }

    fn max_fds(&self) -> Option<f64> {
        std::fs::read_to_string(self.dir.join("limits"))
            .ok()?
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .and_then(|l| l.split_whitespace().nth(3))
            .and_then(|v| v.parse().ok())
    }
}

fn stat_fields(dir: &Path) -> Option<Vec<f64>> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    // Unparsable fields (the state letter) become NaN and are never used.
    Some(stat.rsplit_once(')')?.1.split_whitespace().map(|v| v.parse::<f64>().unwrap_or(f64::NAN)).collect())
}

/// Field `n` of `/proc/<pid>/stat`, numbered as proc(5) numbers them (from 1, the first three
/// being the pid, the command and the state).
fn field(fields: &[f64], n: usize) -> Option<f64> {
    fields.get(n.checked_sub(3)?).copied().filter(|v| v.is_finite())
}

/// When the process started, on the wall clock: its start on the boot clock (`starttime` in
/// `/proc/self/stat`, ticks since boot) carried over to the wall clock as the two read now. No
/// `/proc/stat` (its `btime`) is needed. Without `/proc/self/stat`, now: the collector is made
/// at start.
fn start_time_seconds(dir: &Path) -> f64 {
    let (boot_ms, wall_ms) = (clock::boot_ms(), clock::wall_ms());
    let wall = wall_ms as f64 / 1000.0;
    let since_start = stat_fields(dir)
        .and_then(|fields| field(&fields, 22))
        .map(|ticks| (boot_ms as f64 / 1000.0 - ticks / TICKS_PER_SECOND).max(0.0));
    wall - since_start.unwrap_or(0.0)
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        if let Some(seconds) = self.cpu_seconds() {
            let cpu = ConstCounter::new(seconds);
            cpu.encode(encoder.encode_descriptor(
                "process_cpu_seconds",
                "User and system CPU time",
                None,
                cpu.metric_type(),
            )?)?;
        }
        let memory = self.memory_bytes();
        for (name, help, value) in [
            ("process_resident_memory_bytes", "Resident memory", memory.map(|m| m.1)),
            ("process_virtual_memory_bytes", "Virtual memory", memory.map(|m| m.0)),
            ("process_open_fds", "Open file descriptors", self.open_fds()),
            ("process_max_fds", "Most file descriptors the process may open", self.max_fds()),
            ("process_start_time_seconds", "Start time since the Unix epoch", Some(self.start_time_seconds)),
        ] {
            let Some(value) = value else {
                continue;
            };
            let gauge = ConstGauge::new(value);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use prometheus_client::registry::Registry;

    use super::*;

    /// The exposition of a collector reading `dir`.
    fn scrape(dir: &Path) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(ProcessCollector::at(dir)));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        text
    }

    fn value(text: &str, name: &str) -> Option<f64> {
        text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }

    /// A directory laid out like `/proc/self` as a `subset=pid` mount shows it: this process's
    /// `stat`, `statm`, `limits` and a `fd` directory of three entries, and no `/proc/stat` beside
    /// it (the collector is never to look outside its directory).
    fn proc_self_copy(root: &Path) -> PathBuf {
        let dir = root.join("self");
        std::fs::create_dir_all(dir.join("fd")).unwrap();
        for name in ["stat", "statm", "limits"] {
            std::fs::write(dir.join(name), std::fs::read("/proc/self/".to_owned() + name).unwrap()).unwrap();
        }
        for fd in ["0", "1", "2"] {
            std::fs::write(dir.join("fd").join(fd), "").unwrap();
        }
        dir
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn every_process_figure_is_there_without_proc_stat_and_the_start_time_is_sane() {
        let root = std::env::temp_dir().join(format!("namesrv-proc-{}", std::process::id()));
        let dir = proc_self_copy(&root);
        let text = scrape(&dir);
        std::fs::remove_dir_all(&root).unwrap();
        assert!(!root.join("stat").exists());
        assert!(value(&text, "process_cpu_seconds_total").is_some_and(|v| v >= 0.0), "{text}");
        for name in ["process_resident_memory_bytes", "process_virtual_memory_bytes", "process_max_fds"] {
            assert!(value(&text, name).is_some_and(|v| v > 0.0), "{name} missing or zero in:\n{text}");
        }
        assert_eq!(value(&text, "process_open_fds"), Some(3.0), "{text}");
        let start = value(&text, "process_start_time_seconds").unwrap();
        let now = clock::wall_ms() as f64 / 1000.0;
        // This test process started moments ago (a day is room for a slow machine, not for a boot
        // time or zero read wrongly).
        assert!(start <= now + 1.0 && start > now - 86_400.0, "start {start}, now {now}");
    }

    #[test]
    fn a_missing_file_loses_only_its_own_figure_and_the_start_time_stays_fixed() {
        let root = std::env::temp_dir().join(format!("namesrv-proc-missing-{}", std::process::id()));
        std::fs::create_dir_all(root.join("fd")).unwrap();
        std::fs::write(root.join("statm"), "2000 500 100 1 0 300 0\n").unwrap();
        let collector = ProcessCollector::at(&root);
        let first = collector.start_time_seconds;
        let mut registry = Registry::default();
        registry.register_collector(Box::new(collector));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(value(&text, "process_resident_memory_bytes"), Some(500.0 * 4096.0), "{text}");
        assert_eq!(value(&text, "process_virtual_memory_bytes"), Some(2000.0 * 4096.0));
        assert_eq!(value(&text, "process_open_fds"), Some(0.0));
        assert_eq!(value(&text, "process_start_time_seconds"), Some(first), "read once, at start");
        assert!(!text.contains("process_cpu_seconds") && !text.contains("process_max_fds"), "{text}");
    }
}
