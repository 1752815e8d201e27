//! The frame decoder's tests: budgets, shares, deadlines' clocks, sniffing, the route lane.

use super::*;
use crate::peers::{Holding, Kind, Shares};
use crate::protocol::codec::encode_frame;
use crate::protocol::json::JsonStyle;
use crate::protocol::ExtFields;

fn frame(body: usize) -> BytesMut {
    let cmd = RemotingCommand::request(105, Some(ExtFields::new().with("topic", "T"))).with_body(vec![b'x'; body]);
    let mut out = BytesMut::new();
    encode_frame(&cmd, &mut out).unwrap();
    out
}

#[test]
fn large_frames_hold_what_arrived_of_them_until_handled_and_small_ones_never_need_it() {
    let budget = FrameBudget::new(Kind::Frames, 300 * 1024, Shares::NONE);
    let since = Rc::new(Cell::new(None));
    let mut a = AdmittedCodec::new(RemotingCodec::new(1 << 24), budget.clone(), since.clone(), Counter::default());
    let big = frame(200 * 1024);
    let mut partial = BytesMut::from(&big[..1000]);
    assert!(a.decode(&mut partial).unwrap().is_none());
    assert_eq!(budget.held(), 1000, "charged as bytes arrive, not as the prefix announces");
    assert!(since.get().is_some(), "a frame is being received");
    partial.extend_from_slice(&big[1000..150 * 1024]);
    assert!(a.decode(&mut partial).unwrap().is_none());
    assert_eq!(budget.held(), 150 * 1024);

    let mut b = AdmittedCodec::new(RemotingCodec::new(1 << 24), budget.clone(), Rc::default(), Counter::default());
    let mut other = BytesMut::from(&big[..]);
    let err = b.decode(&mut other).unwrap_err();
    assert!(matches!(err, FrameError::BudgetExhausted { .. }), "{err}");
    let small = frame(10);
    assert!(b.decode(&mut small.clone()).unwrap().is_some(), "small frames pass while the budget is spent");

    partial.extend_from_slice(&big[150 * 1024..]);
    let complete = a.decode(&mut partial).unwrap().unwrap();
    assert_eq!((budget.held(), since.get()), (big.len(), None), "held until the request is handled");
    drop(complete);
    assert_eq!(budget.held(), 0);
    drop(a);
    let mut c = AdmittedCodec::new(RemotingCodec::new(1 << 24), budget.clone(), Rc::default(), Counter::default());
    assert!(c.decode(&mut BytesMut::from(&big[..100 * 1024])).unwrap().is_none());
    drop(c);
    assert_eq!(budget.held(), 0, "a dropped connection returns what it held");
}

#[test]
fn length_prefixes_alone_hold_nothing_and_one_address_holds_at_most_its_share() {
    let shares = Shares { peer_percent: 25, broker_reserve_percent: 20 };
    let budget = FrameBudget::new(Kind::Frames, 1 << 20, shares);
    let attacker = Arc::new(Holding::default());
    let codec = |holding: &Arc<Holding>| {
        AdmittedCodec::new(RemotingCodec::new(1 << 24), budget.clone(), Rc::default(), Counter::default())
            .drawing_on(Rc::new(Share::new(holding.clone())))
    };
    let mut prefixes: Vec<_> = (0..64).map(|_| codec(&attacker)).collect();
    for c in &mut prefixes {
        let mut prefix = BytesMut::from(&((16u32 << 20) - 8).to_be_bytes()[..]);
        prefix.extend_from_slice(&[0, 0, 0, 20]);
        assert!(c.decode(&mut prefix).unwrap().is_none());
    }
    assert_eq!(budget.held(), 64 * 8, "eight bytes each, not 16 MiB");
    let big = frame(200 * 1024);
    let mut first = codec(&attacker);
    assert!(first.decode(&mut BytesMut::from(&big[..200 * 1024])).unwrap().is_none());
    let err = codec(&attacker).decode(&mut BytesMut::from(&big[..100 * 1024])).unwrap_err();
    assert!(matches!(err, FrameError::BudgetExhausted { over: OverShare::Peer { .. }, .. }), "{err}");
    let honest = Arc::new(Holding::default());
    let mut other = codec(&honest);
    assert!(other.decode(&mut big.clone()).unwrap().is_some(), "another address has room");
}

#[test]
fn a_complete_large_frame_holds_the_budget_against_the_frames_pipelined_behind_it() {
    let budget = FrameBudget::new(Kind::Frames, 300 * 1024, Shares::NONE);
    let mut codec = AdmittedCodec::new(RemotingCodec::new(1 << 24), budget.clone(), Rc::default(), Counter::default());
    let big = frame(200 * 1024);
    let mut src = big.clone();
    src.extend_from_slice(&big);
    let waiting = codec.decode(&mut src).unwrap().unwrap();
    let err = codec.decode(&mut src).unwrap_err();
    assert!(matches!(err, FrameError::BudgetExhausted { .. }), "{err}");
    drop(waiting);
    assert_eq!(budget.held(), 0);
}

#[test]
fn the_read_buffer_lets_go_of_a_large_frame() {
    let budget = FrameBudget::new(Kind::Frames, 1 << 24, Shares::NONE);
    let mut codec =
        AdmittedCodec::new(RemotingCodec::new(1 << 24), budget, Rc::new(Cell::new(None)), Counter::default());
    let mut src = frame(2 << 20);
    let next = frame(10);
    src.extend_from_slice(&next[..20]);
    let Admitted::Request { request: big, .. } = codec.decode(&mut src).unwrap().unwrap() else { panic!("a request") };
    assert_eq!(&src[..], &next[..20], "what follows the frame is kept");
    assert!(src.capacity() < 4096, "capacity {} still spans the large frame", src.capacity());
    drop(big);
    src.extend_from_slice(&next[20..]);
    assert!(codec.decode(&mut src).unwrap().is_some());
}

#[test]
fn a_first_frame_that_is_a_tls_hello_or_an_http_request_is_named_and_later_frames_are_not_sniffed() {
    let codec = || {
        AdmittedCodec::new(
            RemotingCodec::new(1 << 24),
            FrameBudget::new(Kind::Frames, 1 << 20, Shares::NONE),
            Rc::default(),
            Counter::default(),
        )
    };
    let hello = [0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00];
    let err = codec().decode(&mut BytesMut::from(&hello[..])).unwrap_err();
    assert_eq!(err.to_string(), "looks like a TLS ClientHello; TLS is disabled on this port");
    let err = codec().decode(&mut BytesMut::from(&b"GET /metrics HTTP/1.1\r\n"[..])).unwrap_err();
    assert!(matches!(err, FrameError::Foreign(Foreign::Http)), "{err}");
    assert!(codec().decode(&mut BytesMut::from(&b"GE"[..])).unwrap().is_none(), "too short to tell yet");
    let mut c = codec();
    assert!(c.decode(&mut frame(10)).unwrap().is_some());
    let err = c.decode(&mut BytesMut::from(&hello[..])).unwrap_err();
    assert!(matches!(err, FrameError::Codec(_)), "after a good frame only the codec judges: {err}");
}

fn route_frame(topic: &str, opaque: i32, version: i32) -> BytesMut {
    let cmd = RemotingCommand {
        opaque,
        version,
        ..RemotingCommand::request(105, Some(ExtFields::new().with("topic", topic)))
    };
    let mut out = BytesMut::new();
    encode_frame(&cmd, &mut out).unwrap();
    out
}

#[test]
fn with_the_route_lane_plain_route_queries_are_read_as_routes_and_the_rest_as_requests() {
    let counted = Counter::default();
    let new = || {
        AdmittedCodec::new(
            RemotingCodec::new(1 << 24),
            FrameBudget::new(Kind::Frames, 1 << 20, Shares::NONE),
            Rc::default(),
            counted.clone(),
        )
    };
    let mut src = route_frame("T", 7, 479);
    src.extend_from_slice(&route_frame("U", 8, 317));
    src.extend_from_slice(&frame(10));
    let total = src.len();
    let mut lane = new().with_route_frames();
    let routes: Vec<_> = (0..2).map(|_| lane.decode(&mut src).unwrap().unwrap()).collect();
    let [Admitted::Route(first), Admitted::Route(second)] = &routes[..] else { panic!("two routes: {routes:?}") };
    assert_eq!((first.topic.as_str(), first.opaque, first.style), ("T", 7, JsonStyle::Standard));
    assert_eq!((second.topic.as_str(), second.opaque, second.style), ("U", 8, JsonStyle::Fastjson));
    assert_eq!(first.read_at, second.read_at, "frames of one read share its time");
    let with_body = lane.decode(&mut src).unwrap().unwrap();
    assert!(matches!(with_body, Admitted::Request { .. }), "a route query with a body goes the general way");
    assert_eq!(counted.get(), total as u64, "every frame's bytes counted");
    let mut plain = route_frame("T", 7, 479);
    assert!(matches!(new().decode(&mut plain).unwrap().unwrap(), Admitted::Request { .. }), "no lane: requests");
}

#[test]
fn the_next_read_gets_room_once_frames_are_split_off() {
    let mut codec = AdmittedCodec::new(
        RemotingCodec::new(1 << 24),
        FrameBudget::new(Kind::Frames, 1 << 20, Shares::NONE),
        Rc::default(),
        Counter::default(),
    );
    let mut src = BytesMut::with_capacity(2048);
    while src.len() + 200 < 2048 {
        src.extend_from_slice(&route_frame("some-topic-name", 1, 479));
    }
    src.extend_from_slice(&route_frame("some-topic-name", 1, 479)[..20]);
    while let Some(admitted) = codec.decode(&mut src).unwrap() {
        drop(admitted);
    }
    assert_eq!(src.len(), 20, "the partial frame is kept");
    assert!(src.capacity() - src.len() >= READ_ROOM_BYTES, "room {}", src.capacity() - src.len());
}
