//! namesrv: a wire-compatible Apache RocketMQ NameServer built on actix actors.
//!
//! # Layout
//! - [`protocol`]: framing (`codec`), headers (`header_json`, `header_binary`, typed `header`),
//!   codes, JSON output styles (`json`) and request bodies (`body`, `lenient`). No I/O, no state.
//! - [`model`]: route values shared by bodies and tables (QueueData, BrokerData, DataVersion).
//! - [`registry`]: the `RouteRegistry` actor owning every route table (`tables`), registration
//!   (`register`), removal and heartbeats (`liveness`), and encoded responses (`view`).
//! - [`dispatch`]: request → registry message → response, with every error mapped to a code.
//! - [`connection`]: the per-socket actor; [`server`]: bind and accept.
//! - [`settings`]: layered configuration.
#![forbid(unsafe_code)]

pub mod connection;
pub mod dispatch;
pub mod model;
pub mod protocol;
pub mod registry;
pub mod server;
pub mod settings;
