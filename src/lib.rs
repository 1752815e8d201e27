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
//! - [`kv`]: the KV config store actor; [`config_store`]: runtime configuration actor;
//!   [`persist`]: crash-safe file writes; [`notifier`]: outbound NOTIFY_MIN_BROKER_ID_CHANGE.
//! - [`mailbox`]: typed, counted, logged actor requests shared by every actor.
//! - [`settings`]: layered configuration (TOML or Java properties).
#![forbid(unsafe_code)]

pub mod config_store;
pub mod connection;
pub mod dispatch;
pub mod kv;
pub mod mailbox;
pub mod model;
pub mod notifier;
pub mod persist;
pub mod protocol;
pub mod registry;
pub mod server;
pub mod settings;
