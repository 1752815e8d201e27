//! Where the load goes ([`Target`]: the address and how to connect, TLS and credentials
//! included) and the load's view of one connection of the shared client: each request's send
//! time kept, so every answer comes with its latency.

use std::collections::HashMap;
use std::io;
use std::time::Instant;

use namesrv_client::{ClientError, ConnectOptions};
use namesrv_protocol::RemotingCommand;

/// The NameServer under load and how every connection to it is made.
#[derive(Clone)]
pub struct Target {
    /// `host:port`.
    pub addr: String,
    /// Timeout, TLS and credentials of every connection.
    pub options: ConnectOptions,
}

impl Target {
    /// A connection of the shared client, for loads that write or scan frames themselves.
    pub async fn connect_raw(&self) -> io::Result<namesrv_client::Conn> {
        namesrv_client::Conn::connect(&self.addr, &self.options)
            .await
            .map_err(|e| io::Error::other(format!("cannot connect to {}: {e}", self.addr)))
    }
}

/// The shared client's errors as the load's I/O errors.
pub fn io_error(e: ClientError) -> io::Error {
    match e {
        ClientError::Codec(namesrv_protocol::CodecError::Io(e)) => e,
        other => io::Error::other(other),
    }
}

/// One connection with requests in flight and when each was sent.
pub struct Conn {
    conn: namesrv_client::Conn,
    pending: HashMap<i32, Instant>,
}

/// A response with the time it took.
pub struct Answer {
    pub code: i32,
    pub latency_us: u64,
    pub body_len: usize,
}

impl Conn {
    /// Connects to `target`.
    pub async fn connect(target: &Target) -> io::Result<Conn> {
        Ok(Conn { conn: target.connect_raw().await?, pending: HashMap::new() })
    }

    /// Queues a request without flushing; call [`Conn::flush`] after a batch.
    pub async fn feed(&mut self, cmd: RemotingCommand) -> io::Result<()> {
        let opaque = self.conn.feed(cmd).await.map_err(io_error)?;
        self.pending.insert(opaque, Instant::now());
        Ok(())
    }

    /// Flushes queued requests.
    pub async fn flush(&mut self) -> io::Result<()> {
        self.conn.flush().await.map_err(io_error)
    }

    /// Sends one request and waits for its answer.
    pub async fn call(&mut self, cmd: RemotingCommand) -> io::Result<Answer> {
        self.feed(cmd).await?;
        self.flush().await?;
        self.next_answer().await
    }

    /// Waits for the next answer to one of this connection's requests.
    pub async fn next_answer(&mut self) -> io::Result<Answer> {
        let (frame, latency_us) = self.next_frame().await?;
        Ok(Answer { code: frame.code, latency_us, body_len: frame.body.as_ref().map_or(0, |b| b.len()) })
    }

    /// Sends one request and returns the body of its answer (empty when it has none).
    pub async fn call_body(&mut self, cmd: RemotingCommand) -> io::Result<Vec<u8>> {
        self.feed(cmd).await?;
        self.flush().await?;
        Ok(self.next_frame().await?.0.body.map(|b| b.to_vec()).unwrap_or_default())
    }

    /// The next frame answering one of this connection's requests, with its latency.
    async fn next_frame(&mut self) -> io::Result<(RemotingCommand, u64)> {
        loop {
            let frame = self.conn.next_frame().await.map_err(io_error)?;
            if let Some(sent) = self.pending.remove(&frame.opaque) {
                return Ok((frame, sent.elapsed().as_micros() as u64));
            }
        }
    }
}
