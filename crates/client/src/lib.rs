//! namesrv-client: one RocketMQ remoting connection to a NameServer — single calls and pipelined
//! batches (many requests in flight, answers matched by `opaque`), every request signed when
//! credentials are given, over plain TCP or TLS (with a client certificate for mutual TLS).
//! `blocking` wraps it for callers without a runtime of their own.
#![forbid(unsafe_code)]

pub mod blocking;
mod conn;
pub mod tls;

pub use conn::{ClientError, Conn, ConnectOptions};
