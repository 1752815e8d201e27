//! Admission of incoming frames: a process-wide budget of bytes held in partly received large
//! frames, shared fairly (`peers::budget`), and when bytes arrive (for the receive deadlines).
//!
//! A frame above `SMALL_FRAME_BYTES` is charged to the budget as its bytes arrive — never by
//! the length its prefix announces, which costs a peer nothing — and holds what it was charged
//! until its request has been handled (a register body waiting for the decode pool is still in
//! memory). When the bytes would take its address past its share, its connection is closed
//! (never unbounded growth, and nobody else's room). Frames up to that size are never held up.
//!
//! A connection whose first bytes are plainly another protocol (a TLS ClientHello, an HTTP
//! request) is refused by name instead of as a frame too large.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Buf, BytesMut};
use thiserror::Error;
use tokio_util::codec::Decoder;

use prometheus_client::metrics::counter::Counter;

use crate::peers::{ByteBudget, OverShare, Share};
use crate::protocol::codec::announced_frame_bytes;
use crate::protocol::sniff::{foreign_protocol, Foreign};
use crate::protocol::{CodecError, RemotingCodec, RemotingCommand};
use crate::service::RouteFrame;

/// Frames up to this size never need the budget.
pub const SMALL_FRAME_BYTES: usize = 64 * 1024;

/// Room the next read gets at least. Frames are split off the front of the read buffer, so
/// its spare room shrinks with each; without this, a pipelined batch would be read a few
/// hundred bytes (and one system call) at a time, plus one more read that finds nothing.
const READ_ROOM_BYTES: usize = 1024;

/// The process-wide budget of bytes held in large frames being received or waiting to be handled.
pub type FrameBudget = ByteBudget;

/// Bytes of the budget a complete large frame holds until its request has been handled;
/// given back when dropped.
#[derive(Debug)]
pub struct FrameReservation {
    budget: Arc<FrameBudget>,
    share: Rc<Share>,
    bytes: usize,
}

impl Drop for FrameReservation {
    fn drop(&mut self) {
        self.budget.release(&self.share, self.bytes);
    }
}

/// A complete frame, as its connection takes it.
#[derive(Debug)]
pub enum Admitted {
    /// A request read at `read_at`, with the budget its frame holds (`None` for small frames),
    /// dropped once the request has been handled.
    Request { request: RemotingCommand, reservation: Option<FrameReservation>, read_at: Instant },
    /// A plain route query read straight off its frame (only where the codec was told route
    /// frames are open: where access control does not check route queries).
    Route(RouteFrame),
}

/// Why a connection's incoming frames cannot be read any more.
#[derive(Debug, Error)]
pub enum FrameError {
    /// The frame itself is malformed or too large.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// Reading the socket failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The frame's bytes do not fit the budget of large frames within the shares.
    #[error("frame budget: a {frame}-byte frame does not fit: {over}")]
    BudgetExhausted { frame: usize, over: OverShare },
    /// The connection does not speak RocketMQ remoting at all.
    #[error("{0}")]
    Foreign(Foreign),
}

/// The server's decoder: the remoting codec, admitting large frames against the budget and
/// noting when the frame being received started.
pub struct AdmittedCodec {
    codec: RemotingCodec,
    budget: Arc<FrameBudget>,
    /// What this connection draws on of the budget.
    share: Rc<Share>,
    /// Bytes this connection holds of the budget (its current large frame).
    reserved: usize,
    /// When the frame being received started; `None` between frames.
    receiving_since: Rc<Cell<Option<Instant>>>,
    /// Counts the bytes of complete frames, when metrics are on.
    received: Counter,
    /// No frame decoded yet: the first bytes are checked for other protocols.
    first: bool,
    /// Plain route queries are read as [`Admitted::Route`].
    route_frames: bool,
    /// When the frames now in the buffer were read: taken at the first frame decoded after a
    /// read, shared by the frames that read brought (one clock read per read, not per frame).
    read_at: Option<Instant>,
    /// When the last byte arrived, shared with the connection's deadlines (when watched).
    last_byte: Option<Rc<Cell<Option<Instant>>>>,
    /// Bytes in the buffer after the last decode: more at the next one means bytes arrived.
    seen: usize,
}

impl AdmittedCodec {
    /// A decoder under `budget`; `receiving_since` is shared with the connection's timer.
    pub fn new(
        codec: RemotingCodec,
        budget: Arc<FrameBudget>,
        receiving_since: Rc<Cell<Option<Instant>>>,
        received: Counter,
    ) -> Self {
        AdmittedCodec {
            codec,
            budget,
            share: Rc::new(Share::new(Arc::default())),
            reserved: 0,
            receiving_since,
            received,
            first: true,
            route_frames: false,
            read_at: None,
            last_byte: None,
            seen: 0,
        }
    }

    /// This decoder, reading plain route queries as [`Admitted::Route`] (only where access
    /// control does not need the whole request of one).
    pub fn with_route_frames(mut self) -> Self {
        self.route_frames = true;
        self
    }

    /// This decoder, charging its frames to `share` (a fresh address's share until told).
    pub fn drawing_on(mut self, share: Rc<Share>) -> Self {
        self.share = share;
        self
    }

    /// This decoder, noting in `last_byte` when bytes arrive.
    pub fn watching_bytes(mut self, last_byte: Rc<Cell<Option<Instant>>>) -> Self {
        self.last_byte = Some(last_byte);
        self
    }

    /// When the frames now in the buffer were read.
    fn read_at(&mut self) -> Instant {
        *self.read_at.get_or_insert_with(Instant::now)
    }

    /// The plain route query at the front of `src`, taken off it.
    fn route(&mut self, src: &mut BytesMut) -> Option<RouteFrame> {
        let (header, size) = self.codec.peek_route(src).filter(|(_, size)| *size <= SMALL_FRAME_BYTES)?;
        let style = header.body_style();
        let read_at = self.read_at();
        let frame = RouteFrame { read_at, opaque: header.opaque, topic: header.topic.into(), style };
        src.advance(size);
        self.received.inc_by(size as u64);
        self.receiving_since.set(None);
        Some(frame)
    }

    fn release(&mut self) {
        if self.reserved > 0 {
            self.budget.release(&self.share, self.reserved);
            self.reserved = 0;
        }
    }

    /// Charges the frame of `frame` bytes with `have` of them here: what arrived since the
    /// last charge.
    fn charge(&mut self, frame: usize, have: usize) -> Result<(), FrameError> {
        if have <= self.reserved {
            return Ok(());
        }
        self.budget
            .try_reserve(&self.share, have - self.reserved)
            .map_err(|over| FrameError::BudgetExhausted { frame, over })?;
        self.reserved = have;
        Ok(())
    }

    /// What this connection holds of the budget, handed over to its complete frame.
    fn hand_over(&mut self) -> Option<FrameReservation> {
        let bytes = std::mem::take(&mut self.reserved);
        (bytes > 0).then(|| FrameReservation { budget: self.budget.clone(), share: self.share.clone(), bytes })
    }
}

impl Decoder for AdmittedCodec {
    type Item = Admitted;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Admitted>, FrameError> {
        if src.len() > self.seen && self.last_byte.is_some() {
            let now = self.read_at();
            if let Some(last_byte) = &self.last_byte {
                last_byte.set(Some(now));
            }
        }
        let decoded = self.decode_frame(src);
        self.seen = src.len();
        decoded
    }
}

impl AdmittedCodec {
    /// The next frame in `src`, if whole (see [`Decoder::decode`]).
    fn decode_frame(&mut self, src: &mut BytesMut) -> Result<Option<Admitted>, FrameError> {
        if self.first && src.len() >= 4 {
            // A first frame of several hundred megabytes is no RocketMQ peer; say what it is.
            if let Some(foreign) = foreign_protocol(src) {
                return Err(FrameError::Foreign(foreign));
            }
            self.first = false;
        }
        if self.route_frames && self.reserved == 0 {
            if let Some(route) = self.route(src) {
                return Ok(Some(Admitted::Route(route)));
            }
        }
        let buffered = src.len();
        if let Some(cmd) = self.codec.decode(src)? {
            let size = buffered - src.len();
            self.received.inc_by(size as u64);
            if size > SMALL_FRAME_BYTES {
                // What arrived with the last read is charged now, as it would have been while arriving.
                self.charge(size, size)?;
            }
            if size > SMALL_FRAME_BYTES {
                // The read buffer grew to hold a large frame; without this it would keep that
                // allocation (and its resident pages) for the rest of the connection.
                *src = BytesMut::from(&src[..]);
            }
            let reservation = self.hand_over();
            // What follows in the buffer is decoded next: if it is not whole, that decode
            // starts its clock (no clock read per frame of a pipelined batch).
            self.receiving_since.set(None);
            return Ok(Some(Admitted::Request { request: cmd, reservation, read_at: self.read_at() }));
        }
        // The next frame comes with the next read.
        self.read_at = None;
        if src.capacity() - src.len() < READ_ROOM_BYTES {
            // Once the frames read are dropped this takes back the room they used, in place.
            src.reserve(READ_ROOM_BYTES);
        }
        if src.is_empty() {
            return Ok(None);
        }
        if self.receiving_since.get().is_none() {
            self.receiving_since.set(Some(Instant::now()));
        }
        let announced = announced_frame_bytes(src).unwrap_or(0);
        if announced > SMALL_FRAME_BYTES {
            // Only the bytes that arrived: a prefix announcing 16 MiB costs its sender 4 bytes.
            self.charge(announced, src.len().min(announced))?;
        }
        Ok(None)
    }
}

impl Drop for AdmittedCodec {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    // The frame decoder's tests: budgets, shares, deadlines' clocks, sniffing, the route lane.
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
        let mut codec =
            AdmittedCodec::new(RemotingCodec::new(1 << 24), budget.clone(), Rc::default(), Counter::default());
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
        let Admitted::Request { request: big, .. } = codec.decode(&mut src).unwrap().unwrap() else {
            panic!("a request")
        };
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
}
