//! The route load: GET_ROUTEINFO_BY_TOPIC frames encoded once per topic and re-stamped with a new
//! opaque, answers read by scanning their header for `code` and `opaque`, and every answer that
//! arrives in one read replaced in one write. A load tool that spends more per request than the
//! server measures itself, not the server: this one costs about a microsecond a query. With
//! credentials configured every frame is signed once (the signature does not cover the opaque);
//! with TLS configured the connections are TLS.

use std::collections::VecDeque;
use std::io;
use std::time::Instant;

use bytes::{Buf, BytesMut};
use namesrv::protocol::codec::encode_frame;
use namesrv::protocol::RemotingCommand;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::client::{self, Stream};
use crate::stats::Samples;
use crate::workload;

/// Opaques are always 10 digits, so a template's opaque is patched in place.
const OPAQUE_FIRST: i32 = 1_000_000_000;
const OPAQUE_DIGITS: usize = 10;

/// One encoded GET_ROUTEINFO_BY_TOPIC per topic, with where its opaque digits are.
pub struct RouteFrames {
    frames: Vec<Vec<u8>>,
    opaque_at: Vec<usize>,
}

impl RouteFrames {
    /// Encodes one request per topic.
    pub fn new(topics: &[String]) -> io::Result<Self> {
        let marker = format!("\"opaque\":{OPAQUE_FIRST}");
        let mut frames = Vec::with_capacity(topics.len());
        let mut opaque_at = Vec::with_capacity(topics.len());
        for topic in topics {
            let mut cmd: RemotingCommand = workload::route_request(topic);
            client::sign(&mut cmd);
            cmd.opaque = OPAQUE_FIRST;
            let mut frame = BytesMut::new();
            encode_frame(&cmd, &mut frame).map_err(io::Error::other)?;
            let at = find(&frame, marker.as_bytes())
                .ok_or_else(|| io::Error::other("route request header has no JSON opaque"))?;
            opaque_at.push(at + marker.len() - OPAQUE_DIGITS);
            frames.push(frame.to_vec());
        }
        Ok(Self { frames, opaque_at })
    }

    /// How many topics there are.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Appends the request for topic `index` with `opaque` to `out`.
    fn push(&self, index: usize, opaque: i32, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&self.frames[index]);
        let at = start + self.opaque_at[index];
        let mut rest = opaque.unsigned_abs();
        for digit in out[at..at + OPAQUE_DIGITS].iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
    }
}

/// One connection keeping `depth` route queries in flight.
pub struct RouteConn {
    stream: Stream,
    input: BytesMut,
    output: Vec<u8>,
    next_opaque: i32,
    /// Queries in flight with when they were sent, oldest first (answers mostly come in order).
    sent: VecDeque<(i32, Instant)>,
}

impl RouteConn {
    /// Connects to `addr`.
    pub async fn connect(addr: &str) -> io::Result<Self> {
        let stream = client::connect_stream(addr).await?;
        Ok(Self {
            stream,
            input: BytesMut::with_capacity(1 << 16),
            output: Vec::new(),
            next_opaque: OPAQUE_FIRST,
            sent: VecDeque::new(),
        })
    }

    /// Queues the query for topic `index`, to be sent at about `now`.
    fn queue(&mut self, frames: &RouteFrames, index: usize, now: Instant) {
        let opaque = self.next_opaque;
        self.next_opaque = if opaque == i32::MAX { OPAQUE_FIRST } else { opaque + 1 };
        frames.push(index, opaque, &mut self.output);
        self.sent.push_back((opaque, now));
    }

    /// When the query answered with `opaque` was sent; `None` for an opaque not in flight.
    fn answered(&mut self, opaque: i32) -> Option<Instant> {
        let at = self.sent.iter().position(|(o, _)| *o == opaque)?;
        self.sent.remove(at).map(|(_, sent)| sent)
    }

    async fn send(&mut self) -> io::Result<()> {
        self.stream.write_all(&self.output).await?;
        self.output.clear();
        Ok(())
    }

    /// Keeps `depth` queries in flight until `end`, recording answers from `begin` on; topics are
    /// picked by `pick`.
    pub async fn run(
        mut self,
        frames: &RouteFrames,
        depth: usize,
        (begin, end): (Instant, Instant),
        mut pick: impl FnMut() -> usize,
    ) -> io::Result<Samples> {
        let mut samples = Samples::default();
        let now = Instant::now();
        for _ in 0..depth {
            self.queue(frames, pick(), now);
        }
        self.send().await?;
        while !self.sent.is_empty() {
            self.input.reserve(1 << 16);
            if self.stream.read_buf(&mut self.input).await? == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection"));
            }
            let now = Instant::now();
            while let Some(answer) = next_answer(&mut self.input)? {
                let Some(sent) = self.answered(answer.opaque) else { continue };
                if now >= begin && now < end {
                    samples.record(now.duration_since(sent).as_micros() as u64, answer.code == 0, answer.body_len);
                }
                if now < end {
                    self.queue(frames, pick(), now);
                }
            }
            if !self.output.is_empty() {
                self.send().await?;
            }
        }
        Ok(samples)
    }
}

/// What the load needs of an answer.
struct Answer {
    code: i32,
    opaque: i32,
    body_len: usize,
}

/// Takes the next complete frame off `input`, if there is one.
fn next_answer(input: &mut BytesMut) -> io::Result<Option<Answer>> {
    if input.len() < 8 {
        return Ok(None);
    }
    let total = u32::from_be_bytes([input[0], input[1], input[2], input[3]]) as usize;
    if input.len() < 4 + total {
        return Ok(None);
    }
    let mark = u32::from_be_bytes([input[4], input[5], input[6], input[7]]);
    let header_len = (mark & 0x00ff_ffff) as usize;
    if mark >> 24 != 0 || header_len + 4 > total {
        return Err(io::Error::other("answer is not a JSON-header frame"));
    }
    let header = &input[8..8 + header_len];
    let code = json_int(header, b"\"code\":").ok_or_else(|| io::Error::other("answer header has no code"))?;
    let opaque = json_int(header, b"\"opaque\":").ok_or_else(|| io::Error::other("answer header has no opaque"))?;
    let answer = Answer { code, opaque, body_len: total - 4 - header_len };
    input.advance(4 + total);
    Ok(Some(answer))
}

/// The integer after `key` in a JSON header.
fn json_int(header: &[u8], key: &[u8]) -> Option<i32> {
    let at = find(header, key)? + key.len();
    let digits = &header[at..];
    let end = digits.iter().position(|b| !(b.is_ascii_digit() || *b == b'-')).unwrap_or(digits.len());
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use namesrv::protocol::{RemotingCodec, ResponseCode};
    use tokio_util::codec::Decoder;

    #[test]
    fn templates_decode_with_the_stamped_opaque() {
        let frames = RouteFrames::new(&["TopicA".to_owned(), "B".to_owned()]).unwrap();
        let mut out = Vec::new();
        frames.push(1, 1_234_567_890, &mut out);
        let mut buf = BytesMut::from(&out[..]);
        let cmd = RemotingCodec::new(1 << 20).decode(&mut buf).unwrap().unwrap();
        assert_eq!((cmd.code, cmd.opaque), (105, 1_234_567_890));
        assert_eq!(cmd.ext_fields.unwrap().get("topic"), Some("B"));
    }

    #[test]
    fn answers_are_scanned_from_encoded_responses() {
        let mut buf = BytesMut::new();
        for (code, opaque) in [(ResponseCode::Success, 1_000_000_007), (ResponseCode::TopicNotExist, 1_000_000_008)] {
            let mut cmd = RemotingCommand::response(code, None).with_body(b"body".to_vec());
            cmd.opaque = opaque;
            encode_frame(&cmd, &mut buf).unwrap();
        }
        buf.extend_from_slice(&[0, 0]);
        let first = next_answer(&mut buf).unwrap().unwrap();
        let second = next_answer(&mut buf).unwrap().unwrap();
        assert_eq!((first.code, first.opaque, first.body_len), (0, 1_000_000_007, 4));
        assert_eq!((second.code, second.opaque), (17, 1_000_000_008));
        assert!(next_answer(&mut buf).unwrap().is_none());
    }
}
