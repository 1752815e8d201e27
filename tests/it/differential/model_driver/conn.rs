//! One connection that sends a batch of requests at once and collects their responses by
//! opaque (the server may answer out of order), failing on anything unexpected.

use std::time::Duration;

use namesrv::protocol::RemotingCommand;

use super::observe::Encoding;
use crate::common::{Client, Incoming};

/// How long a batch of responses may take.
const DEADLINE: Duration = Duration::from_secs(5);

/// A client connection sending batches.
pub struct Conn {
    client: Client,
}

impl Conn {
    /// Wraps a connected client.
    pub fn new(client: Client) -> Self {
        Conn { client }
    }

    /// Sends `requests` in one write and returns their responses in request order.
    pub fn call_all(&mut self, requests: &[RemotingCommand]) -> Result<Vec<RemotingCommand>, String> {
        let opaques = self.client.send_batch(requests);
        let mut responses: Vec<Option<RemotingCommand>> = vec![None; requests.len()];
        let mut missing = requests.len();
        while missing > 0 {
            let frame = match self.client.read_frame_within(DEADLINE) {
                Incoming::Frame(frame) => frame,
                Incoming::Closed => return Err("the server closed the connection".into()),
                Incoming::Silent => return Err(format!("no response within {DEADLINE:?}")),
            };
            match opaques.iter().position(|o| *o == frame.opaque) {
                Some(i) if frame.is_response() && responses[i].is_none() => {
                    responses[i] = Some(frame);
                    missing -= 1;
                }
                _ => return Err(format!("unexpected frame {frame:?}")),
            }
        }
        Ok(responses.into_iter().map(|r| r.expect("all collected")).collect())
    }

    /// True when the server closes this connection within `within`, sending nothing first.
    pub fn closed_by_server(&mut self, within: Duration) -> bool {
        matches!(self.client.read_frame_within(within), Incoming::Closed)
    }

    /// Sends one request and returns its response.
    pub fn call(&mut self, request: RemotingCommand) -> Result<RemotingCommand, String> {
        Ok(self.call_all(&[request])?.remove(0))
    }
}

/// Checks how a successful route body was written.
pub fn check_encoding(encoding: Encoding, response: &RemotingCommand) -> Result<(), String> {
    let Some(body) = response.body.as_deref().filter(|_| response.code == 0) else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(body);
    match encoding {
        Encoding::Any => Ok(()),
        Encoding::Standard => match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(_) => Ok(()),
            Err(e) => Err(format!("not standard JSON ({e}): {text}")),
        },
        Encoding::BareKeys if text.contains("\"brokerAddrs\":{\"") => Err(format!("quoted broker ids: {text}")),
        Encoding::BareKeys => Ok(()),
    }
}
