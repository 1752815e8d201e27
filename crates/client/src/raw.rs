//! The raw-byte side of a [`Conn`]: bytes written as they are (hostile-input tests, a load tool
//! that encodes its own frames), bytes read as they come (a load tool that scans answers itself),
//! whole frames as bytes (wire-format tests), and closing the writing half.

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::conn::{within, write_out, Conn};
use crate::error::ClientError;

impl Conn {
    /// Writes queued frames, then `bytes` as they are, within the timeout.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        let Conn { writer, output, timeout: wait, .. } = self;
        output.extend_from_slice(bytes);
        within(*wait, write_out(writer, output)).await
    }

    /// Appends what the server sends next to `into` (bytes already read first) and returns
    /// how many bytes that was, 0 when the server closed. No deadline: the caller bounds it.
    /// Mixing this with frame reads is fine: it takes whatever was read before.
    pub async fn read_raw(&mut self, into: &mut BytesMut) -> Result<usize, ClientError> {
        if !self.input.is_empty() {
            let n = self.input.len();
            into.extend_from_slice(&self.input.split());
            return Ok(n);
        }
        Ok(self.reader.read_buf(into).await?)
    }

    /// The next whole frame as bytes (its length prefix included), within the timeout; one
    /// announced larger than `max_answer_bytes` is refused before its body is read.
    pub async fn next_raw_frame(&mut self) -> Result<BytesMut, ClientError> {
        let Conn { reader, input, timeout: wait, max_answer_bytes: max, .. } = self;
        within(*wait, async {
            loop {
                if input.len() >= 4 {
                    let len = u32::from_be_bytes([input[0], input[1], input[2], input[3]]) as usize;
                    if 4 + len > *max {
                        return Err(ClientError::AnswerTooLarge { got: 4 + len as u64, max: *max });
                    }
                    if input.len() >= 4 + len {
                        return Ok(input.split_to(4 + len));
                    }
                }
                input.reserve(64 * 1024);
                if reader.read_buf(input).await? == 0 {
                    return Err(ClientError::Closed);
                }
            }
        })
        .await
    }

    /// Closes the writing half (the server sees end of input); reading goes on.
    pub async fn shutdown_write(&mut self) -> Result<(), ClientError> {
        let Conn { writer, output, timeout: wait, .. } = self;
        within(*wait, async {
            write_out(writer, output).await?;
            writer.shutdown().await?;
            Ok(())
        })
        .await
    }
}
