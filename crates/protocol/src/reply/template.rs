//! Replies that differ only in their opaque (every route the route lane finds), framed by
//! copying a header encoded once around the opaque's digits: no command to build and no header
//! to encode per reply.

use bytes::{BufMut, BytesMut};

use crate::command::{RemotingCommand, SerializeType};
use crate::header::json;

/// The JSON header of one reply, encoded but for its opaque.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyTemplate {
    /// The header up to the opaque's digits.
    before: Box<[u8]>,
    /// The header after them.
    after: Box<[u8]>,
}

impl ReplyTemplate {
    /// The template of `cmd`'s header (its opaque left open), when that header is JSON.
    ///
    /// The place of the opaque is found by encoding the header with opaque 0 and with opaque 1
    /// and taking the one byte where they differ, so the template is whatever the header
    /// encoder writes, field order included.
    pub fn json(cmd: &RemotingCommand) -> Option<Self> {
        if cmd.serialize_type != SerializeType::Json {
            return None;
        }
        let encoded = |opaque| {
            let mut header = Vec::new();
            json::encode(&RemotingCommand { opaque, body: None, ..cmd.clone() }, &mut header);
            header
        };
        let (zero, one) = (encoded(0), encoded(1));
        let at = zero.iter().zip(&one).position(|(a, b)| a != b)?;
        let same_after = zero.len() == one.len() && zero[at + 1..] == one[at + 1..];
        same_after.then(|| ReplyTemplate { before: zero[..at].into(), after: zero[at + 1..].into() })
    }

    /// Appends the frame of this reply with `opaque` and `body`.
    pub fn put_frame(&self, opaque: i32, body: &[u8], dst: &mut BytesMut) {
        dst.reserve(8 + self.before.len() + 11 + self.after.len() + body.len());
        self.put_head(opaque, body.len(), dst);
        dst.put_slice(body);
    }

    /// Appends the frame of the reply to `opaque` without its body of `body_len` bytes, which
    /// must follow it on the wire.
    pub fn put_head(&self, opaque: i32, body_len: usize, dst: &mut BytesMut) {
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(opaque).as_bytes();
        let header_len = self.before.len() + digits.len() + self.after.len();
        dst.reserve(8 + header_len);
        dst.put_u32((4 + header_len + body_len) as u32);
        dst.put_u32(((SerializeType::Json as u32) << 24) | header_len as u32);
        dst.put_slice(&self.before);
        dst.put_slice(digits);
        dst.put_slice(&self.after);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::encode_frame;
    use crate::{ExtFields, LanguageCode, ResponseCode};

    /// Framed from the template, a reply is byte for byte what encoding the command gives.
    #[test]
    fn frames_what_encoding_the_command_frames() {
        let found = RemotingCommand::response(ResponseCode::Success, None);
        let mut with_all = RemotingCommand::response(ResponseCode::TopicNotExist, Some("no \"route\"".into()));
        with_all.language = Some(LanguageCode::Java);
        with_all.version = 479;
        with_all.ext_fields = Some(ExtFields::new().with("k", "v"));
        let body = br#"{"brokerDatas":[],"queueDatas":[]}"#;
        for cmd in [found, with_all] {
            let template = ReplyTemplate::json(&cmd).expect("a JSON header");
            for opaque in [0, 1, -1, 7, 10, 42, 99, 100, 1_234_567, i32::MIN, i32::MAX] {
                for body in [&body[..], b""] {
                    let mut expected = BytesMut::new();
                    let reply = RemotingCommand {
                        opaque,
                        body: (!body.is_empty()).then(|| body.to_vec().into()),
                        ..cmd.clone()
                    };
                    encode_frame(&reply, &mut expected).unwrap();
                    let mut framed = BytesMut::new();
                    template.put_frame(opaque, body, &mut framed);
                    assert_eq!(framed, expected, "opaque {opaque}, {} body bytes", body.len());
                    let mut head = BytesMut::new();
                    template.put_head(opaque, body.len(), &mut head);
                    assert_eq!([&head[..], body].concat(), expected, "the head, then the body");
                }
            }
        }
    }

    #[test]
    fn a_binary_header_has_no_template() {
        let cmd = RemotingCommand {
            serialize_type: SerializeType::RocketMq,
            ..RemotingCommand::response(ResponseCode::Success, None)
        };
        assert_eq!(ReplyTemplate::json(&cmd), None);
    }
}
