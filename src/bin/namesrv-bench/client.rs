//! A pipelined RocketMQ client connection for load generation: many requests in flight,
//! responses matched by `opaque`.

use std::collections::HashMap;
use std::io;
use std::time::Instant;

use bytes::BytesMut;
use futures_util::{SinkExt, StreamExt};
use namesrv::protocol::{RemotingCodec, RemotingCommand};
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

/// One connection with requests in flight.
pub struct Conn {
    framed: Framed<TcpStream, RemotingCodec>,
    next_opaque: i32,
    pending: HashMap<i32, Instant>,
}

/// A response with the time it took.
pub struct Answer {
    pub code: i32,
    pub latency_us: u64,
    pub body_len: usize,
}

impl Conn {
    /// Connects to `addr`.
    pub async fn connect(addr: &str) -> io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Conn { framed: Framed::new(stream, RemotingCodec::new(1 << 30)), next_opaque: 1, pending: HashMap::new() })
    }

    /// Queues a request without flushing; call [`Conn::flush`] after a batch.
    pub async fn feed(&mut self, mut cmd: RemotingCommand) -> io::Result<()> {
        cmd.opaque = self.next_opaque;
        self.next_opaque = self.next_opaque.wrapping_add(1);
        self.pending.insert(cmd.opaque, Instant::now());
        self.framed.feed(cmd).await.map_err(io::Error::other)
    }

    /// Flushes queued requests.
    pub async fn flush(&mut self) -> io::Result<()> {
        self.framed.flush().await.map_err(io::Error::other)
    }

    /// Sends one request and waits for its answer.
    pub async fn call(&mut self, cmd: RemotingCommand) -> io::Result<Answer> {
        self.feed(cmd).await?;
        self.flush().await?;
        self.next_answer().await
    }

    /// Waits for the next answer to one of this connection's requests.
    pub async fn next_answer(&mut self) -> io::Result<Answer> {
        loop {
            let frame = self
                .framed
                .next()
                .await
                .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection"))?
                .map_err(io::Error::other)?;
            if let Some(sent) = self.pending.remove(&frame.opaque) {
                return Ok(Answer {
                    code: frame.code,
                    latency_us: sent.elapsed().as_micros() as u64,
                    body_len: frame.body.as_ref().map_or(0, |b| b.len()),
                });
            }
        }
    }

    /// Requests sent and not answered yet.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Bytes buffered for reading (for tests of the framing only).
    #[allow(dead_code)]
    pub fn read_buffer(&mut self) -> &mut BytesMut {
        self.framed.read_buffer_mut()
    }
}
