//! The real `namesrv` binary as a child process, killed on drop; shared by the KV store and
//! runtime configuration tests.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A `namesrv` command with its KV and config-store files in a fresh directory, which is also
/// its config directory (so no `/etc/namesrv/default.toml` of the machine leaks in).
pub fn namesrv_command(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_namesrv"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_LOG")
        .env_remove("NOTIFY_SOCKET")
        .env_remove("STATE_DIRECTORY")
        .env("NAMESRV_KV_CONFIG_PATH", dir.join("kvConfig.json"))
        .env("NAMESRV_CONFIG_STORE_PATH", dir.join("namesrv.properties"))
        .env("NAMESRV_HTTP_LISTEN", "127.0.0.1:0")
        .arg("--config-dir")
        .arg(dir);
    cmd
}

/// A spawned `namesrv` process, collecting its output; killed and reaped when dropped.
pub struct Proc {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

impl Proc {
    pub fn spawn(mut cmd: Command) -> Proc {
        let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let readers = vec![
            collect(child.stdout.take().unwrap(), stdout.clone()),
            collect(child.stderr.take().unwrap(), stderr.clone()),
        ];
        Proc { child, stdout, stderr, readers }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    /// The address from the `"message":"listening","addr":"HOST:PORT"` JSON log line.
    pub fn json_addr(&mut self) -> SocketAddr {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = self.stderr();
            let found = text
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .find(|l| l["message"] == "listening")
                .and_then(|l| l["addr"].as_str().map(str::to_owned));
            if let Some(addr) = found {
                return addr.parse().unwrap_or_else(|e| panic!("bad listening address {addr:?}: {e}"));
            }
            assert!(
                Instant::now() < deadline,
                "no listening line within 10 s; stderr:
{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The address from the `listening addr=HOST:PORT` log line; panics if it does not come
    /// within 10 s or the process exits first.
    pub fn addr(&mut self) -> SocketAddr {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = self.stderr();
            let found = text.lines().filter(|l| l.contains("listening")).find_map(|l| l.split("addr=").nth(1));
            if let Some(addr) = found {
                let addr = addr.split_whitespace().next().unwrap_or_default();
                return addr.parse().unwrap_or_else(|e| panic!("bad listening address {addr:?}: {e}"));
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("namesrv exited with {status} before listening; stderr:\n{}", self.stderr());
            }
            assert!(Instant::now() < deadline, "no listening line within 10 s; stderr:\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The HTTP endpoint's address from the `listening ... http_addr=HOST:PORT` log line.
    pub fn http_addr(&mut self) -> SocketAddr {
        let listening = self.wait_for_line(&["listening", "http_addr="]);
        let http = listening.split("http_addr=").nth(1).and_then(|a| a.split_whitespace().next()).unwrap();
        http.parse().unwrap_or_else(|e| panic!("bad http address {http:?}: {e}"))
    }

    /// Waits for the process to exit (at most `timeout`) and for its output to be collected.
    pub fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "namesrv did not exit within {timeout:?}; stderr:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        };
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        status
    }

    /// The most memory the process has had resident so far (`VmHWM`), in bytes.
    pub fn peak_rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/PID/status");
        line.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).unwrap() * 1024
    }

    /// SIGKILL, as `kill -9`.
    pub fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.wait(Duration::from_secs(5));
    }

    /// SIGTERM, as a service manager stops it.
    pub fn terminate(&self) {
        self.signal("TERM");
    }

    /// SIGSTOP: the process runs no more (a GC-like pause, a frozen VM) until [`Proc::resume`].
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// SIGCONT, after [`Proc::pause`].
    pub fn resume(&self) {
        self.signal("CONT");
    }

    /// SIGHUP, as `systemctl reload` (the unit's ExecReload) sends it.
    pub fn hangup(&self) {
        self.signal("HUP");
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill").arg(format!("-{name}")).arg(self.child.id().to_string()).status().unwrap();
        assert!(status.success(), "kill -{name} failed");
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits (at most 10 s) until stderr holds a line containing every one of `parts`; returns it.
    pub fn wait_for_line(&mut self, parts: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = self.stderr();
            if let Some(line) = text.lines().find(|l| parts.iter().all(|p| l.contains(p))) {
                return line.to_owned();
            }
            assert!(Instant::now() < deadline, "no line with {parts:?} within 10 s; stderr:\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn collect(mut from: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(&mut from);
        let mut line = String::new();
        while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
            into.lock().unwrap().push_str(&line);
            line.clear();
        }
    })
}

/// Runs a command that should end on its own (start-up failures, `-p`), at most 10 s.
pub fn run_to_exit(cmd: Command) -> (ExitStatus, String, String) {
    let mut proc = Proc::spawn(cmd);
    let status = proc.wait(Duration::from_secs(10));
    (status, proc.stdout(), proc.stderr())
}

/// `base` run under `prlimit` with `limit` (`--fsize=...`, `--nofile=...`), as `ulimit` would
/// run it: the same program, arguments, directory and environment.
pub fn prlimited(limit: &str, base: &Command) -> Command {
    let mut cmd = Command::new("prlimit");
    cmd.arg(limit).arg(base.get_program()).args(base.get_args());
    if let Some(dir) = base.get_current_dir() {
        cmd.current_dir(dir);
    }
    for (key, value) in base.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    cmd
}
