//! The shared client (namesrv-client) against the real server: requests queued and flushed
//! with the opaques their answers carry, reads with a deadline that tell a silent server from
//! a closed connection, and the raw-byte paths the load tool and the wire tests use.

use std::time::Duration;

use bytes::BytesMut;
use namesrv::protocol::{RemotingCodec, RemotingCommand};
use namesrv_client::blocking::BlockingConn;
use namesrv_client::{Conn, ConnectOptions, Incoming};
use tokio_util::codec::Decoder;

use crate::common::{route_request, Broker, TestServer};

fn connect(server: &TestServer) -> BlockingConn {
    BlockingConn::connect(&server.addr.to_string(), &ConnectOptions::default()).expect("connect")
}

fn frame(conn: &mut BlockingConn) -> RemotingCommand {
    match conn.next_frame_within(Duration::from_secs(5)).expect("a frame") {
        Incoming::Frame(frame) => frame,
        other => panic!("expected a frame, got {other:?}"),
    }
}

#[test]
fn queued_requests_are_answered_with_the_opaques_feed_returned() {
    let server = TestServer::start();
    server.register(&Broker::new("c", "b", 0, "127.0.0.1:1").topics(&["T1", "T2"]));
    let mut conn = connect(&server);
    let known = conn.feed(route_request("T1", 479)).unwrap();
    let unknown = conn.feed(route_request("Nope", 479)).unwrap();
    let info = conn.feed(RemotingCommand::request(106, None)).unwrap();
    assert_eq!([unknown, info], [known + 1, known + 2], "consecutive opaques");
    conn.flush().unwrap();
    let mut answers: Vec<(i32, i32)> = (0..3).map(|_| frame(&mut conn)).map(|f| (f.opaque, f.code)).collect();
    answers.sort_unstable();
    assert_eq!(answers, [(known, 0), (unknown, 17), (info, 0)]);
}

#[test]
fn a_silent_server_reads_as_silent_and_a_closing_one_as_closed() {
    let server = TestServer::start();
    let mut conn = connect(&server);
    assert!(matches!(conn.next_frame_within(Duration::from_millis(200)).unwrap(), Incoming::Silent));
    conn.send_raw(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert!(matches!(conn.next_frame_within(Duration::from_secs(3)).unwrap(), Incoming::Closed));
}

#[test]
fn a_one_way_send_keeps_its_own_opaque() {
    let server = TestServer::start();
    let mut conn = connect(&server);
    conn.send(RemotingCommand::request(106, None).with_opaque(4242)).unwrap();
    assert_eq!(frame(&mut conn).opaque, 4242);
}

#[test]
fn raw_frames_and_raw_reads_carry_exactly_the_bytes_of_the_answers() {
    let server = TestServer::start();
    let mut conn = connect(&server);
    conn.send(RemotingCommand::request(106, None).with_opaque(7)).unwrap();
    let raw = conn.next_raw_frame().unwrap();
    let mut codec = RemotingCodec::new(1 << 20);
    let mut one = raw.clone();
    assert_eq!(codec.decode(&mut one).unwrap().map(|f| f.opaque), Some(7));
    assert!(one.is_empty(), "one whole frame, nothing more");

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut conn = Conn::connect(&server.addr.to_string(), &ConnectOptions::default()).await.unwrap();
        for opaque in [1, 2] {
            conn.feed_as_is(RemotingCommand::request(106, None).with_opaque(opaque)).unwrap();
        }
        conn.flush().await.unwrap();
        let mut input = BytesMut::new();
        let mut opaques = Vec::new();
        while opaques.len() < 2 {
            let read = tokio::time::timeout(Duration::from_secs(5), conn.read_raw(&mut input)).await;
            assert!(read.expect("answers within 5 s").unwrap() > 0, "the server closed");
            while let Some(frame) = codec.decode(&mut input).unwrap() {
                opaques.push(frame.opaque);
            }
        }
        opaques.sort_unstable();
        assert_eq!(opaques, [1, 2]);
    });
}
