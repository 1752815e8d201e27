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
        let mut buffer = self.outgoing.buffer.borrow_mut();
        let before = buffer.len();
        encode_frame(cmd, &mut buffer)?;
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
    /// The bytes queued so far, leaving `spare` (cleared) in their place; `None` once the
    /// outbox is dropped and everything is taken.
    async fn take(&self, spare: BytesMut) -> Option<BytesMut> {
        let mut spare = Some(spare);
        poll_fn(|cx| {
            let mut buffer = self.outgoing.buffer.borrow_mut();
            if !buffer.is_empty() {
                let mut next = spare.take().unwrap_or_default();
                next.clear();
                return Poll::Ready(Some(std::mem::replace(&mut *buffer, next)));
            }
            if self.outgoing.closed.get() {
                return Poll::Ready(None);
            }
            *self.outgoing.writer.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
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
    let mut written = 0u64;
    let mut spare = BytesMut::new();
    while let Some(mut batch) = queued.take(spare).await {
        io.write_all(&batch).await?;
        flow.written(batch.len());
        sent.inc_by(batch.len() as u64);
        written += batch.len() as u64;
        batch.clear();
        spare = if batch.capacity() > KEPT_BYTES { BytesMut::new() } else { batch };
    }
    io.shutdown().await?;
    Ok(written)
}
