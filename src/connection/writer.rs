//! The writing half of a connection: replies are framed straight into one outgoing buffer, in
//! completion order, and a writer task writes what is queued with one system call (a plain send,
//! or a vectored write when shared bodies sit between frames), so a busy connection writes many
//! replies per call and allocates nothing per reply. A large found route's body is not copied:
//! the buffer holds its frame's head, and the body shared by its batch is written from where the
//! registry put it. Each written byte is counted off the connection's flow.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::rc::Rc;
use std::task::{Poll, Waker};

use bytes::BytesMut;
use prometheus_client::metrics::counter::Counter;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::flow::Flow;
use crate::protocol::codec::encode_frame;
use crate::protocol::reply::template::ReplyTemplate;
use crate::protocol::{CodecError, RemotingCommand};
use crate::registry::route_answer::SharedBody;

/// Buffers larger than this are not kept for reuse once written (one huge reply must not pin
/// its memory for the life of the connection).
const KEPT_BYTES: usize = 256 * 1024;

/// Bodies shorter than this are copied. Each slice of a vectored write costs the kernel a copy of
/// its own; for a route of a few kilobytes that costs more than copying the body into the buffer
/// (a 1.8 KB route body copied served some 5% more queries on one core than written from a slice
/// of its own).
const SHARED_MIN_BYTES: usize = 16 * 1024;

/// Most slices one write hands the kernel (two per reply with a shared body).
const MAX_SLICES: usize = 64;

/// What the connection and its writer share.
#[derive(Debug, Default)]
struct Outgoing {
    queue: RefCell<Queue>,
    writer: RefCell<Option<Waker>>,
    closed: Cell<bool>,
}

/// Replies waiting to be written: frames copied into `buffer`, and shared bodies, each to be
/// written after a prefix of the buffer.
#[derive(Debug, Default)]
struct Queue {
    buffer: BytesMut,
    /// Shared bodies in order, each with the length of the buffer that goes before it.
    shared: VecDeque<(usize, SharedBody)>,
    /// Bytes of `buffer` written.
    buffer_written: usize,
    /// Bytes of the first shared body written.
    body_written: usize,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.buffer_written == self.buffer.len() && self.shared.is_empty()
    }

    /// Puts what is left to write, in order, into `slices` (as much as fits); returns how
    /// many slices it filled.
    fn fill<'a>(&'a self, slices: &mut [IoSlice<'a>]) -> usize {
        let (mut at, mut body_from) = (self.buffer_written, self.body_written);
        let tail_from = self.shared.back().map_or(at, |(before, _)| *before);
        let replies = self.shared.iter().flat_map(|(before, body)| {
            let pieces = [&self.buffer[at..*before], &body.bytes()[body_from..]];
            (at, body_from) = (*before, 0);
            pieces
        });
        let pieces = replies.chain([&self.buffer[tail_from..]]).filter(|piece| !piece.is_empty());
        let mut count = 0;
        for (slice, piece) in slices.iter_mut().zip(pieces) {
            *slice = IoSlice::new(piece);
            count += 1;
        }
        count
    }

    /// Counts `n` more bytes written, in the order [`Queue::fill`] gave them.
    fn advance(&mut self, mut n: usize) {
        while n > 0 {
            let Some((before, body)) = self.shared.front() else {
                self.buffer_written += n;
                break;
            };
            let from_buffer = (before - self.buffer_written).min(n);
            self.buffer_written += from_buffer;
            n -= from_buffer;
            let from_body = (body.bytes().len() - self.body_written).min(n);
            self.body_written += from_body;
            n -= from_body;
            if self.body_written == body.bytes().len() {
                self.shared.pop_front();
                self.body_written = 0;
            }
        }
        if self.is_empty() {
            self.buffer_written = 0;
            if self.buffer.capacity() > KEPT_BYTES {
                self.buffer = BytesMut::new();
            } else {
                self.buffer.clear();
            }
        }
    }
}

/// Where a connection queues its replies; dropping it lets the writer finish.
pub struct Outbox {
    outgoing: Rc<Outgoing>,
    flow: Rc<Flow>,
}

/// The writer's end.
pub struct WriteQueue {
    outgoing: Rc<Outgoing>,
}

impl Outbox {
    /// An outbox and the end its writer drains.
    pub fn new(flow: Rc<Flow>) -> (Self, WriteQueue) {
        // Buffers start empty and grow to what the connection's replies need: an idle client
        // connection holds no more than its last batch of replies.
        let outgoing = Rc::new(Outgoing::default());
        (Outbox { outgoing: outgoing.clone(), flow }, WriteQueue { outgoing })
    }

    /// Encodes one reply onto the outgoing buffer; returns its size.
    pub fn send(&self, cmd: &RemotingCommand) -> Result<usize, CodecError> {
        let len = {
            let mut queue = self.outgoing.queue.borrow_mut();
            let before = queue.buffer.len();
            encode_frame(cmd, &mut queue.buffer)?;
            queue.buffer.len() - before
        };
        self.queued(len);
        Ok(len)
    }

    /// Frames one reply from `template` with a shared `body` (not copied unless small);
    /// returns its size.
    pub fn send_shared(&self, template: &ReplyTemplate, opaque: i32, body: &SharedBody) -> usize {
        let len = {
            let mut queue = self.outgoing.queue.borrow_mut();
            let before = queue.buffer.len();
            if body.bytes().len() < SHARED_MIN_BYTES {
                template.put_frame(opaque, body.bytes(), &mut queue.buffer);
                queue.buffer.len() - before
            } else {
                template.put_head(opaque, body.bytes().len(), &mut queue.buffer);
                let head_end = queue.buffer.len();
                queue.shared.push_back((head_end, body.clone()));
                head_end - before + body.bytes().len()
            }
        };
        self.queued(len);
        len
    }

    /// Counts `len` more bytes queued and wakes the writer.
    fn queued(&self, len: usize) {
        self.flow.queued(len);
        if let Some(waker) = self.outgoing.writer.borrow_mut().take() {
            waker.wake();
        }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.outgoing.closed.set(true);
        if let Some(waker) = self.outgoing.writer.borrow_mut().take() {
            waker.wake();
        }
    }
}

impl WriteQueue {
    /// Writes some of what is queued to `io`; ready with the bytes written, or with `Ok(0)`
    /// once the outbox is dropped and everything is written.
    fn poll_write<W: AsyncWrite + Unpin>(
        &self,
        io: &mut W,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<io::Result<usize>> {
        let mut queue = self.outgoing.queue.borrow_mut();
        if queue.is_empty() {
            if self.outgoing.closed.get() {
                return Poll::Ready(Ok(0));
            }
            let mut writer = self.outgoing.writer.borrow_mut();
            if !writer.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *writer = Some(cx.waker().clone());
            }
            return Poll::Pending;
        }
        let mut slices = [IoSlice::new(&[]); MAX_SLICES];
        let count = queue.fill(&mut slices);
        // One slice (the usual case: every reply copied into the buffer) goes as a plain send:
        // on a socket, writev costs the kernel its vectored-file path on top (some 2% of a core
        // under the limit's route load).
        let io = std::pin::Pin::new(io);
        let n = std::task::ready!(match count {
            1 => io.poll_write(cx, &slices[0]),
            _ => io.poll_write_vectored(cx, &slices[..count]),
        })?;
        if n == 0 {
            return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        queue.advance(n);
        Poll::Ready(Ok(n))
    }
}

/// Writes queued replies until the outbox is dropped and everything is written, then shuts
/// the socket down. Returns the bytes written.
pub async fn write_frames<W: AsyncWrite + Unpin>(
    mut io: W,
    queued: WriteQueue,
    flow: Rc<Flow>,
    sent: Counter,
) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        let n = poll_fn(|cx| queued.poll_write(&mut io, cx)).await?;
        if n == 0 {
            break;
        }
        flow.written(n);
        sent.inc_by(n as u64);
        total += n as u64;
    }
    io.shutdown().await?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::flow::{FlowLimits, ReplyBudget};
    use crate::peers::{Kind, Share, Shares};
    use crate::registry::route_answer::{RouteAnswer, RouteAnswers};
    use std::pin::Pin;
    use std::task::Context;
    use tokio::io::AsyncReadExt;

    /// A flow with room for every test's replies.
    fn roomy_flow() -> Rc<Flow> {
        let limits = FlowLimits { high_bytes: 1 << 20, low_bytes: 0, max_in_flight: 64, max_bytes: 1 << 20 };
        let budget = ReplyBudget::new(Kind::Replies, 1 << 20, Shares::NONE);
        Flow::new(limits, budget, Rc::new(Share::new(std::sync::Arc::default())))
    }

    /// Replies queued while a write is only partly done follow it in order, and every byte is
    /// counted off the flow once written.
    #[test]
    fn replies_queued_during_partial_writes_arrive_whole_and_in_order() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(tokio::task::LocalSet::new().run_until(async {
            let flow = roomy_flow();
            let (outbox, queued) = Outbox::new(flow.clone());
            let (near, mut far) = tokio::io::duplex(100);
            let writer = tokio::task::spawn_local(write_frames(near, queued, flow.clone(), Counter::default()));
            let mut expected = BytesMut::new();
            for opaque in 0..50 {
                let reply =
                    RemotingCommand { opaque, ..RemotingCommand::request(0, None) }.with_body(vec![opaque as u8; 300]);
                encode_frame(&reply, &mut expected).unwrap();
                outbox.send(&reply).unwrap();
                tokio::task::yield_now().await;
            }
            drop(outbox);
            let mut received = Vec::new();
            far.read_to_end(&mut received).await.unwrap();
            assert_eq!(writer.await.unwrap().unwrap(), expected.len() as u64);
            assert_eq!(received, expected, "every reply whole, in order");
            assert_eq!(flow.queued_bytes(), 0, "all written");
        }));
    }

    /// Takes what each vectored write offers, often only up to a varying limit (across slice
    /// bounds), and answers every third write "not now": a socket with little room.
    /// It also counts how it was asked: plain writes, and vectored writes of fewer than two slices
    /// (which should go as plain ones).
    #[derive(Default)]
    struct Trickle {
        received: Vec<u8>,
        seed: u64,
        calls: u32,
        plain: u32,
        vectored: u32,
        vectored_single: u32,
    }

    impl AsyncWrite for Trickle {
        fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            self.plain += 1;
            self.take(cx, &[IoSlice::new(buf)])
        }

        fn poll_write_vectored(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            slices: &[IoSlice<'_>],
        ) -> Poll<io::Result<usize>> {
            self.vectored += 1;
            self.vectored_single += u32::from(slices.len() < 2);
            self.take(cx, slices)
        }

        fn is_write_vectored(&self) -> bool {
            true
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    impl Trickle {
        fn take(&mut self, cx: &mut Context<'_>, slices: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
            self.calls += 1;
            if self.calls % 3 == 0 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.seed ^= self.seed << 13;
            self.seed ^= self.seed >> 7;
            self.seed ^= self.seed << 17;
            let mut room = if self.seed % 4 == 0 { usize::MAX } else { 1 + (self.seed % 700) as usize };
            let mut taken = 0;
            for slice in slices {
                let take = slice.len().min(room);
                self.received.extend_from_slice(&slice[..take]);
                (room, taken) = (room - take, taken + take);
            }
            Poll::Ready(Ok(taken))
        }
    }

    /// Shared bodies (large ones written in place, small ones copied) between copied frames,
    /// through writes that stop anywhere: every reply arrives whole, in order, as encoding it
    /// gives, and every byte is counted off the flow.
    #[test]
    fn shared_bodies_between_copied_frames_arrive_whole_and_in_order() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(tokio::task::LocalSet::new().run_until(async {
            let flow = roomy_flow();
            let (outbox, queued) = Outbox::new(flow.clone());
            let trickle = Trickle { seed: 0x9E37_79B9_7F4A_7C15, ..Trickle::default() };
            let found = RemotingCommand::response(crate::protocol::ResponseCode::Success, None);
            let template = ReplyTemplate::json(&found).expect("a JSON reply");
            let mut answers = RouteAnswers::with_capacity(6);
            for n in [100, 700, 1837, 16383, 16384, 40000] {
                answers.push_found(&vec![n as u8; n].into());
            }
            let bodies: Vec<SharedBody> =
                answers.share().map(|a| if let RouteAnswer::Found(body) = a { body } else { unreachable!() }).collect();
            let mut expected = BytesMut::new();
            let written = tokio::task::spawn_local(async move {
                let mut trickle = trickle;
                let total = write_frames(&mut trickle, queued, flow.clone(), Counter::default()).await.unwrap();
                (total, flow.queued_bytes(), trickle)
            });
            for opaque in 0..120 {
                let body = bodies[opaque as usize % bodies.len()].clone();
                let reply = RemotingCommand { opaque, ..found.clone() }.with_body(body.bytes().to_vec());
                encode_frame(&reply, &mut expected).unwrap();
                if opaque % 4 == 3 {
                    outbox.send(&reply).unwrap();
                } else {
                    outbox.send_shared(&template, opaque, &body);
                }
                if opaque % 5 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            drop(outbox);
            let (total, left, trickle) = written.await.unwrap();
            assert_eq!(total, expected.len() as u64);
            assert!(trickle.received == expected, "every reply whole, in order");
            assert_eq!(left, 0, "all written");
            assert!(
                trickle.plain > 0 && trickle.vectored > 0,
                "{} plain, {} vectored",
                trickle.plain,
                trickle.vectored
            );
            assert_eq!(trickle.vectored_single, 0, "one slice goes as a plain write");
        }));
    }
}
