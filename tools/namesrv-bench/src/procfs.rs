//! What the load tool reads of the server process from /proc (Linux only; `None` elsewhere).

/// A `Vm*` field of `/proc/PID/status` (e.g. `VmRSS`, `VmHWM`), in KiB.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.strip_prefix(field).is_some_and(|rest| rest.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resident memory of `pid`, in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS")
}

/// Open file descriptors of `pid`.
pub fn open_fds(pid: u32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}

/// CPU time `pid` has used (user + system), in seconds; the kernel counts it in clock ticks of
/// 1/100 s on Linux.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which may hold spaces, closed by the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        let rss = rss_kib(me).unwrap();
        assert!(rss > 0 && rss <= status_kib(me, "VmHWM").unwrap());
        assert!(open_fds(me).unwrap() >= 3);
        assert_eq!(status_kib(me, "VmNoSuchField"), None);
        let spent = cpu_seconds(me).unwrap();
        let mut x = 0u64;
        let begin = std::time::Instant::now();
        while begin.elapsed().as_millis() < 300 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        assert!(cpu_seconds(me).unwrap() >= spent + 0.1, "300 ms of spinning shows as CPU time");
    }
}
