//! namesrv-client: one RocketMQ remoting connection to a NameServer — single calls and pipelined
//! batches (many requests in flight, answers matched by `opaque`), requests queued and flushed
//! by the caller, every request signed when credentials are given, over plain TCP or TLS (with a
//! client certificate for mutual TLS). `raw` adds byte-level writes and reads for tools and
//! tests that make or scan frames themselves; `blocking` wraps it all for callers without a
//! runtime of their own.
#![forbid(unsafe_code)]

pub mod blocking;
mod conn;
mod error;
mod raw;
#[cfg(test)]
mod tests;
pub mod tls;

pub use conn::{Conn, ConnectOptions, Incoming, DEFAULT_MAX_ANSWER_BYTES};
pub use error::ClientError;
