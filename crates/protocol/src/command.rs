//! `RemotingCommand`: one request or response as it travels on the wire, minus framing.

use bytes::Bytes;

use crate::code::{LanguageCode, ResponseCode};

/// Flag bit 0: the frame is a response.
pub const FLAG_RESPONSE: i32 = 1;
/// Flag bit 1: the request is oneway and must never be answered.
pub const FLAG_ONEWAY: i32 = 2;

/// How a header is serialized; the high byte of the frame's second word (Java's `RemotingCommand` framing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SerializeType {
    Json = 0,
    RocketMq = 1,
}

impl SerializeType {
    /// The name Java writes in `serializeTypeCurrentRPC`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Json => "JSON",
            Self::RocketMq => "ROCKETMQ",
        }
    }
}

/// The custom header fields of a command: every value is a string (Java's `makeCustomHeaderToNet`).
///
/// Kept as a small vector: headers hold a handful of keys and lookups are linear anyway.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtFields(Vec<(String, String)>);

impl ExtFields {
    /// An empty field set (written as `{}`).
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Sets `key`, replacing an earlier value.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>) {
        let key = key.into();
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// Removes `key` and hands over its value, if present.
    pub fn take(&mut self, key: &str) -> Option<String> {
        let at = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.swap_remove(at).1)
    }

    /// Builder form of [`ExtFields::insert`].
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.insert(key, value);
        self
    }

    /// Entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for ExtFields {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut fields = ExtFields::new();
        for (k, v) in iter {
            fields.insert(k, v);
        }
        fields
    }
}

/// One RocketMQ remoting command: header fields plus an optional body.
#[derive(Debug, Clone, PartialEq)]
pub struct RemotingCommand {
    /// Request code in a request, response code in a response.
    pub code: i32,
    /// The sender's language; `None` when the sender used a name or number we do not know.
    pub language: Option<LanguageCode>,
    /// The sender's MQVersion ordinal.
    pub version: i32,
    /// Request id; a response copies it from its request.
    pub opaque: i32,
    /// Bit 0 response, bit 1 oneway.
    pub flag: i32,
    /// Free text, mostly error descriptions.
    pub remark: Option<String>,
    /// Custom header fields; `None` is "no extFields at all", which Java treats differently from `{}`.
    pub ext_fields: Option<ExtFields>,
    /// The body; `None` when the frame carried zero body bytes (Java's null body).
    pub body: Option<Bytes>,
    /// The header serialization this command was read with, or will be written with.
    pub serialize_type: SerializeType,
}

impl RemotingCommand {
    /// A request with the given code and fields, as a Java 5.3.3 client would send it.
    pub fn request(code: i32, ext_fields: Option<ExtFields>) -> Self {
        Self {
            code,
            language: Some(LanguageCode::Java),
            version: crate::code::version::V5_3_3,
            opaque: 0,
            flag: 0,
            remark: None,
            ext_fields,
            body: None,
            serialize_type: SerializeType::Json,
        }
    }

    /// A response skeleton; the dispatcher fills in `opaque`, flag and serialization.
    pub fn response(code: ResponseCode, remark: Option<String>) -> Self {
        Self { code: code as i32, remark, flag: FLAG_RESPONSE, ..Self::request(0, None) }
    }

    /// True for a frame that answers an earlier request.
    pub fn is_response(&self) -> bool {
        self.flag & FLAG_RESPONSE != 0
    }

    /// True for a request that must never be answered.
    pub fn is_oneway(&self) -> bool {
        self.flag & FLAG_ONEWAY != 0
    }

    /// The value of an ext field, if the command has it.
    pub fn ext(&self, key: &str) -> Option<&str> {
        self.ext_fields.as_ref().and_then(|f| f.get(key))
    }

    /// Builder: sets the body.
    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Builder: sets the opaque.
    pub fn with_opaque(mut self, opaque: i32) -> Self {
        self.opaque = opaque;
        self
    }
}
