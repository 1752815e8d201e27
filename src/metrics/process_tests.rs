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
