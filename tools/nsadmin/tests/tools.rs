//! Signed requests (checked by a NameServer stand-in that verifies every signature, and by
//! namesrv with access control on), `watch` with and without the HTTP endpoint, and `wait`.

mod common;

use std::process::Command;
use std::sync::{Arc, Mutex};

use common::*;
use namesrv::protocol::signature::{verify, ACCESS_KEY, SECURITY_TOKEN, SIGNATURE};
use namesrv::protocol::{RemotingCommand, ResponseCode};

/// What the stand-in saw: (code, AccessKey, SecurityToken, signature valid) per request.
type Seen = Arc<Mutex<Vec<(i32, Option<String>, Option<String>, bool)>>>;

/// A NameServer stand-in that checks every request's signature against `secret`: a valid one
/// gets SUCCESS (with an empty cluster-info body), any other NO_PERMISSION.
fn verifying_namesrv(secret: &'static str) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let addr = stand_in(move |req| {
        let fields = req.ext_fields.clone().unwrap_or_default();
        let signature = fields.get(SIGNATURE).unwrap_or_default();
        let valid = verify(fields.iter(), req.body.as_deref(), secret, signature);
        let owned = |k: &str| fields.get(k).map(str::to_owned);
        log.lock().expect("lock").push((req.code, owned(ACCESS_KEY), owned(SECURITY_TOKEN), valid));
        if valid {
            RemotingCommand::response(ResponseCode::Success, None)
                .with_body(&br#"{"brokerAddrTable":{},"clusterAddrTable":{}}"#[..])
        } else {
            RemotingCommand::response(ResponseCode::NoPermission, Some("signature mismatch".into()))
        }
    });
    (addr, seen)
}

#[test]
fn every_request_is_signed_with_the_session_credentials() {
    let (addr, seen) = verifying_namesrv("sk");
    let signed = ["--access-key", "ak", "--secret-key", "sk", "-n", &addr];
    expect_exit(&nsadmin(&[&["clusterList"][..], &signed].concat()), 0);
    // A write with a body: the body is signed too.
    expect_exit(&nsadmin(&[&["updateNamesrvConfig", "-k", "a", "-v", "b"][..], &signed].concat()), 0);
    let wrong = nsadmin(&["clusterList", "--access-key", "ak", "--secret-key", "bad", "-n", &addr]);
    assert_eq!(code(&wrong), 1);
    assert!(stderr(&wrong).contains("NO_PERMISSION (16): signature mismatch"), "{}", stderr(&wrong));
    let unsigned = nsadmin(&["clusterList", "-n", &addr]);
    assert_eq!(code(&unsigned), 1);
    let log = seen.lock().expect("lock").clone();
    assert_eq!(
        log,
        [
            (106, Some("ak".to_owned()), None, true),
            (318, Some("ak".to_owned()), None, true),
            (106, Some("ak".to_owned()), None, false),
            (106, None, None, false),
        ]
    );
}

#[test]
fn credentials_come_from_the_environment_with_a_session_token() {
    let (addr, seen) = verifying_namesrv("env-secret");
    let out = Command::new(env!("CARGO_BIN_EXE_nsadmin"))
        .args(["topicList", "-n", &addr])
        .env("NSADMIN_ACCESS_KEY", "env-ak")
        .env("NSADMIN_SECRET_KEY", "env-secret")
        .env("NSADMIN_SECURITY_TOKEN", "tok")
        .output()
        .expect("run");
    expect_exit(&out, 0);
    assert_eq!(seen.lock().expect("lock")[0], (206, Some("env-ak".to_owned()), Some("tok".to_owned()), true));
    let half = nsadmin(&["clusterList", "--access-key", "ak", "-n", &addr]);
    assert_eq!(code(&half), 1);
    assert!(stderr(&half).contains("--access-key needs --secret-key"), "{}", stderr(&half));
}

#[test]
fn signed_writes_are_accepted_by_namesrv() {
    let server = TestServer::start();
    let args = ["updateKvConfig", "-s", "NS", "-k", "k", "-v", "v", "--access-key", "ak", "--secret-key", "sk"];
    expect_exit(&nsadmin(&[&args[..], &["-n", &server.ns()]].concat()), 0);
    assert_eq!(server.client().request(101, &[("namespace", "NS"), ("key", "k")]).ext("value"), Some("v"));
}

#[test]
fn against_namesrv_with_access_control_on_only_the_admin_account_writes() {
    let accounts = temp_dir().join("accounts.toml");
    let text = "[[accounts]]\naccess_key = \"ops\"\nsecret_key = \"ops-secret\"\nrole = \"admin\"\n\n\
                [[accounts]]\naccess_key = \"app\"\nsecret_key = \"app-secret\"\nrole = \"client\"\n";
    std::fs::write(&accounts, text).expect("write accounts");
    let server = TestServer::with(|s| {
        s.acl.acl_enabled = true;
        s.acl.acl_accounts_file = accounts.display().to_string();
        s.acl.acl_protect = namesrv::settings::AclProtect::All;
    });
    let ns = server.ns();
    let as_ = |key: &'static str, secret: &'static str, args: &[&str]| {
        nsadmin(&[args, &["--access-key", key, "--secret-key", secret, "-n", &ns]].concat())
    };
    // Writes with and without a body, signed by the admin account.
    expect_exit(&as_("ops", "ops-secret", &["updateKvConfig", "-s", "NS", "-k", "k", "-v", "v"]), 0);
    expect_exit(&as_("ops", "ops-secret", &["updateNamesrvConfig", "-k", "orderMessageEnable", "-v", "true"]), 0);
    // A client account reads, and may not write.
    let read = as_("app", "app-secret", &["getKvConfig", "-s", "NS", "-k", "k"]);
    assert!(expect_exit(&read, 0).contains('v'));
    let write = as_("app", "app-secret", &["wipeWritePerm", "-b", "broker-a"]);
    assert_eq!(code(&write), 1);
    let said = format!("{}{}", stdout(&write), stderr(&write));
    assert!(said.contains("NO_PERMISSION (16): AccessKey app (role client) may not send request code 205"), "{said}");
    let wrong = as_("ops", "not-the-secret", &["clusterList"]);
    assert!(
        stderr(&wrong)
            .contains("NO_PERMISSION (16): signature refused for AccessKey ops (unknown key or wrong secret)"),
        "{}",
        stderr(&wrong)
    );
    let unsigned = nsadmin(&["clusterList", "-n", &ns]);
    assert_eq!(code(&unsigned), 1);
    assert!(stderr(&unsigned).contains("NO_PERMISSION (16): no AccessKey"), "{}", stderr(&unsigned));
}

#[test]
fn watch_redraws_in_place_a_bounded_number_of_times() {
    let server = TestServer::start();
    server.register(&Broker::new("C", "broker-a", 0, "127.0.0.1:10911").topics(&["T", "U"]));
    // On a terminal (a pseudo-terminal from util-linux's `script`): the screen is redrawn.
    let cmd = format!("{} watch --count 3 --interval-ms 20 -n {}", env!("CARGO_BIN_EXE_nsadmin"), server.ns());
    let tty = std::process::Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().expect("run script");
    let text = String::from_utf8_lossy(&tty.stdout);
    assert_eq!(text.matches("\x1b[H\x1b[2J").count(), 3, "{text}");
    // Into a pipe: the same blocks, without screen control codes.
    let text = expect_exit(&nsadmin(&["watch", "--count", "3", "--interval-ms", "20", "-n", &server.ns()]), 0);
    assert!(!text.contains('\x1b'), "no escape codes into a pipe: {text:?}");
    assert_eq!(text.matches("nsadmin watch").count(), 3, "{text}");
    assert!(text.contains("refresh 3") && text.contains("127.0.0.1:10911"), "{text}");
    assert!(text.contains("topics: 2\n"), "{text}");
    assert!(text.contains("give --http host:port"), "{text}");
    let dead = dead_addr();
    let text = expect_exit(&nsadmin(&["watch", "--count", "1", "--http", &dead, "-n", &server.ns()]), 0);
    assert!(text.contains(&format!("HTTP endpoint {dead} not reachable")), "{text}");
}

#[test]
fn watch_shows_rate_mailbox_depth_and_heartbeat_age_from_the_http_endpoint() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.expect("HTTP endpoint").to_string();
    server.register(&Broker::new("C", "broker-a", 0, "127.0.0.1:10911"));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let text = expect_exit(&nsadmin(&["watch", "--count", "1", "--http", &http, "-n", &server.ns()]), 0);
    assert!(text.contains("requests/s: ") && text.contains("mailbox depth: "), "{text}");
    assert!(text.contains("#Heartbeat Age") && text.contains(" s"), "{text}");
    let line = expect_exit(&nsadmin(&["watch", "--count", "1", "--json", "--http", &http, "-n", &server.ns()]), 0);
    let view: serde_json::Value = serde_json::from_str(line.trim()).expect("json");
    let age =
        view["heartbeat_age_ms"]["127.0.0.1:10911"].as_u64().unwrap_or_else(|| panic!("no heartbeat age in {view}"));
    assert!((250..60_000).contains(&age), "the broker registered about 300 ms ago, age {age} ms");
    assert!(view["mailbox_depth"]["registry"].is_u64(), "{view}");
}

#[test]
fn watch_keeps_going_when_the_namesrv_is_down_and_exits_1() {
    let dead = dead_addr();
    let out = nsadmin(&["watch", "--count", "2", "--interval-ms", "10", "--timeout-ms", "300", "-n", &dead]);
    let text = expect_exit(&out, 1);
    assert_eq!(text.matches("error: no NameServer answered").count(), 2, "{text}");
}

#[test]
fn wait_returns_once_a_broker_is_listed_or_gone_everywhere() {
    let (a, b) = (TestServer::start(), TestServer::start());
    let list = format!("{};{}", a.ns(), b.ns());
    let broker = Broker::new("C", "broker-w", 0, "127.0.0.1:10911");
    a.register(&broker);
    let out = nsadmin(&["wait", "-b", "broker-w", "--timeout-secs", "0.5", "-n", &list]);
    assert_eq!(code(&out), 1, "listed on one of two only");
    assert!(stderr(&out).contains(&format!("not listed within 0.5 s on: {}", b.ns())), "{}", stderr(&out));
    b.register(&broker);
    expect_exit(&nsadmin(&["wait", "-b", "broker-w", "--timeout-secs", "5", "-n", &list]), 0);
    assert_eq!(code(&nsadmin(&["wait", "-b", "broker-w", "--gone", "--timeout-secs", "0.3", "-n", &list])), 1);
    let unregister =
        [("brokerName", "broker-w"), ("brokerAddr", "127.0.0.1:10911"), ("clusterName", "C"), ("brokerId", "0")];
    for server in [&a, &b] {
        assert_eq!(server.client().request(104, &unregister).code, 0);
    }
    expect_exit(&nsadmin(&["wait", "-b", "broker-w", "--gone", "--timeout-secs", "5", "-n", &list]), 0);
}
