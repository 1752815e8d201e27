//! The `namesrv` binary as an operator runs it: flags, config layers, start, serve, stop.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::Client;

fn namesrv() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_namesrv"));
    let dir = crate::common::temp_dir();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_LOG")
        .env("NAMESRV_KV_CONFIG_PATH", dir.join("kvConfig.json"))
        .env("NAMESRV_CONFIG_STORE_PATH", dir.join("namesrv.properties"))
        .env("NAMESRV_HTTP_LISTEN", "127.0.0.1:0")
        .arg("--config-dir")
        .arg(&dir);
    cmd
}

#[test]
fn print_config_shows_the_layered_result() {
    let out = namesrv()
        .args(["-p", "--listen", "127.0.0.1:19876", "--scan-interval-ms", "200", "--set", "broker_timeout_ms=3000"])
        .args(["--set", "runtime_min_broker_timeout_ms=1000"])
        .env("NAMESRV_IDLE_TIMEOUT_SECS", "7")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "bind_address = \"127.0.0.1\"",
        "listen_port = 19876",
        "scan_interval_ms = 200",
        "broker_timeout_ms = 3000",
        "idle_timeout_secs = 7",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
}

#[test]
fn unknown_config_key_fails_start_up_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("namesrv-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(&file, "listenPort = 9999\nscan_intervall_ms = 1\n").unwrap();
    let out = namesrv().arg("-c").arg(&file).arg("-p").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown key scan_intervall_ms (did you mean scan_interval_ms?)"), "{stderr}");
}

#[test]
fn the_binary_serves_requests_and_exits_cleanly_on_sigterm() {
    let mut child =
        namesrv().args(["--listen", "127.0.0.1:0"]).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if let Some(addr) = line.contains("listening").then(|| line.split("addr=").nth(1)).flatten() {
                let _ = tx.send(addr.split_whitespace().next().unwrap_or_default().to_owned());
            }
        }
    });
    let addr = match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(addr) => addr,
        Err(_) => {
            let _ = child.kill();
            panic!("no listening line within 10 s");
        }
    };
    let mut client = Client::connect(addr.parse().unwrap());
    assert_eq!(client.call(namesrv::protocol::RemotingCommand::request(106, None)).code, 0);
    Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "namesrv did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_shipped_config_file_loads() {
    for file in ["config/default.toml", "deploy/kubernetes/namesrv.toml"] {
        let out = namesrv().args(["-c", file, "-p"]).output().unwrap();
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = namesrv().args(["--config-dir", "config", "-p"]).output().unwrap();
    assert!(out.status.success(), "config/default.toml as the defaults file: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_shipped_manifests_wait_for_the_brokers_on_a_cold_start() {
    let out = namesrv().args(["-c", "deploy/kubernetes/namesrv.toml", "-p"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().any(|l| l == "need_wait_for_service = true"), "{stdout}");
    let unit = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/systemd/namesrv.service")).unwrap();
    assert!(unit.lines().any(|l| l == "Environment=NAMESRV_NEED_WAIT_FOR_SERVICE=true"), "{unit}");
}

#[test]
fn a_bad_environment_value_names_the_variable() {
    let out = namesrv().arg("-p").env("NAMESRV_LISTEN_PORT", "abc").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a settings error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("environment: NAMESRV_LISTEN_PORT=abc: expected an integer"), "{stderr}");
}
