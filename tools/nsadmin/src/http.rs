//! A minimal HTTP/1.0 GET for the NameServer's JSON endpoint (`/api/v1/stats`,
//! `/api/v1/brokers`), and tolerant readers for the figures `watch` shows. Everything here is
//! optional: any failure means "not available", never an error of the command.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// Largest answer read: the endpoint's documents are small.
const MAX_RESPONSE_BYTES: u64 = 4 * 1024 * 1024;

/// Why a GET gave nothing usable.
#[derive(Debug, Error)]
pub enum HttpError {
    /// Connecting, writing or reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Nothing within the timeout.
    #[error("no answer within {0} ms")]
    Timeout(u128),
    /// The answer is not `HTTP/1.x 200`.
    #[error("status {0:?}")]
    Status(String),
    /// The answer has no header/body separator or a bad chunk.
    #[error("malformed HTTP answer")]
    Malformed,
    /// The body is not JSON.
    #[error("body is not json: {0}")]
    Json(#[from] serde_json::Error),
}

/// GETs `http://{host_port}{path}` and parses the body as JSON.
pub async fn get_json(host_port: &str, path: &str, wait: Duration) -> Result<Value, HttpError> {
    let exchange = async {
        let mut stream = TcpStream::connect(host_port).await?;
        let request = format!(
            "GET {path} HTTP/1.0\r\nHost: {host_port}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await?;
        let mut raw = Vec::new();
        stream.take(MAX_RESPONSE_BYTES).read_to_end(&mut raw).await?;
        Ok::<Vec<u8>, HttpError>(raw)
    };
    let raw = timeout(wait, exchange).await.map_err(|_| HttpError::Timeout(wait.as_millis()))??;
    Ok(serde_json::from_slice(&response_body(&raw)?)?)
}

/// The body of a complete HTTP/1.x answer, de-chunked when needed; only status 200 is accepted.
pub fn response_body(raw: &[u8]) -> Result<Vec<u8>, HttpError> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or(HttpError::Malformed)?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let body = &raw[split + 4..];
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(HttpError::Status(status.to_owned()));
    }
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    if chunked {
        dechunk(body)
    } else {
        Ok(body.to_vec())
    }
}

/// Joins the chunks of a chunked body.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, HttpError> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n").ok_or(HttpError::Malformed)?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_hex = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16).map_err(|_| HttpError::Malformed)?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = body.get(..size).ok_or(HttpError::Malformed)?;
        out.extend_from_slice(chunk);
        body = body.get(size + 2..).ok_or(HttpError::Malformed)?;
    }
}

/// The first value under `key` anywhere in `value`, depth first.
pub fn find_key<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(key).or_else(|| map.values().find_map(|v| find_key(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find_key(v, key)),
        _ => None,
    }
}

/// Field names that may hold a broker's address in the brokers document.
const ADDR_KEYS: [&str; 4] = ["addr", "broker_addr", "brokerAddr", "address"];

/// Fields that may hold how long ago a broker was last heard from, in milliseconds: namesrv's
/// `/api/v1/brokers` says `silent_ms`; other exporters' spellings are read too.
const AGE_KEYS: [&str; 2] = ["silent_ms", "last_update_ms_ago"];

/// Milliseconds since each broker address was last heard from, read from any document shape
/// that pairs an address with one of `AGE_KEYS`: a list of objects, or a map keyed by address.
pub fn heartbeat_ages(doc: &Value) -> BTreeMap<String, u64> {
    let mut ages = BTreeMap::new();
    collect_ages(doc, None, &mut ages);
    ages
}

/// For each broker a namesrv `/api/v1/brokers` list marks `provisional` (loaded from its route
/// snapshot at start, not registered since), how old that snapshot is in milliseconds.
pub fn snapshot_ages(doc: &Value) -> BTreeMap<String, u64> {
    let items = doc.as_array().map(Vec::as_slice).unwrap_or_default();
    let provisional = items.iter().filter(|b| b.get("provisional").and_then(Value::as_bool) == Some(true));
    provisional
        .filter_map(|b| {
            let addr = b.get("addr").and_then(Value::as_str)?;
            Some((addr.to_owned(), b.get("snapshot_age_ms").and_then(Value::as_u64).unwrap_or(0)))
        })
        .collect()
}

/// How a broker loaded from a route snapshot `age_ms` old is marked.
pub fn snapshot_note(age_ms: u64) -> String {
    format!("from snapshot (age {} s)", age_ms / 1000)
}

fn collect_ages(value: &Value, key: Option<&str>, ages: &mut BTreeMap<String, u64>) {
    match value {
        Value::Object(map) => {
            if let Some(age) = AGE_KEYS.iter().find_map(|k| map.get(*k).and_then(Value::as_f64)) {
                let addr = ADDR_KEYS.iter().find_map(|k| map.get(*k).and_then(Value::as_str)).or(key);
                if let Some(addr) = addr {
                    ages.insert(addr.to_owned(), age.max(0.0) as u64);
                }
            }
            for (k, v) in map {
                collect_ages(v, Some(k), ages);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_ages(v, None, ages)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plain_and_chunked_bodies_are_read_and_other_statuses_refused() {
        let plain = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{\"a\":1}";
        assert_eq!(response_body(plain).expect("ok"), b"{\"a\":1}");
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n4;x=y\r\n\":1}\r\n0\r\n\r\n";
        assert_eq!(response_body(chunked).expect("ok"), b"{\"a\":1}");
        assert!(matches!(response_body(b"HTTP/1.1 404 Not Found\r\n\r\n"), Err(HttpError::Status(_))));
        assert!(matches!(response_body(b"HTTP/1.1 200 OK\r\n"), Err(HttpError::Malformed)));
        let bad = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nff\r\nabc";
        assert!(matches!(response_body(bad), Err(HttpError::Malformed)));
    }

    #[test]
    fn heartbeat_ages_come_from_lists_and_maps() {
        let list = json!({"brokers": [{"addr": "h:1", "last_update_ms_ago": 1500}, {"name": "x"}]});
        assert_eq!(heartbeat_ages(&list), BTreeMap::from([("h:1".to_owned(), 1500)]));
        let map = json!({"h:2": {"last_update_ms_ago": 20.7}});
        assert_eq!(heartbeat_ages(&map), BTreeMap::from([("h:2".to_owned(), 20)]));
        let ours =
            json!([{"cluster": "c", "broker_name": "b", "addr": "h:3", "silent_ms": 8072, "timeout_ms": 120000}]);
        assert_eq!(heartbeat_ages(&ours), BTreeMap::from([("h:3".to_owned(), 8072)]));
        assert!(heartbeat_ages(&json!({"nothing": true})).is_empty());
    }

    #[test]
    fn provisional_brokers_are_read_with_their_snapshot_age() {
        let doc = json!([
            {"addr": "h:1", "silent_ms": 9000, "provisional": true, "snapshot_age_ms": 4200},
            {"addr": "h:2", "silent_ms": 10, "provisional": false},
        ]);
        assert_eq!(snapshot_ages(&doc), BTreeMap::from([("h:1".to_owned(), 4200)]));
        assert!(snapshot_ages(&json!({"h:1": {"provisional": true}})).is_empty(), "namesrv's list shape only");
    }

    #[test]
    fn keys_are_found_at_any_depth() {
        let doc = json!({"server": {"requests_per_second": 12.5}, "mailbox_depth": {"registry": 3}});
        assert_eq!(find_key(&doc, "requests_per_second"), Some(&json!(12.5)));
        assert_eq!(find_key(&doc, "mailbox_depth"), Some(&json!({"registry": 3})));
        assert_eq!(find_key(&doc, "missing"), None);
    }
}
