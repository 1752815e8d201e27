//! What nsadmin's tests add to the testkit (servers, clients, brokers): running the nsadmin
//! binary and reading what it printed.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output};

use bytes::BytesMut;
use namesrv::protocol::codec::encode_frame;
use namesrv::protocol::{ExtFields, RemotingCodec, RemotingCommand};
use serde_json::Value;
use tokio_util::codec::Decoder;

// Each test file uses its own part of the testkit.
#[allow(unused_imports)]
pub use namesrv_testkit::{temp_dir, Broker, Client, TestServer};

/// Runs nsadmin with `args`, credentials and NameServer addresses from the environment removed.
pub fn nsadmin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nsadmin"))
        .args(args)
        .env_remove("NSADMIN_ACCESS_KEY")
        .env_remove("NSADMIN_SECRET_KEY")
        .env_remove("NSADMIN_SECURITY_TOKEN")
        .env_remove("NSADMIN_NAMESRV_ADDR")
        .env_remove("NAMESRV_ADDR")
        .output()
        .expect("run nsadmin")
}
/// stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The exit code, with stdout and stderr in the message when asserting on it fails.
pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// Asserts exit code `expected` and returns stdout.
pub fn expect_exit(out: &Output, expected: i32) -> String {
    assert_eq!(code(out), expected, "stdout:\n{}\nstderr:\n{}", stdout(out), stderr(out));
    stdout(out)
}

/// stdout parsed as one JSON document; the exit code must be 0.
pub fn json_ok(out: &Output) -> Value {
    let text = expect_exit(out, 0);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not json ({e}): {text}"))
}

/// An address nothing listens on (bound, then closed: only ever connected to, never re-bound).
pub fn dead_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    addr.to_string()
}

/// A remoting server stand-in on 127.0.0.1: every request on every connection is answered with
/// what `answer` makes of it (its opaque set here, and empty extFields unless `answer` gives
/// some). Returns its address.
pub fn stand_in(answer: impl Fn(&RemotingCommand) -> RemotingCommand + Send + Sync + 'static) -> String {
    stand_in_raw(move |req| {
        let mut reply = answer(req);
        reply.opaque = req.opaque;
        reply.ext_fields.get_or_insert_with(ExtFields::new);
        let mut out = BytesMut::new();
        encode_frame(&reply, &mut out).expect("encode");
        out.to_vec()
    })
}

/// A remoting server stand-in on 127.0.0.1 that writes, for every request, the bytes `answer`
/// makes of it, as they are (a frame cut short, a length field announcing more than follows),
/// and keeps the connection open until the client closes it. Returns its address.
pub fn stand_in_raw(answer: impl Fn(&RemotingCommand) -> Vec<u8> + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let answer = answer.clone();
            // A connection of its own thread: one left open by a cut-short answer blocks no other.
            std::thread::spawn(move || {
                let (mut codec, mut buf) = (RemotingCodec::default(), BytesMut::new());
                let mut chunk = [0u8; 65536];
                while let Ok(n @ 1..) = stream.read(&mut chunk) {
                    buf.extend_from_slice(&chunk[..n]);
                    while let Ok(Some(req)) = codec.decode(&mut buf) {
                        let _ = stream.write_all(&answer(&req));
                    }
                }
            });
        }
    });
    addr
}
