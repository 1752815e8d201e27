//! The writing half of a connection: replies are encoded straight into one outgoing buffer, in
//! completion order, and a writer task swaps it for an empty one and writes it whole, so a busy
//! connection writes many replies per system call and allocates nothing per reply. Each written
//! byte is counted off the connection's flow.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::io;
use std::rc::Rc;
use std::task::{Poll, Waker};

use bytes::BytesMut;
use prometheus_client::metrics::counter::Counter;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::flow::Flow;
use crate::protocol::codec::encode_frame;
use crate::protocol::reply_template::ReplyTemplate;
use crate::protocol::{CodecError, RemotingCommand};

/// Buffers larger than this are not kept for reuse once written (one huge reply must not pin
/// its memory for the life of the connection).
const KEPT_BYTES: usize = 256 * 1024;

/// What the connection and its writer share.
#[derive(Debug, Default)]
struct Outgoing {
    buffer: RefCell<BytesMut>,
    writer: RefCell<Option<Waker>>,
    closed: Cell<bool>,
}

/// Where a connection queues its replies; dropping it lets the writer finish.
pub struct Outbox {
    outgoing: Rc<Outgoing>,
    flow: Rc<Flow>,
}

/// The writer's end.
pub struct Queued {
    outgoing: Rc<Outgoing>,
}

impl Outbox {
    /// An outbox and the end its writer drains.
    pub fn new(flow: Rc<Flow>) -> (Self, Queued) {
        // Buffers start empty and grow to what the connection's replies need: an idle client
        // connection holds no more than its last batch of replies.
        let outgoing = Rc::new(Outgoing::default());
        (Outbox { outgoing: outgoing.clone(), flow }, Queued { outgoing })
    }

    /// Encodes one reply onto the outgoing buffer; returns its size.
    pub fn send(&self, cmd: &RemotingCommand) -> Result<usize, CodecError> {
        self.append(|buffer| encode_frame(cmd, buffer))
    }

    /// Frames one reply from `template` onto the outgoing buffer; returns its size.
    pub fn send_from(&self, template: &ReplyTemplate, opaque: i32, body: &[u8]) -> usize {
        let framed = self.append(|buffer| {
            template.put_frame(opaque, body, buffer);
            Ok(())
        });
        framed.unwrap_or_default()
    }

    /// Appends what `frame` writes to the outgoing buffer and wakes the writer.
    fn append(&self, frame: impl FnOnce(&mut BytesMut) -> Result<(), CodecError>) -> Result<usize, CodecError> {
        let mut buffer = self.outgoing.buffer.borrow_mut();
        let before = buffer.len();
        frame(&mut buffer)?;
        let len = buffer.len() - before;
        drop(buffer);
        self.flow.queued(len);
        if let Some(waker) = self.outgoing.writer.borrow_mut().take() {
            waker.wake();
        }
        Ok(len)
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

impl Queued {
    /// Writes what is queued from `written` on to `io`; ready with the bytes written, or with
    /// `Ok(0)` once the outbox is dropped and everything is written.
    fn poll_write<W: AsyncWrite + Unpin>(
        &self,
        io: &mut W,
        written: &mut usize,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<io::Result<usize>> {
        let mut buffer = self.outgoing.buffer.borrow_mut();
        if *written == buffer.len() {
            if self.outgoing.closed.get() {
                return Poll::Ready(Ok(0));
            }
            let mut writer = self.outgoing.writer.borrow_mut();
            if !writer.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *writer = Some(cx.waker().clone());
            }
            return Poll::Pending;
        }
        let n = std::task::ready!(std::pin::Pin::new(io).poll_write(cx, &buffer[*written..]))?;
        if n == 0 {
            return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        *written += n;
        if *written == buffer.len() {
            *written = 0;
            if buffer.capacity() > KEPT_BYTES {
                *buffer = BytesMut::new();
            } else {
                buffer.clear();
            }
        }
        Poll::Ready(Ok(n))
    }
}

/// Writes queued replies until the outbox is dropped and the buffer is empty, then shuts the
/// socket down. Returns the bytes written.
pub async fn write_frames<W: AsyncWrite + Unpin>(
    mut io: W,
    queued: Queued,
    flow: Rc<Flow>,
    sent: Counter,
) -> io::Result<u64> {
    let (mut total, mut written) = (0u64, 0usize);
    loop {
        let n = poll_fn(|cx| queued.poll_write(&mut io, &mut written, cx)).await?;
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
    use tokio::io::AsyncReadExt;

    /// Replies queued while a write is only partly done follow it in order, and every byte is
    /// counted off the flow once written.
    #[test]
    fn replies_queued_during_partial_writes_arrive_whole_and_in_order() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(tokio::task::LocalSet::new().run_until(async {
            let limits = FlowLimits { high_bytes: 1 << 20, low_bytes: 0, max_in_flight: 64, max_bytes: 1 << 20 };
            let flow = Flow::new(limits, ReplyBudget::new(1 << 20));
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
}
