//! `exportKv` and `importKv`: a fleet's KV namespaces exported as a kvConfig.json and imported
//! into another fleet.

mod common;

use common::*;
use serde_json::Value;

#[test]
fn namespaces_exported_from_one_fleet_are_imported_into_another() {
    let (from, to_a, to_b) = (TestServer::start(), TestServer::start(), TestServer::start());
    for (ns, key, value) in [("ORDER_TOPIC_CONFIG", "Orders", "broker-a:4"), ("app", "k1", "v1"), ("app", "k2", "v2")] {
        expect_exit(&nsadmin(&["updateKvConfig", "-s", ns, "-k", key, "-v", value, "-n", &from.ns()]), 0);
    }
    let out = nsadmin(&["exportKv", "-s", "ORDER_TOPIC_CONFIG", "-s", "app", "-s", "absent", "-n", &from.ns()]);
    let text = expect_exit(&out, 0);
    assert!(stderr(&out).contains("no namespace \"absent\""), "{}", stderr(&out));
    let exported: Value = serde_json::from_str(text.trim()).expect("json");
    assert_eq!(exported["configTable"]["app"]["k2"], "v2");
    assert_eq!(exported["configTable"]["ORDER_TOPIC_CONFIG"]["Orders"], "broker-a:4");

    let file = temp_dir().join("kvConfig.json");
    std::fs::write(&file, &text).unwrap();
    let list = format!("{};{}", to_a.ns(), to_b.ns());
    let imported = expect_exit(&nsadmin(&["importKv", "-f", &file.display().to_string(), "-n", &list]), 0);
    assert_eq!(imported.matches("OK  entries=3").count(), 2, "{imported}");
    for server in [&to_a, &to_b] {
        let got = expect_exit(&nsadmin(&["getKvConfig", "-s", "app", "-n", &server.ns()]), 0);
        assert!(got.contains("k1=v1") && got.contains("k2=v2"), "{got}");
    }

    std::fs::write(&file, "{not json").unwrap();
    let bad = nsadmin(&["importKv", "-f", &file.display().to_string(), "-n", &list]);
    assert_eq!(code(&bad), 1);
    assert!(stderr(&bad).contains("not a kvConfig.json"), "{}", stderr(&bad));
}

/// `nsadmin args` under a 1 GiB address-space limit (prlimit), so reading a device whole fails
/// fast instead of taking the machine's memory.
fn nsadmin_within_1g(args: &[&str]) -> std::process::Output {
    std::process::Command::new("prlimit")
        .arg("--as=1073741824")
        .arg(env!("CARGO_BIN_EXE_nsadmin"))
        .args(args)
        .env_remove("NAMESRV_ADDR")
        .env_remove("NSADMIN_NAMESRV_ADDR")
        .output()
        .expect("prlimit runs")
}

#[test]
fn import_kv_refuses_devices_and_files_that_are_not_kv_configs() {
    let server = TestServer::start();
    let ns = server.ns();
    let refused = |file: &str, extra: &[&str], reason: &str| {
        let mut args = vec!["importKv", "-f", file, "-n", &ns];
        args.extend_from_slice(extra);
        let out = nsadmin_within_1g(&args);
        assert_eq!(code(&out), 1, "{file}: {}", stderr(&out));
        assert!(stderr(&out).contains(reason), "{file}: expected {reason:?} in {}", stderr(&out));
    };
    refused("/dev/zero", &[], "not a regular file");
    let dir = temp_dir();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    refused(&write("array.json", "[]"), &[], "not a kvConfig.json");
    refused(&write("object.json", "{}"), &[], "not a kvConfig.json");
    refused(&write("list-table.json", r#"{"configTable":[]}"#), &[], "not a kvConfig.json");
    refused(&write("other.json", r#"{"configTable":{},"topicConfigTable":{}}"#), &[], "not a kvConfig.json");
    let empty = write("empty.json", r#"{"configTable":{}}"#);
    refused(&empty, &[], "nothing to import");
    let big = write("big.json", &format!(r#"{{"configTable":{{"a":{{"k":"{}"}}}}}}"#, "v".repeat(4096)));
    refused(&big, &["--max-bytes", "1024"], "larger than --max-bytes");

    let out = nsadmin_within_1g(&["importKv", "-f", &empty, "--allow-empty", "-n", &ns]);
    assert!(expect_exit(&out, 0).contains("entries=0"), "{}", stdout(&out));
    let out = nsadmin_within_1g(&["importKv", "-f", &big, "-n", &ns]);
    assert!(expect_exit(&out, 0).contains("entries=1"), "{}", stdout(&out));
    let got = expect_exit(&nsadmin(&["getKvConfig", "-s", "a", "-k", "k", "-n", &ns]), 0);
    assert!(got.contains(&"v".repeat(4096)), "the entry arrived");
}
