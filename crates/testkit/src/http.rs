//! A minimal blocking HTTP/1.1 client for the HTTP endpoint's tests (GET only).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A response: status, content type and body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

impl Response {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not json ({e}): {}", self.body))
    }
}

/// `GET path` from `addr`, with `host` as the Host header.
pub fn get_as(addr: SocketAddr, host: &str, path: &str) -> Response {
    request(addr, host, path, "")
}

/// `GET path` from `addr` with an `Accept` header.
pub fn get_accepting(addr: SocketAddr, path: &str, accept: &str) -> Response {
    request(addr, &addr.to_string(), path, &format!("Accept: {accept}\r\n"))
}

/// `GET path` from `addr`, with `host` as the Host header and `headers` (each ending in CRLF)
/// added.
pub fn get_with_headers(addr: SocketAddr, host: &str, path: &str, headers: &str) -> Response {
    request(addr, host, path, headers)
}

/// `GET path` with `host` as the Host header and `headers` (each ending in CRLF) added.
fn request(addr: SocketAddr, host: &str, path: &str, headers: &str) -> Response {
    let mut stream = TcpStream::connect(addr).expect("connect to the http endpoint");
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the response");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.trim()))
        .unwrap_or_default()
        .to_owned();
    let body =
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { unchunk(body) } else { body.to_owned() };
    Response { status, content_type, body }
}

/// `GET path` from `addr`.
pub fn get(addr: SocketAddr, path: &str) -> Response {
    get_as(addr, &addr.to_string(), path)
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The value of the sample `name{labels}` in a Prometheus exposition, if present.
pub fn sample(text: &str, name_and_labels: &str) -> Option<f64> {
    samples_of(text).find_map(|(series, value)| (series == name_and_labels).then_some(value))
}

/// Every sample whose `name{labels}` starts with `prefix`, keyed by the rest of it: with the
/// prefix `name{actor="registry",message="`, the key is `Ping"}` for that message's series.
pub fn samples(text: &str, prefix: &str) -> BTreeMap<String, f64> {
    samples_of(text).filter_map(|(series, value)| Some((series.strip_prefix(prefix)?.to_owned(), value))).collect()
}

/// The samples of a Prometheus exposition as `(name{labels}, value)`, comments skipped.
fn samples_of(text: &str) -> impl Iterator<Item = (&str, f64)> {
    let lines = text.lines().filter(|l| !l.starts_with('#'));
    lines.filter_map(|l| l.rsplit_once(' ').and_then(|(series, value)| Some((series, value.parse().ok()?))))
}

/// `namesrv_security_reloads_total{file, result}` scraped from the HTTP endpoint at `addr`:
/// how often the accounts (`file="accounts"`) or TLS (`"tls"`) files were re-read and
/// `applied` or `refused`.
pub fn security_reloads(addr: SocketAddr, file: &str, result: &str) -> f64 {
    let text = get(addr, "/metrics").body;
    let name = format!(r#"namesrv_security_reloads_total{{file="{file}",result="{result}"}}"#);
    sample(&text, &name).unwrap_or_else(|| panic!("{name} missing from\n{text}"))
}
