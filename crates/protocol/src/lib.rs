//! namesrv-protocol: the RocketMQ remoting protocol as the NameServer speaks it — framing
//! (`codec`), headers (`header_json` with its fast `header_scan`, `header_binary`, typed
//! `header`), codes, JSON output styles (`json`), request bodies (`body`, `compressed`,
//! `register_body`, `register_json` with its fast `register_scan`, `lenient`; each decode
//! carries its limits and its `pace` in a `DecodeContext`), response bodies (`response_body`),
//! the session-credential signature (`acl_signature`), the body CRC brokers send, and the route
//! values bodies and tables share (`model`). No actix, no I/O, no state: the server, its tools
//! and its tests build on it alike.
#![forbid(unsafe_code)]

pub mod acl_signature;
pub mod body;
pub mod code;
pub mod codec;
pub mod command;
pub mod compressed;
pub mod header;
pub mod header_binary;
pub mod header_json;
pub mod header_scan;
pub mod json;
mod json_cursor;
pub mod lenient;
pub mod model;
pub mod pace;
pub mod register_body;
pub mod register_json;
pub mod register_scan;
pub mod reply_template;
pub mod response_body;
pub mod route_layout;
pub mod sniff;

pub use code::{LanguageCode, RequestCode, ResponseCode};
pub use codec::{CodecError, RemotingCodec};
pub use command::{ExtFields, RemotingCommand, SerializeType};

/// CRC-32 of a body with the top bit cleared, as brokers send it in `bodyCrc32` (Java's
/// `UtilAll.crc32`, an int that is never negative).
pub fn body_crc32(body: &[u8]) -> u32 {
    crc32fast::hash(body) & 0x7FFF_FFFF
}
