//! A blocking wrapper of [`Conn`] for callers without a runtime (tests, simple tools): each
//! connection drives its own current-thread runtime.

use namesrv_protocol::RemotingCommand;
use tokio::runtime::Runtime;

use crate::conn::{ClientError, Conn, ConnectOptions};

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

    /// Sends one request and waits for its answer.
    pub fn call(&mut self, cmd: RemotingCommand) -> Result<RemotingCommand, ClientError> {
        self.runtime.block_on(self.conn.call(cmd))
    }

    /// Sends `cmds`, at most `window` unanswered at a time; the answers in the order of `cmds`.
    pub fn pipeline(&mut self, cmds: Vec<RemotingCommand>, window: usize) -> Result<Vec<RemotingCommand>, ClientError> {
        self.runtime.block_on(self.conn.pipeline(cmds, window))
    }
}
