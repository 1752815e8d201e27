//! A blocking wrapper of [`Conn`] for callers without a runtime (tests, simple tools): each
//! connection drives its own current-thread runtime. Every method blocks on its async twin.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::BytesMut;
use namesrv_protocol::RemotingCommand;
use rustls::pki_types::CertificateDer;
use tokio::runtime::Runtime;

use crate::conn::{Conn, ConnectOptions, Incoming};
use crate::error::ClientError;

/// A connection whose calls block the calling thread.
pub struct BlockingConn {
    runtime: Runtime,
    conn: Conn,
}

impl BlockingConn {
    /// Connects to `addr` as `options` say.
    pub fn connect(addr: &str, options: &ConnectOptions) -> Result<BlockingConn, ClientError> {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ClientError::Runtime)?;
        let conn = runtime.block_on(Conn::connect(addr, options))?;
        Ok(BlockingConn { runtime, conn })
    }

    /// This end's address.
    pub fn local_addr(&self) -> SocketAddr {
        self.conn.local_addr()
    }

    /// The certificate chain the server presented (empty over plain TCP).
    pub fn server_certificates(&self) -> &[CertificateDer<'static>] {
        self.conn.server_certificates()
    }

    /// Sends one request and waits for its answer.
    pub fn call(&mut self, cmd: RemotingCommand) -> Result<RemotingCommand, ClientError> {
        self.runtime.block_on(self.conn.call(cmd))
    }

    /// Sends `cmds`, at most `window` unanswered at a time; the answers in the order of `cmds`.
    pub fn pipeline(&mut self, cmds: Vec<RemotingCommand>, window: usize) -> Result<Vec<RemotingCommand>, ClientError> {
        self.runtime.block_on(self.conn.pipeline(cmds, window))
    }

    /// See [`Conn::feed`].
    pub fn feed(&mut self, cmd: RemotingCommand) -> Result<i32, ClientError> {
        self.runtime.block_on(self.conn.feed(cmd))
    }

    /// See [`Conn::feed_as_is`].
    pub fn feed_as_is(&mut self, cmd: RemotingCommand) -> Result<(), ClientError> {
        self.conn.feed_as_is(cmd)
    }

    /// See [`Conn::flush`].
    pub fn flush(&mut self) -> Result<(), ClientError> {
        self.runtime.block_on(self.conn.flush())
    }

    /// See [`Conn::send`].
    pub fn send(&mut self, cmd: RemotingCommand) -> Result<(), ClientError> {
        self.runtime.block_on(self.conn.send(cmd))
    }

    /// See [`Conn::send_raw`].
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        self.runtime.block_on(self.conn.send_raw(bytes))
    }

    /// See [`Conn::next_frame_within`].
    pub fn next_frame_within(&mut self, wait: Duration) -> Result<Incoming, ClientError> {
        self.runtime.block_on(self.conn.next_frame_within(wait))
    }

    /// See [`Conn::next_raw_frame`].
    pub fn next_raw_frame(&mut self) -> Result<BytesMut, ClientError> {
        self.runtime.block_on(self.conn.next_raw_frame())
    }

    /// See [`Conn::shutdown_write`].
    pub fn shutdown_write(&mut self) -> Result<(), ClientError> {
        self.runtime.block_on(self.conn.shutdown_write())
    }
}
