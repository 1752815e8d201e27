//! The ROCKETMQ binary header (serialize type 1), big-endian, laid out as Java's `RocketMQSerializable` writes it:
//!
//! ```text
//! code:i16 | language:u8 | version:i16 | opaque:i32 | flag:i32 |
//! remark_len:i32 | remark | ext_len:i32 | (key_len:i16 key val_len:i32 val)*
//! ```

use thiserror::Error;

use crate::code::LanguageCode;
use crate::command::{ExtFields, RemotingCommand, SerializeType};

/// Why a binary header could not be read; the connection is closed for any of these.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum BinaryHeaderError {
    /// The header ended before a fixed-size field.
    #[error("binary header truncated: needed {needed} bytes at offset {offset}, have {len}")]
    Truncated { needed: usize, offset: usize, len: usize },
    /// A length field was negative or pointed past the header.
    #[error("binary header {field} length {got} out of range (header is {len} bytes)")]
    BadLength { field: &'static str, got: i64, len: usize },
}

/// A cursor over the header bytes that never reads past the end.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], BinaryHeaderError> {
        let end = self.pos.checked_add(n).filter(|end| *end <= self.buf.len()).ok_or(BinaryHeaderError::Truncated {
            needed: n,
            offset: self.pos,
            len: self.buf.len(),
        })?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], BinaryHeaderError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn i16(&mut self) -> Result<i16, BinaryHeaderError> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    fn i32(&mut self) -> Result<i32, BinaryHeaderError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// A length-prefixed string; a zero length reads as `None`, as in Java.
    fn string(&mut self, field: &'static str, len: i64) -> Result<Option<String>, BinaryHeaderError> {
        if len < 0 || len as usize > self.buf.len() {
            return Err(BinaryHeaderError::BadLength { field, got: len, len: self.buf.len() });
        }
        if len == 0 {
            return Ok(None);
        }
        Ok(Some(String::from_utf8_lossy(self.take(len as usize)?).into_owned()))
    }
}

/// Reads a binary header into a command without body.
pub fn decode(header: &[u8]) -> Result<RemotingCommand, BinaryHeaderError> {
    let mut r = Reader { buf: header, pos: 0 };
    let code = r.i16()? as i32;
    let language = LanguageCode::from_u8(r.array::<1>()?[0]);
    let version = r.i16()? as i32;
    let opaque = r.i32()?;
    let flag = r.i32()?;
    let remark_len = r.i32()? as i64;
    let remark = r.string("remark", remark_len)?;
    let ext_len = r.i32()? as i64;
    if ext_len < 0 || ext_len as usize > header.len() {
        return Err(BinaryHeaderError::BadLength { field: "extFields", got: ext_len, len: header.len() });
    }
    let ext_fields = if ext_len == 0 {
        None
    } else {
        let mut map = Reader { buf: r.take(ext_len as usize)?, pos: 0 };
        let mut fields = ExtFields::new();
        while map.pos < map.buf.len() {
            let key_len = map.i16()? as i64;
            let key = map.string("ext key", key_len)?;
            let val_len = map.i32()? as i64;
            let value = map.string("ext value", val_len)?;
            if let (Some(k), Some(v)) = (key, value) {
                fields.insert(k, v);
            }
        }
        Some(fields)
    };
    Ok(RemotingCommand {
        code,
        language,
        version,
        opaque,
        flag,
        remark,
        ext_fields,
        body: None,
        serialize_type: SerializeType::RocketMq,
    })
}

/// Writes the header of `cmd` in binary form.
pub fn encode(cmd: &RemotingCommand, out: &mut Vec<u8>) {
    out.extend_from_slice(&(cmd.code as i16).to_be_bytes());
    out.push(cmd.language.map_or(0, |l| l as u8));
    out.extend_from_slice(&(cmd.version as i16).to_be_bytes());
    out.extend_from_slice(&cmd.opaque.to_be_bytes());
    out.extend_from_slice(&cmd.flag.to_be_bytes());
    let remark = cmd.remark.as_deref().unwrap_or("");
    out.extend_from_slice(&(remark.len() as i32).to_be_bytes());
    out.extend_from_slice(remark.as_bytes());
    let len_at = out.len();
    out.extend_from_slice(&[0; 4]);
    if let Some(ext) = &cmd.ext_fields {
        for (k, v) in ext.iter() {
            out.extend_from_slice(&(k.len() as i16).to_be_bytes());
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(&(v.len() as i32).to_be_bytes());
            out.extend_from_slice(v.as_bytes());
        }
    }
    let ext_len = (out.len() - len_at - 4) as i32;
    out[len_at..len_at + 4].copy_from_slice(&ext_len.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(cmd: &RemotingCommand) -> Vec<u8> {
        let mut out = Vec::new();
        encode(cmd, &mut out);
        out
    }

    #[test]
    fn header_sizes_match_java_rocketmq_serializable_test() {
        let mut cmd = RemotingCommand::request(103, None);
        cmd.version = 2333;
        assert_eq!(encoded(&cmd).len(), 21);
        cmd.remark = Some("Sample Remark".into());
        assert_eq!(encoded(&cmd).len(), 34);
        cmd.remark = None;
        cmd.ext_fields = Some(ExtFields::new().with("key", "value"));
        assert_eq!(encoded(&cmd).len(), 35);
        let back = decode(&encoded(&cmd)).unwrap();
        assert_eq!((back.code, back.version), (103, 2333));
        assert_eq!(back.ext("key"), Some("value"));
    }

    #[test]
    fn empty_strings_read_back_as_absent() {
        let mut cmd = RemotingCommand::request(105, Some(ExtFields::new().with("topic", "").with("a", "b")));
        cmd.remark = Some(String::new());
        let back = decode(&encoded(&cmd)).unwrap();
        assert_eq!(back.remark, None);
        assert_eq!(back.ext("topic"), None);
        assert_eq!(back.ext("a"), Some("b"));
    }

    #[test]
    fn lengths_past_the_header_are_errors() {
        let mut bytes = encoded(&RemotingCommand::request(105, Some(ExtFields::new().with("topic", "T"))));
        let ext_len_at = 17;
        bytes[ext_len_at..ext_len_at + 4].copy_from_slice(&1000i32.to_be_bytes());
        assert!(matches!(decode(&bytes), Err(BinaryHeaderError::BadLength { .. })));
        bytes[13..17].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(decode(&bytes).is_err());
        assert!(matches!(decode(&bytes[..10]), Err(BinaryHeaderError::Truncated { .. })));
    }
}
