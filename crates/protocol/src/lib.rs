//! namesrv-protocol: the RocketMQ remoting protocol as the NameServer speaks it, in folders by
//! subject — framing (`codec`, with `sniff` for peers that speak something else), one command
//! (`command`) and its codes (`code`), headers (`header`: JSON with its fast readers, binary,
//! typed fields), request bodies (`body`: the register body's forms, topic and version bodies),
//! JSON output and leniency (`json`), what is answered (`reply`: response bodies, reply
//! templates), the controller protocol of RocketMQ 5 (`controller`: its codes, headers and
//! bodies), the session-credential signature (`signature`), the body CRC brokers send, and
//! the route values bodies and tables share (`model`). No actix, no I/O, no state: the server,
//! its tools and its tests build on it alike. `testing` opens the fast readers to the fuzz
//! targets and benchmarks.
#![forbid(unsafe_code)]

pub mod body;
pub mod code;
pub mod codec;
pub mod command;
pub mod controller;
pub mod header;
pub mod json;
pub mod model;
pub mod reply;
pub mod signature;
pub mod sniff;
pub mod testing;

pub use code::{LanguageCode, RequestCode, ResponseCode};
pub use codec::{CodecError, RemotingCodec};
pub use command::{ExtFields, RemotingCommand, SerializeType};

/// CRC-32 of a body with the top bit cleared, as brokers send it in `bodyCrc32` (Java's
/// `UtilAll.crc32`, an int that is never negative).
pub fn body_crc32(body: &[u8]) -> u32 {
    crc32fast::hash(body) & 0x7FFF_FFFF
}
