//! The RocketMQ remoting protocol: framing, headers, codes and bodies. No I/O and no state.

pub mod acl_signature;
pub mod body;
pub mod code;
pub mod codec;
pub mod command;
pub mod compressed;
pub mod header;
pub mod header_binary;
pub mod header_json;
pub mod json;
pub mod lenient;
pub mod pace;
pub mod register_body;
pub mod response_body;
pub mod sniff;

pub use code::{LanguageCode, RequestCode, ResponseCode};
pub use codec::{CodecError, RemotingCodec};
pub use command::{ExtFields, RemotingCommand, SerializeType};
