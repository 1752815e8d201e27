//! Memory a few hostile connections can make the real binary hold, measured as its peak
//! resident memory (`VmHWM`): complete large frames waiting for the decode pool count against
//! `frame_budget_bytes`, and replies waiting to be written against `write_buffer_max_bytes` and
//! `reply_budget_bytes`, while another connection's route queries keep being answered.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::common::checks::assert_success;
use crate::common::kv_config::put_kv;
use crate::common::process::{namesrv_command, Proc};
use crate::common::*;
use bytes::BytesMut;
use namesrv::protocol::codec::encode_frame;
use namesrv::protocol::{ExtFields, RemotingCommand};

const MIB: u64 = 1024 * 1024;

/// The real binary on 127.0.0.1 with `settings` (`NAMESRV_<KEY>`, value) added.
fn spawn(settings: &[(&str, String)]) -> (Proc, SocketAddr) {
    let mut cmd = namesrv_command(&temp_dir());
    cmd.env("NAMESRV_BIND_ADDRESS", "127.0.0.1").env("NAMESRV_LISTEN_PORT", "0");
    for (key, value) in settings {
        cmd.env(key, value);
    }
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    (proc, addr)
}

/// `frame` written `times` over `connections` connections at once, never reading; each
/// connection stops at its first failed write (the server closed it).
fn pipeline(addr: SocketAddr, frame: &[u8], connections: usize, times: usize) -> Vec<TcpStream> {
    let frame = std::sync::Arc::new(frame.to_vec());
    let senders: Vec<_> = (0..connections)
        .map(|_| {
            let frame = frame.clone();
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(addr).unwrap();
                for _ in 0..times {
                    if stream.write_all(&frame).is_err() {
                        break;
                    }
                }
                stream
            })
        })
        .collect();
    senders.into_iter().map(|s| s.join().unwrap()).collect()
}

fn encoded(cmd: &RemotingCommand) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode_frame(cmd, &mut out).unwrap();
    out.to_vec()
}

#[test]
fn large_frames_waiting_for_the_decode_pool_stay_within_the_frame_budget() {
    let budget = 32 * MIB;
    let (proc, addr) = spawn(&[("NAMESRV_FRAME_BUDGET_BYTES", budget.to_string())]);
    let mut probe = Client::connect(addr);
    assert_success(&probe.register(&Broker::new("c", "probe", 0, "127.0.0.1:1").topics(&["Probe", "Probe2"])));
    // An 8 MB registration: many topics with long names, each body slow to decode.
    let names: Vec<String> = (0..25_000).map(|i| format!("T{i:0>100}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let frame = encoded(&Broker::new("c", "big", 0, "127.0.0.1:2").topics(&names).register_request());
    assert!(frame.len() > 7 * MIB as usize, "{} bytes", frame.len());
    let before = proc.peak_rss_bytes();
    let started = Instant::now();
    // Two connections, 40 pipelined registrations each: 640 MB on the wire.
    let attack = std::thread::spawn(move || pipeline(addr, &frame, 2, 40));
    let mut worst = std::time::Duration::ZERO;
    while !attack.is_finished() {
        let asked = Instant::now();
        assert!(probe.route("Probe").is_ok(), "route queries are answered during the attack");
        worst = worst.max(asked.elapsed());
    }
    drop(attack.join().unwrap());
    let peak = proc.peak_rss_bytes();
    eprintln!(
        "peak rss {} MiB (before {} MiB), worst route {worst:?}, attack {:?}",
        peak / MIB,
        before / MIB,
        started.elapsed()
    );
    assert!(peak < before + budget + 160 * MIB, "peak rss {} MiB with a {} MiB frame budget", peak / MIB, budget / MIB);
    assert!(probe.route("Probe").is_ok());
}

#[test]
fn unread_large_replies_stay_within_the_reply_budget_and_other_connections_are_served() {
    let budget = 32 * MIB;
    let (proc, addr) = spawn(&[
        ("NAMESRV_REPLY_BUDGET_BYTES", budget.to_string()),
        ("NAMESRV_WRITE_BUFFER_MAX_BYTES", (16 * MIB).to_string()),
    ]);
    let mut probe = Client::connect(addr);
    assert_success(&probe.register(&Broker::new("c", "probe", 0, "127.0.0.1:1").topics(&["Probe", "Probe2"])));
    // An 8 MiB namespace: every GET_KVLIST_BY_NAMESPACE of it answers 8 MiB.
    let value = "v".repeat(1024 * 1024 - 64);
    for key in 0..8 {
        assert_success(&put_kv(&mut probe, "big", &format!("k{key}"), &value));
    }
    let ext = ExtFields::new().with("namespace", "big");
    let frame = encoded(&RemotingCommand::request(219, Some(ext)));
    let before = proc.peak_rss_bytes();
    // Three connections, 40 pipelined requests each, none of whose replies is ever read.
    let attackers = pipeline(addr, &frame.repeat(40), 3, 1);
    let mut worst = Duration::ZERO;
    let closed = |p: &Proc| p.stderr().matches("closing connection: reply budget exhausted").count();
    let deadline = Instant::now() + Duration::from_secs(30);
    while closed(&proc) < attackers.len() && Instant::now() < deadline {
        let asked = Instant::now();
        assert!(probe.route("Probe").is_ok(), "route queries are answered during the attack");
        worst = worst.max(asked.elapsed());
    }
    let peak = proc.peak_rss_bytes();
    eprintln!("peak rss {} MiB (before {} MiB), worst route {worst:?}", peak / MIB, before / MIB);
    assert!(peak < before + budget + 160 * MIB, "peak rss {} MiB with a {} MiB reply budget", peak / MIB, budget / MIB);
    assert_eq!(closed(&proc), attackers.len(), "each attacker closed once its replies pile up");
    assert!(probe.route("Probe").is_ok());
}
