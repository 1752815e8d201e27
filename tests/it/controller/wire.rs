//! The controller's answers against a Java 5.3.3 controller's, byte for byte: the captured
//! broker requests replayed in order over two broker connections and mqadmin's, each answer's
//! header and body equal to the captured one (addresses of this run substituted: the controller
//! port, broker 2's port, where the 1008 push must arrive), then broker 1's connection closed
//! and the push to broker 2 and the final sync-state data compared the same way.

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::Client;

use super::WAIT;

pub(super) fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/java-5.3.3-controller").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The addresses of the capture and of this run.
struct Subst {
    controller: String,
    broker2: String,
}

impl Subst {
    fn apply(&self, bytes: &[u8]) -> Vec<u8> {
        String::from_utf8(bytes.to_vec())
            .unwrap()
            .replace("127.0.0.1:19881", &self.controller)
            .replace("127.0.0.1:23911", &self.broker2)
            .replace("\"heartbeatTimeoutMills\":\"10000\"", "\"heartbeatTimeoutMills\":\"1000\"")
            .into_bytes()
    }
}

fn frame(header: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&((4 + header.len() + body.len()) as u32).to_be_bytes());
    out.extend_from_slice(&(header.len() as u32).to_be_bytes());
    out.extend_from_slice(header);
    out.extend_from_slice(body);
    out
}

/// Splits a raw frame into header and body.
fn split(raw: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let header_len = (u32::from_be_bytes(raw[4..8].try_into().unwrap()) & 0xFF_FFFF) as usize;
    (raw[8..8 + header_len].to_vec(), raw[8 + header_len..].to_vec())
}

/// Sends the captured request `req` (e.g. `to-controller/0002_req_1012`) as it is.
fn send(client: &mut Client, s: &Subst, req: &str) {
    let body = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/java-5.3.3-controller/{req}.body.bin")),
    )
    .unwrap_or_default();
    client.send_raw(&frame(&s.apply(&fixture(&format!("{req}.header.raw"))), &s.apply(&body)));
}

/// Sends `req` and checks the answer against the captured response `resp`.
fn exchange(client: &mut Client, s: &Subst, req: &str, resp: &str) {
    send(client, s, req);
    let (header, body) = split(&client.read_raw_frame());
    let expected = s.apply(&fixture(&format!("{resp}.header.raw")));
    assert_eq!(String::from_utf8_lossy(&header), String::from_utf8_lossy(&expected), "header of {resp}");
    let path = format!("tests/fixtures/java-5.3.3-controller/{resp}.body.bin");
    let expected_body = std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap_or_default();
    assert_eq!(String::from_utf8_lossy(&body), String::from_utf8_lossy(&s.apply(&expected_body)), "body of {resp}");
}

/// Broker 2's heartbeat, made from broker 1's captured one.
fn broker2_heartbeat(client: &mut Client, s: &Subst) {
    let header = String::from_utf8(s.apply(&fixture("to-controller/0014_req_904_BROKER_HEARTBEAT.header.raw")))
        .unwrap()
        .replace("\"brokerId\":\"1\"", "\"brokerId\":\"2\"")
        .replace("127.0.0.1:22911", &s.broker2);
    client.send_raw(&frame(header.as_bytes(), b""));
}

fn without_opaque(header: &[u8]) -> String {
    let text = String::from_utf8_lossy(header).into_owned();
    let start = text.find("\"opaque\":").unwrap() + 9;
    let end = start + text[start..].find(',').unwrap();
    format!("{}{}", &text[..start], &text[end..])
}

#[test]
fn answers_equal_java_5_3_3_byte_for_byte_through_a_failover() {
    let started = Instant::now();
    let cluster = ControllerCluster::start(1, |_| {});
    cluster.wait_leader(WAIT);
    let broker2 = TcpListener::bind("127.0.0.1:0").unwrap();
    let s = Subst { controller: cluster.addr(0).to_string(), broker2: broker2.local_addr().unwrap().to_string() };
    let (mut b1, mut b2, mut admin) = (cluster.client(0), cluster.client(0), cluster.client(0));
    let c = "to-controller/";
    for (req, resp) in [("0000_req_1005", "0001_resp_0_to_1005"), ("0002_req_1012", "0003_resp_0_to_1012")] {
        exchange(&mut b1, &s, &format!("{c}{req}"), &format!("{c}{resp}"));
    }
    exchange(&mut b1, &s, &format!("{c}0004_req_1013"), &format!("{c}0005_resp_0_to_1013"));
    exchange(&mut b1, &s, &format!("{c}0006_req_1003"), &format!("{c}0007_resp_0_to_1003"));
    exchange(&mut b1, &s, &format!("{c}0008_req_1002"), &format!("{c}0010_resp_0_to_1002"));
    send(&mut b1, &s, &format!("{c}0011_req_904_BROKER_HEARTBEAT"));
    exchange(&mut b1, &s, &format!("{c}0012_req_1005"), &format!("{c}0013_resp_0_to_1005"));
    send(&mut b1, &s, &format!("{c}0014_req_904_BROKER_HEARTBEAT"));
    exchange(&mut b1, &s, &format!("{c}0015_req_1004"), &format!("{c}0016_resp_0_to_1004"));
    exchange(&mut b2, &s, &format!("{c}0020_req_1012"), &format!("{c}0021_resp_0_to_1012"));
    exchange(&mut b2, &s, &format!("{c}0022_req_1013"), &format!("{c}0023_resp_0_to_1013"));
    exchange(&mut b2, &s, &format!("{c}0024_req_1003"), &format!("{c}0025_resp_0_to_1003"));
    exchange(&mut b1, &s, &format!("{c}0034_req_1004"), &format!("{c}0035_resp_0_to_1004"));
    broker2_heartbeat(&mut b2, &s);
    exchange(&mut b1, &s, &format!("{c}0044_req_1001"), &format!("{c}0045_resp_0_to_1001"));
    exchange(&mut admin, &s, &format!("{c}0108_req_1006"), &format!("{c}0109_resp_0_to_1006"));
    // Both stay alive (1 s timeouts here) until the leader has heard every broker for that long.
    while started.elapsed() < Duration::from_millis(1600) {
        send(&mut b1, &s, &format!("{c}0014_req_904_BROKER_HEARTBEAT"));
        broker2_heartbeat(&mut b2, &s);
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(b1);
    broker2.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + WAIT;
    let mut pushed = loop {
        match broker2.accept() {
            Ok((stream, _)) => break stream,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("no 1008 to broker 2: {e}"),
        }
    };
    pushed.set_nonblocking(false).unwrap();
    pushed.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut raw = Vec::new();
    let _ = pushed.read_to_end(&mut raw);
    let (header, body) = split(&raw);
    let expected = s.apply(&fixture("controller-to-broker/0004_req_1008.header.raw"));
    assert_eq!(without_opaque(&header), without_opaque(&expected));
    assert_eq!(body, fixture("controller-to-broker/0004_req_1008.body.bin"));
    broker2_heartbeat(&mut b2, &s);
    exchange(&mut admin, &s, &format!("{c}0222_req_1006"), &format!("{c}0223_resp_0_to_1006"));
}
