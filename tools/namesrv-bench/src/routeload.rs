//! The route load: GET_ROUTEINFO_BY_TOPIC frames encoded once per topic, kept as their
//! difference from one template and re-stamped with a new opaque; answers read by scanning their
//! header for `code` and `opaque`, and every answer that arrives in one read replaced in one
//! write. A load tool that spends more per request than the server measures itself, not the
//! server: on two shared cores every microsecond it spends is one the server lacks. With
//! credentials configured every frame is signed once (the signature does not cover the opaque);
//! with TLS configured the connections are TLS.

use std::collections::VecDeque;
use std::io;
use std::sync::LazyLock;
use std::time::Instant;

use bytes::{Buf, BytesMut};
use memchr::memmem;
use namesrv_protocol::codec::encode_frame;
use namesrv_protocol::signature::{sign_command, SessionCredentials};
use namesrv_protocol::RemotingCommand;

use crate::conn::{io_error, Target};
use crate::stats::{Rng, Samples};
use crate::workload;

/// Opaques are always 10 digits, so a template's opaque is patched in place.
const OPAQUE_FIRST: i32 = 1_000_000_000;
const OPAQUE_DIGITS: usize = 10;

/// The GET_ROUTEINFO_BY_TOPIC request of every topic, kept compact: one template header, and per
/// topic one fixed-size record of where its header differs from the template (the topic, and
/// with credentials the signature): a cache line at most, 16 or 32 bytes for plain route
/// requests, where forty thousand whole frames would be 8 MB. Each connection gets its own
/// shuffled copy and sends it in order, so the topics it asks are random and the records it
/// reads are in sequence.
#[derive(Clone)]
pub struct RouteFrames {
    /// The first topic's JSON header, with opaque `OPAQUE_FIRST`.
    template: Vec<u8>,
    /// Where the opaque digits start, counted back from the header's end.
    opaque_from_end: usize,
    /// Bytes per record: a power of two, so a record never straddles more lines than it must.
    stride: usize,
    /// One record per topic: the template's bytes kept before (u16) and after (u16) the
    /// topic's own bytes, their count (u8), then the bytes themselves.
    records: Vec<u8>,
}

/// A record's fixed part: prefix (u16), suffix (u16), own length (u8).
const RECORD_HEAD: usize = 5;

/// One header as the template's first `prefix` bytes, `own`, then its last `suffix` bytes.
struct Splice {
    prefix: usize,
    suffix: usize,
    own: Vec<u8>,
}

impl RouteFrames {
    /// Encodes one request per topic (signed with `credentials` when given) and keeps what
    /// each differs by from the first.
    pub fn new(topics: &[String], credentials: Option<&SessionCredentials>) -> io::Result<Self> {
        Self::from_headers(topics.iter().map(|topic| route_header(topic, credentials)))
    }

    /// Keeps the first header whole and the others as their difference from it.
    fn from_headers(mut headers: impl Iterator<Item = io::Result<Vec<u8>>>) -> io::Result<Self> {
        let template = headers.next().unwrap_or_else(|| route_header("", None))?;
        let marker = format!("\"opaque\":{OPAQUE_FIRST}");
        let at = memmem::find(&template, marker.as_bytes())
            .ok_or_else(|| io::Error::other("route request header has no JSON opaque"))?;
        let opaque_from_end = template.len() - (at + marker.len() - OPAQUE_DIGITS);
        let mut splices = vec![splice(&template, &template, opaque_from_end)?];
        for header in headers {
            splices.push(splice(&template, &header?, opaque_from_end)?);
        }
        let longest = splices.iter().map(|s| s.own.len()).max().unwrap_or(0);
        let stride = (RECORD_HEAD + longest).next_power_of_two().max(16);
        let mut records = Vec::with_capacity(stride * splices.len());
        for Splice { prefix, suffix, own } in splices {
            let narrow = |n: usize| u16::try_from(n).map_err(|_| io::Error::other("route request header too long"));
            records.extend_from_slice(&narrow(prefix)?.to_le_bytes());
            records.extend_from_slice(&narrow(suffix)?.to_le_bytes());
            records
                .push(u8::try_from(own.len()).map_err(|_| io::Error::other("route request headers differ too much"))?);
            records.extend_from_slice(&own);
            records.resize(records.len() + stride - RECORD_HEAD - own.len(), 0);
        }
        Ok(RouteFrames { template, opaque_from_end, stride, records })
    }

    /// How many topics there are.
    pub fn len(&self) -> usize {
        self.records.len() / self.stride
    }

    /// The same requests with the records in an order drawn from `rng`, for one connection to
    /// send front to back (and round again): every topic as often, in a random order, while
    /// the load tool reads its records in sequence rather than one cache miss a query.
    pub fn shuffled(&self, rng: &mut Rng) -> RouteFrames {
        let mut order: Vec<usize> = (0..self.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let records =
            order.iter().flat_map(|&i| &self.records[i * self.stride..(i + 1) * self.stride]).copied().collect();
        RouteFrames { records, template: self.template.clone(), ..*self }
    }

    /// Appends the request for topic `index` with `opaque` to `out`.
    fn push(&self, index: usize, opaque: i32, out: &mut Vec<u8>) {
        let record = &self.records[index * self.stride..(index + 1) * self.stride];
        let prefix = u16::from_le_bytes([record[0], record[1]]) as usize;
        let suffix = u16::from_le_bytes([record[2], record[3]]) as usize;
        let own = &record[RECORD_HEAD..RECORD_HEAD + record[4] as usize];
        let header_len = (prefix + own.len() + suffix) as u32;
        // A JSON-header frame: total length (header-length field, header, no body), then the
        // header's length with serialization type 0 in its high byte.
        out.extend_from_slice(&(4 + header_len).to_be_bytes());
        out.extend_from_slice(&header_len.to_be_bytes());
        out.extend_from_slice(&self.template[..prefix]);
        out.extend_from_slice(own);
        out.extend_from_slice(&self.template[self.template.len() - suffix..]);
        let at = out.len() - self.opaque_from_end;
        let mut rest = opaque.unsigned_abs();
        for digit in out[at..at + OPAQUE_DIGITS].iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
    }
}

/// `header` as its difference from `template`; the opaque (its last `opaque_from_end` bytes
/// on) must be in the part they share.
fn splice(template: &[u8], header: &[u8], opaque_from_end: usize) -> io::Result<Splice> {
    let suffix = common_len(template.iter().rev(), header.iter().rev());
    let prefix = common_len(template.iter(), header.iter()).min(template.len().min(header.len()) - suffix);
    if suffix < opaque_from_end {
        return Err(io::Error::other("route request headers differ after the opaque"));
    }
    Ok(Splice { prefix, suffix, own: header[prefix..header.len() - suffix].to_vec() })
}

/// How many items `a` and `b` share from their start.
fn common_len<'a>(a: impl Iterator<Item = &'a u8>, b: impl Iterator<Item = &'a u8>) -> usize {
    a.zip(b).take_while(|(x, y)| x == y).count()
}

/// The JSON header of `topic`'s route request (signed with `credentials` when given), with
/// opaque `OPAQUE_FIRST`.
fn route_header(topic: &str, credentials: Option<&SessionCredentials>) -> io::Result<Vec<u8>> {
    let mut cmd: RemotingCommand = workload::route_request(topic);
    if let Some(credentials) = credentials {
        sign_command(&mut cmd, credentials);
    }
    cmd.opaque = OPAQUE_FIRST;
    let mut frame = BytesMut::new();
    encode_frame(&cmd, &mut frame).map_err(io::Error::other)?;
    let field = |at: usize| frame.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize);
    match (field(0), field(4)) {
        (Some(total), Some(header_len)) if header_len >> 24 == 0 && total == 4 + header_len => {
            Ok(frame[8..8 + header_len].to_vec())
        }
        _ => Err(io::Error::other("route request is not a bodiless JSON-header frame")),
    }
}

/// One connection keeping `depth` route queries in flight.
pub struct RouteConn {
    conn: namesrv_client::Conn,
    input: BytesMut,
    output: Vec<u8>,
    next_opaque: i32,
    /// Queries in flight with when they were sent, oldest first (answers mostly come in order).
    sent: VecDeque<(i32, Instant)>,
}

impl RouteConn {
    /// Connects to `target`.
    pub async fn connect(target: &Target) -> io::Result<Self> {
        Ok(Self {
            conn: target.connect_raw().await?,
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
        self.conn.send_raw(&self.output).await.map_err(io_error)?;
        self.output.clear();
        Ok(())
    }

    /// Keeps `depth` queries in flight until `end`, recording answers from `begin` on; the
    /// topics are asked in the order of `frames`, front to back and round again.
    pub async fn run(
        mut self,
        frames: &RouteFrames,
        depth: usize,
        (begin, end): (Instant, Instant),
    ) -> io::Result<Samples> {
        let mut samples = Samples::default();
        let mut next = 0;
        let mut pick = || {
            let index = next;
            next = (next + 1) % frames.len();
            index
        };
        let now = Instant::now();
        for _ in 0..depth {
            self.queue(frames, pick(), now);
        }
        self.send().await?;
        while !self.sent.is_empty() {
            self.input.reserve(1 << 16);
            if self.conn.read_raw(&mut self.input).await.map_err(io_error)? == 0 {
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
    static CODE: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"\"code\":"));
    static OPAQUE: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"\"opaque\":"));
    let code = json_int(header, &CODE).ok_or_else(|| io::Error::other("answer header has no code"))?;
    let opaque = json_int(header, &OPAQUE).ok_or_else(|| io::Error::other("answer header has no opaque"))?;
    let answer = Answer { code, opaque, body_len: total - 4 - header_len };
    input.advance(4 + total);
    Ok(Some(answer))
}

/// The integer after `key` in a JSON header.
fn json_int(header: &[u8], key: &memmem::Finder<'static>) -> Option<i32> {
    let at = key.find(header)? + key.needle().len();
    let digits = header.get(at..)?;
    let (negative, digits) = match digits.first() {
        Some(b'-') => (true, &digits[1..]),
        _ => (false, digits),
    };
    let end = digits.iter().position(|b| !b.is_ascii_digit()).unwrap_or(digits.len());
    if end == 0 || end > 10 {
        return None;
    }
    let value = digits[..end].iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    i32::try_from(if negative { -value } else { value }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use namesrv_protocol::{RemotingCodec, ResponseCode};
    use tokio_util::codec::Decoder;

    #[test]
    fn every_topic_decodes_from_the_template_with_the_stamped_opaque() {
        let topics: Vec<String> = ["TopicA", "B", "TopicA-longer", "Topic\"q\"", "", "TopicB"].map(String::from).into();
        let frames = RouteFrames::new(&topics, None).unwrap();
        let opaques = [1_234_567_890, 1_000_000_000, 1_999_999_999, 2_147_483_647, 1_000_000_001, 1_000_000_002];
        let mut out = Vec::new();
        for (i, opaque) in opaques.into_iter().enumerate() {
            frames.push(i, opaque, &mut out);
        }
        let mut buf = BytesMut::from(&out[..]);
        let mut codec = RemotingCodec::new(1 << 20);
        for (topic, opaque) in topics.iter().zip(opaques) {
            let cmd = codec.decode(&mut buf).unwrap().unwrap();
            assert_eq!((cmd.code, cmd.opaque), (105, opaque));
            assert_eq!(cmd.ext_fields.unwrap().get("topic"), Some(topic.as_str()));
        }
        assert!(buf.is_empty(), "no bytes beyond the frames");
        assert_eq!(frames.len(), topics.len());
        assert!(frames.stride <= 32, "only the differing bytes are kept: {} a record", frames.stride);
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

    #[test]
    fn a_shuffled_copy_asks_every_topic_once_in_an_order_of_its_seed() {
        let topics: Vec<String> = (0..50).map(|i| format!("Topic{i}")).collect();
        let frames = RouteFrames::new(&topics, None).unwrap();
        let asked = |frames: &RouteFrames| -> Vec<String> {
            let mut out = Vec::new();
            for i in 0..frames.len() {
                frames.push(i, 1_000_000_000, &mut out);
            }
            let (mut buf, mut codec) = (BytesMut::from(&out[..]), RemotingCodec::new(1 << 20));
            std::iter::from_fn(|| codec.decode(&mut buf).unwrap())
                .map(|cmd| cmd.ext_fields.unwrap().get("topic").unwrap().to_owned())
                .collect()
        };
        let (a, b) = (frames.shuffled(&mut Rng::new(1)), frames.shuffled(&mut Rng::new(2)));
        let (order_a, order_b) = (asked(&a), asked(&b));
        assert_ne!(order_a, topics, "shuffled");
        assert_ne!(order_a, order_b, "each seed its own order");
        assert_eq!(asked(&frames.shuffled(&mut Rng::new(1))), order_a, "the same seed, the same order");
        let mut sorted = order_a.clone();
        sorted.sort_by_key(|t| t[5..].parse::<u32>().unwrap());
        assert_eq!(sorted, topics, "every topic exactly once");
    }

    #[test]
    fn headers_differing_in_two_places_are_spliced_back_whole() {
        let headers = [
            r#"{"ext":{"Sig":"AAAA","topic":"x"},"opaque":1000000000,"v":1}"#,
            r#"{"ext":{"Sig":"BBBB","topic":"yyy"},"opaque":1000000000,"v":1}"#,
            r#"{"ext":{"Sig":"AAAA","topic":"x"},"opaque":1000000000,"v":1}"#,
        ];
        let frames = RouteFrames::from_headers(headers.iter().map(|h| Ok(h.as_bytes().to_vec()))).unwrap();
        let mut out = Vec::new();
        frames.push(1, 1_000_000_042, &mut out);
        let want = headers[1].replace("1000000000", "1000000042");
        assert_eq!(&out[8..], want.as_bytes());
        assert_eq!(out[..8], [0, 0, 0, 4 + want.len() as u8, 0, 0, 0, want.len() as u8]);
        out.clear();
        frames.push(2, 1_000_000_000, &mut out);
        assert_eq!(&out[8..], headers[2].as_bytes());
        let late = [r#"{"opaque":1000000000,"a":1}"#, r#"{"opaque":1000000000,"a":2}"#];
        let err = RouteFrames::from_headers(late.iter().map(|h| Ok(h.as_bytes().to_vec()))).err();
        assert!(err.is_some(), "headers differing after the opaque are refused");
    }

    #[test]
    fn header_integers_are_read_whole_and_signed() {
        let key = memmem::Finder::new(b"\"code\":");
        assert_eq!(json_int(br#"{"code":-12,"x":1}"#, &key), Some(-12));
        assert_eq!(json_int(br#"{"a":"b","code":2147483647}"#, &key), Some(i32::MAX));
        assert_eq!(json_int(br#"{"code":2147483648}"#, &key), None);
        assert_eq!(json_int(br#"{"code":"x"}"#, &key), None);
        assert_eq!(json_int(br#"{"code":}"#, &key), None);
        assert_eq!(json_int(br#"{"nocode":1}"#, &key), None);
    }
}
