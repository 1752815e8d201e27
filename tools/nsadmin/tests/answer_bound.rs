//! `--max-answer-bytes`: an answer larger than the bound is refused as soon as its length field
//! arrives, with an error naming its size, the server and the flag, before any of its body is
//! waited for; an answer of exactly the bound is read; without the flag the bound is 64 MiB.

mod common;

use std::time::{Duration, Instant};

use bytes::BytesMut;
use common::*;
use namesrv::protocol::codec::encode_frame;
use namesrv::protocol::{ExtFields, RemotingCommand, ResponseCode};

const MIB: usize = 1024 * 1024;

/// A topic-list answer to `req` of exactly `total` bytes, length field included: topic `T1` and
/// one long name that pads it.
fn topic_list_frame(req: &RemotingCommand, total: usize) -> Vec<u8> {
    let frame = |pad: usize| {
        let body = format!(r#"{{"topicList":["T1","{}"]}}"#, "x".repeat(pad));
        let mut reply = RemotingCommand::response(ResponseCode::Success, None).with_body(body.into_bytes());
        reply.opaque = req.opaque;
        reply.ext_fields = Some(ExtFields::new());
        let mut out = BytesMut::new();
        encode_frame(&reply, &mut out).expect("encode");
        out.to_vec()
    };
    let frame = frame(total - frame(0).len());
    assert_eq!(frame.len(), total);
    frame
}

#[test]
fn an_answer_over_the_bound_is_refused_from_its_length_field_without_waiting_for_its_body() {
    // The stand-in announces 2 MiB and sends 1 KiB of it, then nothing: reading on for the body
    // would end in the 20 s timeout instead.
    let addr = stand_in_raw(|req| topic_list_frame(req, 2 * MIB)[..1024].to_vec());
    let started = Instant::now();
    let out = nsadmin(&["topicList", "-n", &addr, "--max-answer-bytes", "1048576", "--timeout-ms", "20000"]);
    let elapsed = started.elapsed();
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let expected = format!("answer of 2097152 bytes from {addr} is over --max-answer-bytes 1048576");
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
    assert!(elapsed < Duration::from_secs(10), "refused at once, not after the timeout: {elapsed:?}");
    let json = nsadmin(&["topicList", "--json", "-n", &addr, "--max-answer-bytes", "1048576"]);
    let error: serde_json::Value = serde_json::from_str(stdout(&json).trim()).expect("json");
    assert!(error["error"].as_str().is_some_and(|e| e.contains(&expected)), "{error}");
}

#[test]
fn an_answer_of_exactly_the_bound_is_read_and_a_bound_one_byte_smaller_refuses_it() {
    let addr = stand_in_raw(|req| topic_list_frame(req, MIB));
    let text = expect_exit(&nsadmin(&["topicList", "-n", &addr, "--max-answer-bytes", "1048576"]), 0);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "two topics");
    assert_eq!(lines[0], "T1");
    assert!(lines[1].len() > MIB - 200 && lines[1].bytes().all(|b| b == b'x'), "the long name whole");
    let out = nsadmin(&["topicList", "-n", &addr, "--max-answer-bytes", "1048575"]);
    assert_eq!(code(&out), 1);
    let expected = format!("answer of 1048576 bytes from {addr} is over --max-answer-bytes 1048575");
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
}

#[test]
fn without_the_flag_the_bound_is_64_mib_for_namesrvs_and_controllers_alike() {
    // A length field announcing 64 MiB + 1, and nothing more.
    let announced = u32::try_from(64 * MIB + 1 - 4).expect("fits");
    let addr = stand_in_raw(move |_| announced.to_be_bytes().to_vec());
    let expected = format!("answer of 67108865 bytes from {addr} is over --max-answer-bytes 67108864");
    for args in [&["clusterList", "-n", &addr][..], &["getControllerMetaData", "-a", &addr][..]] {
        let out = nsadmin(args);
        assert_eq!(code(&out), 1, "{args:?}");
        assert!(stderr(&out).contains(&expected), "{args:?}: {}", stderr(&out));
    }
    let tiny = nsadmin(&["topicList", "-n", &addr, "--max-answer-bytes", "100"]);
    assert_eq!(code(&tiny), 2, "a bound under 1 KiB is a usage error: {}", stderr(&tiny));
}
