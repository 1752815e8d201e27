//! TLS as an operator sees it, on the real binary: the warning naming a TLS ClientHello or an
//! HTTP request on a plain port, plain connections refused in enforcing mode, bad certificate
//! files at start-up and on reload, and SIGHUP re-reading the certificate.

use std::path::Path;
use std::time::Duration;

use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::security::{client_config, tls_client, Pki};
use crate::common::*;
use namesrv::protocol::RemotingCommand;

/// The binary in TLS `mode` with a certificate from `pki` written into `dir`.
fn tls_command(dir: &Path, pki: &Pki, mode: &str, poll_ms: u64) -> std::process::Command {
    let (cert, key) = pki.write_server(dir, "namesrv-1");
    let mut cmd = namesrv_command(dir);
    cmd.args(["--listen", "127.0.0.1:0"])
        .env("NAMESRV_TLS_MODE", mode)
        .env("NAMESRV_TLS_CERT_FILE", cert)
        .env("NAMESRV_TLS_KEY_FILE", key)
        .env("NAMESRV_SECURITY_RELOAD_INTERVAL_MS", poll_ms.to_string());
    cmd
}

#[test]
fn a_plain_port_names_a_tls_client_hello_and_an_http_request_instead_of_a_huge_frame() {
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    let pki = Pki::new("test CA");
    assert!(tls_client(addr, client_config(pki.ca_der(), None)).is_err());
    let line = proc.wait_for_line(&["WARN", "closing connection"]);
    assert!(line.contains("looks like a TLS ClientHello; TLS is disabled on this port"), "{line}");
    let mut http = Client::connect(addr);
    http.send_raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(http.closed_by_server(Duration::from_secs(3)));
    proc.wait_for_line(&["WARN", "looks like an HTTP request"]);
    assert!(!proc.stderr().contains("frame too large"), "{}", proc.stderr());
}

#[test]
fn enforcing_mode_closes_a_plain_connection_with_one_warning() {
    let dir = temp_dir();
    let pki = Pki::new("test CA");
    let mut proc = Proc::spawn(tls_command(&dir, &pki, "enforcing", 2000));
    let addr = proc.addr();
    let line = proc.wait_for_line(&["INFO", "TLS on"]);
    assert!(line.contains("mode=enforcing"), "{line}");
    let mut plain = Client::connect(addr);
    let peer = plain.local_addr().to_string();
    plain.send(&RemotingCommand::request(106, None));
    assert!(plain.closed_by_server(Duration::from_secs(3)));
    let line = proc.wait_for_line(&["WARN", "plain TCP while tls_mode is enforcing"]);
    assert!(line.contains(&peer), "{line}");
    let mut tls = tls_client(addr, client_config(pki.ca_der(), None)).unwrap();
    assert_eq!(tls.call(RemotingCommand::request(106, None)).code, 0);
}

#[test]
fn start_up_and_check_config_fail_on_a_bad_certificate_naming_the_file() {
    let dir = temp_dir();
    let pki = Pki::new("test CA");
    let mut check = tls_command(&dir, &pki, "permissive", 2000);
    check.arg("--check-config");
    let (status, stdout, _) = run_to_exit(check);
    assert!(status.success() && stdout.contains("TLS (permissive): certificate"), "{stdout}");
    std::fs::write(dir.join("server.key"), "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n").unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "127.0.0.1:0"])
        .env("NAMESRV_TLS_MODE", "enforcing")
        .env("NAMESRV_TLS_CERT_FILE", dir.join("server.pem"))
        .env("NAMESRV_TLS_KEY_FILE", dir.join("server.key"));
    let (status, _, stderr) = run_to_exit(cmd);
    assert!(!status.success());
    assert!(stderr.contains("private key") && stderr.contains("server.key"), "{stderr}");
    assert!(!stderr.contains("!!!"), "key file contents never reach the log: {stderr}");
}

#[test]
fn a_private_key_others_may_read_is_warned_at_start_and_by_check_config() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir();
    let pki = Pki::new("test CA");
    let warned = |stdout: &str, stderr: &str| {
        (stdout.contains("warning: TLS private key file"), stderr.contains("TLS private key file is readable"))
    };
    let mut check = tls_command(&dir, &pki, "permissive", 2000);
    check.arg("--check-config");
    let (status, stdout, stderr) = run_to_exit(check);
    assert!(status.success());
    assert_eq!(warned(&stdout, &stderr), (false, false), "mode 600: {stdout}{stderr}");
    let key = dir.join("server.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut check = namesrv_command(&dir);
    check.args(["--listen", "127.0.0.1:0", "--check-config"]).env("NAMESRV_TLS_MODE", "permissive");
    check.env("NAMESRV_TLS_CERT_FILE", dir.join("server.pem")).env("NAMESRV_TLS_KEY_FILE", &key);
    let (status, stdout, stderr) = run_to_exit(check);
    assert!(status.success(), "a warning, not a refusal: {stderr}");
    assert!(stdout.contains("server.key is readable by group or others (mode 644): chmod 600 it"), "{stdout}");
    let mut start = namesrv_command(&dir);
    start.args(["--listen", "127.0.0.1:0"]).env("NAMESRV_TLS_MODE", "permissive");
    start.env("NAMESRV_TLS_CERT_FILE", dir.join("server.pem")).env("NAMESRV_TLS_KEY_FILE", &key);
    let mut proc = Proc::spawn(start);
    let line = proc.wait_for_line(&["WARN", "TLS private key file is readable by group or others"]);
    assert!(line.contains("server.key") && line.contains("mode=644"), "{line}");
}

#[test]
fn a_bad_certificate_on_reload_is_logged_and_sighup_rereads_the_files() {
    let dir = temp_dir();
    let pki = Pki::new("test CA");
    let mut proc = Proc::spawn(tls_command(&dir, &pki, "enforcing", 0));
    let addr = proc.addr();
    let config = client_config(pki.ca_der(), None);
    let first = tls_client(addr, config.clone()).unwrap().server_certificate();
    std::fs::write(dir.join("server.pem"), "garbage").unwrap();
    proc.hangup();
    let line = proc.wait_for_line(&["ERROR", "TLS files not reloaded"]);
    assert!(line.contains("server.pem") && line.contains("no PEM certificate found"), "{line}");
    assert_eq!(tls_client(addr, config.clone()).unwrap().server_certificate(), first);
    pki.write_server(&dir, "namesrv-2");
    proc.hangup();
    proc.wait_for_line(&["INFO", "TLS certificate reloaded", "requested=true"]);
    assert_ne!(tls_client(addr, config).unwrap().server_certificate(), first);
}
