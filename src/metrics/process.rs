//! The standard `process_*` figures, read from `/proc/self` when scraped (Linux; elsewhere
//! they are left out).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Clock ticks per second of `/proc/<pid>/stat` times (the kernel's USER_HZ, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// Page size for `/proc/self/statm` (4 KiB on the platforms this runs on).
const PAGE_BYTES: f64 = 4096.0;

/// Reads the process's CPU time, memory, open files and start time on each scrape.
#[derive(Debug, Default)]
pub struct ProcessCollector;

/// One reading of `/proc/self`.
struct Reading {
    cpu_seconds: f64,
    resident_bytes: f64,
    virtual_bytes: f64,
    open_fds: f64,
    max_fds: f64,
    start_time_seconds: f64,
}

fn read() -> Option<Reading> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name, which may itself hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|v| v.parse::<f64>().ok());
    let cpu_seconds = (field(14)? + field(15)?) / TICKS_PER_SECOND;
    let start_ticks = field(22)?;
    let boot_time: f64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())?;
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let mut pages = statm.split_whitespace().map(|v| v.parse::<f64>().unwrap_or(0.0));
    let (virtual_pages, resident_pages) = (pages.next()?, pages.next()?);
    let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count() as f64;
    let max_fds = std::fs::read_to_string("/proc/self/limits")
        .ok()?
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    Some(Reading {
        cpu_seconds,
        resident_bytes: resident_pages * PAGE_BYTES,
        virtual_bytes: virtual_pages * PAGE_BYTES,
        open_fds,
        max_fds,
        start_time_seconds: boot_time + start_ticks / TICKS_PER_SECOND,
    })
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(r) = read() else {
            return Ok(());
        };
        let cpu = ConstCounter::new(r.cpu_seconds);
        cpu.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "User and system CPU time",
            None,
            cpu.metric_type(),
        )?)?;
        for (name, help, value) in [
            ("process_resident_memory_bytes", "Resident memory", r.resident_bytes),
            ("process_virtual_memory_bytes", "Virtual memory", r.virtual_bytes),
            ("process_open_fds", "Open file descriptors", r.open_fds),
            ("process_max_fds", "Most file descriptors the process may open", r.max_fds),
            ("process_start_time_seconds", "Start time since the Unix epoch", r.start_time_seconds),
        ] {
            let gauge = ConstGauge::new(value);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        Ok(())
    }
}
