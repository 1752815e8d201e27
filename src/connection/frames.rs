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

use crate::dispatch::route::RouteFrame;
use crate::peers::{ByteBudget, OverShare, Share};
use crate::protocol::codec::announced_frame_bytes;
use crate::protocol::sniff::{foreign_protocol, Foreign};
use crate::protocol::{CodecError, RemotingCodec, RemotingCommand};

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
#[path = "frames_tests.rs"]
mod tests;
