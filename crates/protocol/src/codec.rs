//! Framing of `RemotingCommand`s on a TCP stream (Java's `RemotingCommand` encode/decode).
//!
//! ```text
//! +----------------+----------------------+------------------+-----------------+
//! | total_len : 4B | type|hdr_len : 4B    | header : hdr_len | body : rest     |
//! +----------------+----------------------+------------------+-----------------+
//! total_len = 4 + hdr_len + body_len   (does not count itself), big-endian
//! type      = high byte of the 2nd word: 0 = JSON, 1 = ROCKETMQ (binary)
//! hdr_len   = low 24 bits of the 2nd word
//! ```
//!
//! Every length is checked against the configured frame limit before any buffer grows for it,
//! so a hostile length prefix costs nothing. A body of zero bytes decodes as no body (Java's null).

use bytes::{Buf, BufMut, BytesMut};
use thiserror::Error;
#[cfg(feature = "codec")]
use tokio_util::codec::{Decoder, Encoder};

use crate::command::{RemotingCommand, SerializeType};
use crate::header::binary::{self, BinaryHeaderError};
use crate::header::{json, scan, RouteHeader};

/// Java's default `com.rocketmq.remoting.frameMaxLength`: 16 MiB including the length field.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Largest header the 24-bit length can describe.
const MAX_HEADER_BYTES: usize = (1 << 24) - 1;

/// A frame that cannot be read; the connection that sent it is closed.
#[derive(Debug, Error)]
pub enum CodecError {
    /// The length prefix (plus its own 4 bytes) exceeds the frame limit.
    #[error("frame too large: got {got} bytes, max {max}")]
    FrameTooLarge { got: u64, max: usize },
    /// The length prefix is negative or too small to hold the header-length word.
    #[error("invalid frame length {0}")]
    InvalidLength(i32),
    /// The header length points past the end of the frame.
    #[error("header length {header} exceeds frame length {frame}")]
    HeaderTooLong { header: usize, frame: usize },
    /// The serialize-type byte is neither JSON (0) nor ROCKETMQ (1).
    #[error("unknown serialize type {0}")]
    UnknownSerializeType(u8),
    /// The JSON header does not parse.
    #[error("bad json header: {0}")]
    JsonHeader(#[from] serde_json::Error),
    /// The binary header's lengths do not add up.
    #[error("bad binary header: {0}")]
    BinaryHeader(#[from] BinaryHeaderError),
    /// An outgoing header is larger than 24 bits can describe.
    #[error("header too large to encode: {0} bytes")]
    HeaderTooLarge(usize),
    /// The socket failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// The tokio codec for RemotingCommand frames, with a configurable frame limit.
#[derive(Debug, Clone)]
pub struct RemotingCodec {
    max_frame_bytes: usize,
}

impl Default for RemotingCodec {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_FRAME_BYTES)
    }
}

impl RemotingCodec {
    /// A codec that rejects frames whose length field plus 4 exceeds `max_frame_bytes`.
    pub fn new(max_frame_bytes: usize) -> Self {
        Self { max_frame_bytes }
    }

    /// The whole frame at the front of `src` when it is a plain route query (a JSON header that
    /// [`crate::header::scan::scan_route`] reads, no body): its header and its size in bytes. `None`
    /// for anything else, which [`Decoder::decode`] then reads as a command.
    pub fn peek_route<'s>(&self, src: &'s [u8]) -> Option<(RouteHeader<'s>, usize)> {
        let total = u32::from_be_bytes(src.get(..4)?.try_into().ok()?) as usize;
        let word = u32::from_be_bytes(src.get(4..8)?.try_into().ok()?);
        let (json, header_len) = (word >> 24 == 0, (word & 0x00FF_FFFF) as usize);
        if !json || header_len + 4 != total || total + 4 > self.max_frame_bytes {
            return None;
        }
        let header = scan::scan_route(src.get(8..8 + header_len)?)?;
        Some((header, total + 4))
    }
}

impl RemotingCodec {
    /// Takes the next whole frame off the front of `src` as a command; `None` until it has
    /// arrived (room for it reserved, up to 64 KiB at a time). A bad length or header word is
    /// an error as soon as its bytes are there.
    pub fn decode_frame(&self, src: &mut BytesMut) -> Result<Option<RemotingCommand>, CodecError> {
        if src.len() < 4 {
            return Ok(None);
        }
        let total = i32::from_be_bytes([src[0], src[1], src[2], src[3]]);
        if total < 4 {
            return Err(CodecError::InvalidLength(total));
        }
        let frame_len = total as usize;
        if frame_len as u64 + 4 > self.max_frame_bytes as u64 {
            return Err(CodecError::FrameTooLarge { got: frame_len as u64 + 4, max: self.max_frame_bytes });
        }
        if src.len() >= 8 {
            // Reject a bad header word as soon as it arrives, not when the whole frame has.
            let word = [src[4], src[5], src[6], src[7]];
            let header_len = u32::from_be_bytes([0, word[1], word[2], word[3]]) as usize;
            if header_len > frame_len - 4 {
                return Err(CodecError::HeaderTooLong { header: header_len, frame: frame_len });
            }
            if word[0] > 1 {
                return Err(CodecError::UnknownSerializeType(word[0]));
            }
        }
        if src.len() < 4 + frame_len {
            src.reserve((4 + frame_len - src.len()).min(64 * 1024));
            return Ok(None);
        }
        src.advance(4);
        let mut frame = src.split_to(frame_len);
        let word = frame.get_u32();
        let header_len = (word & 0x00FF_FFFF) as usize;
        let header = frame.split_to(header_len);
        let mut cmd = match (word >> 24) as u8 {
            0 => json::decode(&header)?,
            _ => binary::decode(&header)?,
        };
        if !frame.is_empty() {
            cmd.body = Some(frame.freeze());
        }
        Ok(Some(cmd))
    }
}

#[cfg(feature = "codec")]
impl Decoder for RemotingCodec {
    type Item = RemotingCommand;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<RemotingCommand>, CodecError> {
        self.decode_frame(src)
    }
}

#[cfg(feature = "codec")]
impl Encoder<RemotingCommand> for RemotingCodec {
    type Error = CodecError;

    fn encode(&mut self, cmd: RemotingCommand, dst: &mut BytesMut) -> Result<(), CodecError> {
        encode_frame(&cmd, dst)
    }
}

/// The size of the frame whose start is buffered in `src` (length field included), once its
/// length field has arrived; `None` before that or for a length that is not positive.
pub fn announced_frame_bytes(src: &[u8]) -> Option<usize> {
    let prefix: [u8; 4] = src.get(..4)?.try_into().ok()?;
    usize::try_from(i32::from_be_bytes(prefix)).ok().map(|len| len + 4)
}

/// Appends one complete frame for `cmd` to `dst`, using `cmd.serialize_type` for the header.
/// The header is encoded into a buffer each thread keeps, so a reply allocates nothing of its own.
pub fn encode_frame(cmd: &RemotingCommand, dst: &mut BytesMut) -> Result<(), CodecError> {
    thread_local! {
        static HEADER: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(Vec::with_capacity(256));
    }
    HEADER.with(|header| match header.try_borrow_mut() {
        Ok(mut header) => encode_with(cmd, &mut header, dst),
        Err(_) => encode_with(cmd, &mut Vec::new(), dst),
    })
}

/// [`encode_frame`] with `header` as the scratch buffer of the header (cleared first; large ones
/// are let go of after use).
fn encode_with(cmd: &RemotingCommand, header: &mut Vec<u8>, dst: &mut BytesMut) -> Result<(), CodecError> {
    header.clear();
    match cmd.serialize_type {
        SerializeType::Json => json::encode(cmd, header),
        SerializeType::RocketMq => binary::encode(cmd, header),
    }
    let header_len = header.len();
    let result = put_frame(cmd, header, dst);
    if header_len > 64 * 1024 {
        *header = Vec::with_capacity(256);
    }
    result
}

/// Appends the frame of `cmd` with its encoded `header` to `dst`.
fn put_frame(cmd: &RemotingCommand, header: &[u8], dst: &mut BytesMut) -> Result<(), CodecError> {
    if header.len() > MAX_HEADER_BYTES {
        return Err(CodecError::HeaderTooLarge(header.len()));
    }
    let body_len = cmd.body.as_ref().map_or(0, |b| b.len());
    dst.reserve(8 + header.len() + body_len);
    dst.put_u32((4 + header.len() + body_len) as u32);
    dst.put_u32(((cmd.serialize_type as u32) << 24) | header.len() as u32);
    dst.put_slice(header);
    if let Some(body) = &cmd.body {
        dst.put_slice(body);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::ExtFields;

    fn hex(s: &str) -> Vec<u8> {
        let clean: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (0..clean.len()).step_by(2).map(|i| u8::from_str_radix(&clean[i..i + 2], 16).unwrap()).collect()
    }

    fn route_request() -> RemotingCommand {
        RemotingCommand::request(105, Some(ExtFields::new().with("topic", "TopicTest"))).with_opaque(42)
    }

    fn encoded(cmd: &RemotingCommand) -> BytesMut {
        let mut out = BytesMut::new();
        encode_frame(cmd, &mut out).unwrap();
        out
    }

    #[test]
    fn json_frame_matches_the_java_hex_vector() {
        // The Java client's GET_ROUTEINFO_BY_TOPIC frame with a JSON header.
        let expected =
            hex("00 00 00 88 00 00 00 84 7b 22 63 6f 64 65 22 3a 31 30 35 2c 22 65 78 74 46 69 65 6c 64 73 22 3a \
             7b 22 74 6f 70 69 63 22 3a 22 54 6f 70 69 63 54 65 73 74 22 7d 2c 22 66 6c 61 67 22 3a 30 2c 22 \
             6c 61 6e 67 75 61 67 65 22 3a 22 4a 41 56 41 22 2c 22 6f 70 61 71 75 65 22 3a 34 32 2c 22 73 65 \
             72 69 61 6c 69 7a 65 54 79 70 65 43 75 72 72 65 6e 74 52 50 43 22 3a 22 4a 53 4f 4e 22 2c 22 76 \
             65 72 73 69 6f 6e 22 3a 34 37 39 7d");
        assert_eq!(expected.len(), 140);
        assert_eq!(&encoded(&route_request())[..], &expected[..]);
        let back = RemotingCodec::default().decode(&mut BytesMut::from(&expected[..])).unwrap().unwrap();
        assert_eq!(back, route_request());
    }

    #[test]
    fn binary_frame_matches_the_java_hex_vector() {
        // The same request with a ROCKETMQ binary header (Java's `RocketMQSerializable`).
        let expected = hex("00 00 00 2d 01 00 00 29 00 69 00 01 df 00 00 00 2a 00 00 00 00 00 00 00 00 \
             00 00 00 14 00 05 74 6f 70 69 63 00 00 00 09 54 6f 70 69 63 54 65 73 74");
        assert_eq!(expected.len(), 49);
        let mut cmd = route_request();
        cmd.serialize_type = SerializeType::RocketMq;
        assert_eq!(&encoded(&cmd)[..], &expected[..]);
        let back = RemotingCodec::default().decode(&mut BytesMut::from(&expected[..])).unwrap().unwrap();
        assert_eq!(back, cmd);
    }

    #[test]
    fn header_length_word_vectors_from_remoting_command_test() {
        let json_type = SerializeType::Json as u32;
        assert_eq!((json_type << 24 | 261).to_be_bytes(), [0x00, 0x00, 0x01, 0x05]);
        assert_eq!((1u32 << 24 | 16_777_215).to_be_bytes(), [0x01, 0xFF, 0xFF, 0xFF]);
    }

    #[test]
    fn a_frame_fed_byte_by_byte_decodes_once_complete() {
        let mut cmd = route_request();
        cmd.body = Some(bytes::Bytes::from_static(b"hello body"));
        for serialize_type in [SerializeType::Json, SerializeType::RocketMq] {
            cmd.serialize_type = serialize_type;
            let frame = encoded(&cmd);
            let mut codec = RemotingCodec::default();
            let mut buf = BytesMut::new();
            for (i, byte) in frame.iter().enumerate() {
                buf.put_u8(*byte);
                let got = codec.decode(&mut buf).unwrap();
                if i + 1 < frame.len() {
                    assert!(got.is_none(), "decoded early at byte {i}");
                } else {
                    assert_eq!(got.unwrap(), cmd);
                }
            }
            assert!(buf.is_empty());
        }
    }

    #[test]
    fn two_frames_in_one_buffer_decode_in_order() {
        let mut buf = encoded(&route_request().with_opaque(1));
        buf.extend_from_slice(&encoded(&route_request().with_opaque(2)));
        let mut codec = RemotingCodec::default();
        assert_eq!(codec.decode(&mut buf).unwrap().unwrap().opaque, 1);
        assert_eq!(codec.decode(&mut buf).unwrap().unwrap().opaque, 2);
        assert!(codec.decode(&mut buf).unwrap().is_none());
    }

    #[test]
    fn frame_limit_accepts_the_limit_and_rejects_one_more() {
        let limit = 1024;
        let mut codec = RemotingCodec::new(limit);
        let mut cmd = route_request();
        let header_len = encoded(&cmd).len() - 8;
        // total_len + 4 == limit exactly
        cmd.body = Some(vec![b'x'; limit - 8 - header_len].into());
        let frame = encoded(&cmd);
        assert_eq!(frame.len(), limit);
        assert!(codec.decode(&mut BytesMut::from(&frame[..])).unwrap().is_some());
        cmd.body = Some(vec![b'x'; limit - 8 - header_len + 1].into());
        let frame = encoded(&cmd);
        let err = codec.decode(&mut BytesMut::from(&frame[..4])).unwrap_err();
        assert!(matches!(err, CodecError::FrameTooLarge { got, max } if got == limit as u64 + 1 && max == limit));
    }

    #[test]
    fn hostile_lengths_are_rejected_before_buffering() {
        let mut codec = RemotingCodec::default();
        for prefix in [[0x80, 0, 0, 0], [0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 3]] {
            assert!(matches!(codec.decode(&mut BytesMut::from(&prefix[..])), Err(CodecError::InvalidLength(_))));
        }
        let two_gib = [0x7F, 0xFF, 0xFF, 0xFF];
        assert!(matches!(codec.decode(&mut BytesMut::from(&two_gib[..])), Err(CodecError::FrameTooLarge { .. })));
        // header length larger than the frame
        let inconsistent = [0, 0, 0, 8, 0, 0, 0, 9];
        assert!(matches!(codec.decode(&mut BytesMut::from(&inconsistent[..])), Err(CodecError::HeaderTooLong { .. })));
        let bad_type = [0, 0, 0, 8, 2, 0, 0, 1];
        assert!(matches!(codec.decode(&mut BytesMut::from(&bad_type[..])), Err(CodecError::UnknownSerializeType(2))));
        let bad_json = [0, 0, 0, 6, 0, 0, 0, 2, b'{', b'x'];
        assert!(matches!(codec.decode(&mut BytesMut::from(&bad_json[..])), Err(CodecError::JsonHeader(_))));
    }

    #[test]
    fn peek_route_takes_only_a_whole_plain_route_frame() {
        let codec = RemotingCodec::new(1 << 20);
        let frame = |cmd: &RemotingCommand| {
            let mut out = BytesMut::new();
            encode_frame(cmd, &mut out).unwrap();
            out
        };
        let route =
            RemotingCommand { opaque: 9, ..RemotingCommand::request(105, Some(ExtFields::new().with("topic", "T"))) };
        let mut plain = frame(&route);
        plain.extend_from_slice(&frame(&route)[..10]);
        let (header, size) = codec.peek_route(&plain).expect("a plain route query");
        assert_eq!((header.topic, header.opaque, size), ("T", 9, plain.len() - 10));
        assert!(codec.peek_route(&plain[..size - 1]).is_none(), "not whole yet");
        let with_body = frame(&route.clone().with_body(b"x".to_vec()));
        let binary = frame(&RemotingCommand { serialize_type: SerializeType::RocketMq, ..route.clone() });
        let other = frame(&RemotingCommand { code: 106, ..route.clone() });
        for other in [&with_body[..], &binary[..], &other[..], &plain[..7]] {
            assert!(codec.peek_route(other).is_none());
        }
        assert!(RemotingCodec::new(size - 1).peek_route(&plain).is_none(), "over the frame limit: the codec's error");
    }
}
