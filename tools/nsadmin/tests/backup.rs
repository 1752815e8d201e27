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
