//! The accounts file written in place, in pieces: a half-written file (which may well parse,
//! with fewer accounts) is never in force; the whole one is, once it has settled.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::common::requests::request;
use crate::common::security::{signed, write_accounts};
use crate::common::*;
use namesrv::settings::AclProtect;

const NO_PERMISSION: i32 = 16;

const OLD: &str = "[[accounts]]\naccess_key = \"old\"\nsecret_key = \"old-secret\"\nrole = \"admin\"\n";
const FIRST_HALF: &str = "[[accounts]]\naccess_key = \"new-a\"\nsecret_key = \"a-secret\"\nrole = \"admin\"\n";
const SECOND_HALF: &str = "\n[[accounts]]\naccess_key = \"new-b\"\nsecret_key = \"b-secret\"\nrole = \"admin\"\n";

#[test]
fn an_accounts_file_written_in_place_in_two_halves_is_never_in_force_half_written() {
    let dir = temp_dir();
    let path = write_accounts(&dir, OLD);
    let server = TestServer::with(|s| {
        s.acl.acl_enabled = true;
        s.acl.acl_accounts_file = path.display().to_string();
        s.acl.acl_protect = AclProtect::Admin;
        s.acl.security_reload_interval_ms = 20;
        s.acl.security_reload_settle_ms = 3_000;
    });
    let mut client = server.client();
    let mut put = |key: &str, secret: &str| {
        let cmd = signed(request(100, &[("namespace", "n"), ("key", "k"), ("value", "v")]), key, secret);
        client.call(cmd).code
    };
    assert_eq!(put("old", "old-secret"), 0);

    // Written in place: truncated, the first account, a pause many polls long, the second.
    let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(&path).unwrap();
    file.write_all(FIRST_HALF.as_bytes()).unwrap();
    file.flush().unwrap();
    let pause = Instant::now();
    while pause.elapsed() < Duration::from_millis(500) {
        assert_eq!(put("new-a", "a-secret"), NO_PERMISSION, "the half-written file is in force");
        assert_eq!(put("old", "old-secret"), 0, "the accounts in force stay until the file settles");
        std::thread::sleep(Duration::from_millis(20));
    }
    file.write_all(SECOND_HALF.as_bytes()).unwrap();
    drop(file);

    assert!(eventually(Duration::from_secs(15), || put("new-b", "b-secret") == 0), "the whole file loads");
    assert_eq!(put("new-a", "a-secret"), 0);
    assert_eq!(put("old", "old-secret"), NO_PERMISSION);
}

#[test]
fn a_revoked_key_stops_working_by_the_settle_deadline_while_the_file_keeps_changing() {
    let dir = temp_dir();
    let with_x = format!("{OLD}\n[[accounts]]\naccess_key = \"x\"\nsecret_key = \"x-secret\"\nrole = \"admin\"\n");
    let path = write_accounts(&dir, &with_x);
    let server = TestServer::with(|s| {
        s.acl.acl_enabled = true;
        s.acl.acl_accounts_file = path.display().to_string();
        s.acl.acl_protect = AclProtect::Admin;
        s.acl.security_reload_interval_ms = 50;
        s.acl.security_reload_settle_ms = 300;
        s.acl.security_reload_max_settle_ms = 1_000;
    });
    let mut client = server.client();
    let mut put = |key: &str, secret: &str| {
        let cmd = signed(request(100, &[("namespace", "n"), ("key", "k"), ("value", "v")]), key, secret);
        client.call(cmd).code
    };
    assert_eq!(put("x", "x-secret"), 0);

    // x is revoked, and the file never settles: one hand touches it every 100 ms, another
    // rewrites a trailing comment in place every 150 ms.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let running =
        |stop: &std::sync::Arc<std::sync::atomic::AtomicBool>| !stop.load(std::sync::atomic::Ordering::SeqCst);
    let toucher = {
        let (stop, path) = (stop.clone(), path.clone());
        std::thread::spawn(move || {
            while running(&stop) {
                let _ = std::process::Command::new("touch").arg(&path).status();
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let rewriter = {
        let (stop, path) = (stop.clone(), path.clone());
        std::thread::spawn(move || {
            for n in 0.. {
                if !running(&stop) {
                    break;
                }
                let text = format!("{OLD}# edit {n}\n");
                let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(&path).unwrap();
                file.write_all(text.as_bytes()).unwrap();
                drop(file);
                std::thread::sleep(Duration::from_millis(150));
            }
        })
    };
    let revoked = eventually(Duration::from_secs(3), || put("x", "x-secret") == NO_PERMISSION);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    toucher.join().unwrap();
    rewriter.join().unwrap();
    assert!(revoked, "the revoked key kept working while the file kept changing");
    assert!(eventually(Duration::from_secs(5), || put("old", "old-secret") == 0), "the accounts left stay");
}
