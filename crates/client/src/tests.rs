//! The answer bound ([`ConnectOptions::max_answer_bytes`]) against a listener in the test: an
//! answer of exactly the bound is read; one byte more is refused from its length field alone,
//! for frames read as commands and as raw bytes.

use std::time::Duration;

use bytes::BytesMut;
use namesrv_protocol::codec::encode_frame;
use namesrv_protocol::{RemotingCommand, ResponseCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::{ClientError, Conn, ConnectOptions};

const MAX: usize = 64 * 1024;

/// An answer to opaque 1 (a fresh connection's first request) of exactly `total` bytes, its
/// length field included.
fn answer(total: usize) -> BytesMut {
    let frame = |pad: usize| {
        let cmd = RemotingCommand::response(ResponseCode::Success, None).with_opaque(1).with_body(vec![b'x'; pad]);
        let mut out = BytesMut::new();
        encode_frame(&cmd, &mut out).expect("encode");
        out
    };
    let header = frame(0).len();
    frame(total - header)
}

/// Serves one connection: reads a request, writes the first `send` bytes of `frame`, then keeps
/// the connection open until the client closes it.
async fn serve(frame: BytesMut, send: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.expect("accept");
        let mut request = [0u8; 4096];
        let _ = stream.read(&mut request).await;
        let _ = stream.write_all(frame.get(..send).unwrap_or(&frame)).await;
        while matches!(stream.read(&mut request).await, Ok(1..)) {}
    });
    addr
}

/// A connection refusing answers over [`MAX`], waiting 5 s at most for one.
async fn connect(addr: &str) -> Conn {
    let options =
        ConnectOptions { timeout: Duration::from_secs(5), max_answer_bytes: MAX, ..ConnectOptions::default() };
    Conn::connect(addr, &options).await.expect("connect")
}

#[tokio::test]
async fn an_answer_of_exactly_the_bound_is_read() {
    let addr = serve(answer(MAX), MAX).await;
    let got = connect(&addr).await.call(RemotingCommand::request(106, None)).await.expect("an answer");
    assert_eq!((got.code, got.opaque), (0, 1));
}

#[tokio::test]
async fn one_byte_over_the_bound_is_refused_from_its_length_field_alone() {
    // Only the length field is ever sent: waiting for the body would time out instead.
    let addr = serve(answer(MAX + 1), 4).await;
    let err = connect(&addr).await.call(RemotingCommand::request(106, None)).await.expect_err("refused");
    assert!(matches!(err, ClientError::AnswerTooLarge { got, max } if got == MAX as u64 + 1 && max == MAX), "{err}");
    assert_eq!(err.to_string(), format!("answer of {} bytes is over the limit of {MAX} bytes", MAX + 1));
}

#[tokio::test]
async fn a_raw_frame_over_the_bound_is_refused_too() {
    let addr = serve(answer(MAX + 1), 4).await;
    let mut conn = connect(&addr).await;
    conn.send(RemotingCommand::request(106, None).with_opaque(1)).await.expect("sent");
    let err = conn.next_raw_frame().await.expect_err("refused");
    assert!(matches!(err, ClientError::AnswerTooLarge { .. }), "{err}");
}
