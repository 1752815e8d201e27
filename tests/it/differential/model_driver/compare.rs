//! Comparing a response with the model's [`Answer`]: codes, remarks and extFields exactly,
//! bodies as parsed JSON with the lists Java keeps in hash order sorted.

use std::collections::BTreeMap;

use namesrv::protocol::RemotingCommand;
use serde_json::Value;

use crate::differential::java_model::{Answer, Body};
use namesrv::protocol::json::lenient::quote_bare_keys;

/// Lists whose order Java leaves to hash iteration.
const UNORDERED: [&str; 3] = ["brokerDatas", "queueDatas", "topicList"];

/// Sorts every unordered list (and the name sets of `clusterAddrTable`) in place.
pub fn normalize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                normalize(child);
                if UNORDERED.contains(&key.as_str()) {
                    sort_array(child);
                }
                if key == "clusterAddrTable" {
                    if let Value::Object(clusters) = child {
                        clusters.values_mut().for_each(sort_array);
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

fn sort_array(value: &mut Value) {
    if let Value::Array(items) = value {
        items.sort_by_key(|v| v.to_string());
    }
}

/// Why a response differs from the answer, or `Ok`.
pub fn compare(expected: &Answer, actual: &RemotingCommand) -> Result<(), String> {
    let ext: Option<BTreeMap<String, String>> =
        actual.ext_fields.as_ref().map(|f| f.iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect());
    let head = |what: &str, e: &dyn std::fmt::Debug, a: &dyn std::fmt::Debug| {
        format!("{what} differs:\n  java   {e:?}\n  server {a:?}")
    };
    if actual.code != expected.code || actual.remark != expected.remark {
        let e = (expected.code, &expected.remark);
        return Err(head("code/remark", &e, &(actual.code, &actual.remark)));
    }
    if ext != expected.ext {
        return Err(head("extFields", &expected.ext, &ext));
    }
    compare_body(&expected.body, actual.body.as_deref())
}

fn compare_body(expected: &Body, actual: Option<&[u8]>) -> Result<(), String> {
    let parsed = match actual {
        Some(bytes) => {
            let value = serde_json::from_slice::<Value>(&quote_bare_keys(bytes));
            Some(value.map_err(|e| format!("body is not JSON ({e}): {}", String::from_utf8_lossy(bytes)))?)
        }
        None => None,
    };
    let differs = |e: &dyn std::fmt::Display, a: &dyn std::fmt::Display| {
        Err(format!("body differs:\n  java   {e}\n  server {a}"))
    };
    match (expected, parsed) {
        (Body::None, None) => Ok(()),
        (Body::None, Some(a)) => differs(&"(none)", &a),
        (_, None) => differs(&format!("{expected:?}"), &"(none)"),
        (Body::Json(e), Some(mut a)) => {
            let mut e = e.clone();
            normalize(&mut e);
            normalize(&mut a);
            if e == a {
                Ok(())
            } else {
                differs(&e, &a)
            }
        }
        (Body::Topics { must, may, broker_addr }, Some(a)) => {
            let listed: Option<Vec<String>> =
                a["topicList"].as_array().map(|l| l.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect());
            let addr = a.get("brokerAddr").and_then(Value::as_str).map(str::to_owned);
            let ok = listed.as_ref().is_some_and(|l| {
                let set: std::collections::BTreeSet<String> = l.iter().cloned().collect();
                set.len() == l.len() && must.is_subset(&set) && set.iter().all(|t| must.contains(t) || may.contains(t))
            });
            let keys_ok = a.as_object().is_some_and(|o| o.keys().all(|k| k == "topicList" || k == "brokerAddr"));
            if ok && keys_ok && addr == *broker_addr {
                Ok(())
            } else {
                differs(&format!("must {must:?} may {may:?} brokerAddr {broker_addr:?}"), &a)
            }
        }
        (Body::Route { route, choices }, Some(mut a)) => {
            let mut e = route.clone();
            for (addr, options) in choices {
                let got = a["filterServerTable"].as_object_mut().and_then(|t| t.remove(addr));
                if !options.contains(&got) {
                    return differs(&format!("filterServerTable[{addr}] one of {options:?}"), &format!("{got:?}"));
                }
            }
            normalize(&mut e);
            normalize(&mut a);
            if e == a {
                Ok(())
            } else {
                differs(&e, &a)
            }
        }
    }
}
