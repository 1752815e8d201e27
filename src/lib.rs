//! namesrv: a wire-compatible Apache RocketMQ NameServer built on actix actors.
//!
//! # Layout
//! - [`protocol`] (the `namesrv-protocol` crate in `crates/protocol`, re-exported), in folders
//!   by subject: framing (`codec`), headers (`header`: JSON with its fast readers, binary,
//!   typed fields), codes, request bodies (`body`: the register body's forms, each decode
//!   carrying its limits and pacing in a `DecodeContext`), JSON styles and leniency (`json`),
//!   what is answered (`reply`: response bodies, reply templates), the session-credential
//!   signature (`signature`) and the body CRC. No actix, no I/O, no state.
//! - [`model`]: route values shared by bodies and tables (QueueData, BrokerData, DataVersion),
//!   also from `namesrv-protocol`.
//! - [`registry`]: the `RouteRegistry` actor owning every route table (`tables`, which alone
//!   changes them and keeps the cached bodies right), liveness entries (`live`), registration
//!   (`register`), removal and heartbeats (`liveness`), admin changes (`admin`), what a
//!   route query sees (`view`, `cache`), the expiry tick and its punctuality (`expiry`, `stall`,
//!   `timers`), and when a route snapshot is due (`snapshot_pace`).
//! - [`warm`]: warm restart: the route snapshot file read back at start and written by a
//!   thread of its own while serving, outside the registry.
//! - [`service`]: the services behind the listeners, each owning its request codes: the
//!   NameServer's (`service::namesrv`: request → registry message → response, every error mapped
//!   to a code in one place; the route lane) and the controller's (`service::controller`); what
//!   a connection keeps of a request and writes back, the same for both.
//! - [`admission`]: the one admission layer in front of every service (access control as each
//!   service describes its codes, the transport rules, the pace of costly requests).
//! - [`connection`]: the per-socket actor, for any service (`frames`: admission of frames,
//!   `flow`: back-pressure, `writer`: its writing half); [`io_pool`]: the threads connections run
//!   on; [`server`]: start-up and shutdown (`compose`: the services and the listener built from
//!   the settings, `run`: the order of a server's life, `accept`: the accept loops and the
//!   drain); [`listen`]: sockets.
//! - [`clock`]: the wall and boot clocks, and telling a step of the wall clock from a stall.
//! - [`metrics`]: every exported figure; [`http`]: the HTTP endpoint (metrics, probes, address
//!   server, status page and its API); [`observe`]: starting it, sampling and the summary log.
//! - [`kv`]: the KV config store actor and its journaled file; [`config_store`]: runtime
//!   configuration actor; [`persist`]: crash-safe file writes; [`statelock`]: one server per
//!   state directory; [`notifier`]: outbound NOTIFY_MIN_BROKER_ID_CHANGE.
//! - [`controller`]: the RocketMQ 5 controller (embedded or standalone): replication on openraft
//!   (`raft`) of the pure state machine in the `namesrv-controller-core` crate (tables, decisions,
//!   elections, liveness), and the `Controller` actor behind the controller listener
//!   (`service::controller`).
//! - [`mailbox`]: typed, counted, logged actor requests shared by every actor (`meter`: the
//!   depth and handling times each message is counted in until handled or dropped);
//!   [`origin`]: where a request came from (`ConnId`, `Origin`); [`peers`]: what one source
//!   address may ask of the shared capacity; [`limits`]: what a peer may make the server store
//!   (names, topics, KV values), checked on the wire and on what is read back from disk.
//! - [`settings`]: layered configuration (TOML or Java properties, environment, flags), parsed
//!   once into types and grouped by domain (`groups`: listen, routing, state, limits, observe,
//!   acl, tls; every key keeps its flat name); [`preflight`]: what `--check-config` checks beyond the settings;
//!   [`health`]: `namesrv healthcheck`, the probe of a running server (a client of it).
//!
//! Imports run downward only, through these layers (a module may use its own layer and those
//! below): `main` → `server` → `preflight`, `observe`, `health` → `http`, `connection` → `dispatch` →
//! `acl`, `tls` → `kv`, `config_store`, `warm`, `controller` → `registry` → `notifier` →
//! `mailbox`, `listen`, `io_pool` → `metrics`, `filewatch`, `ratelog`, `persist`, `secret_file`, `statelock`,
//! `origin`, `peers`, `limits`, `clock` →
//! `settings`; beneath them all the `namesrv-protocol` crate (`protocol` → `model`), which
//! depends on nothing of the server.
//! Beside the server, the workspace holds `namesrv-controller-core` (`crates/controller-core`: the
//! controller's state machine, no runtime, no I/O, no Raft), `namesrv-client` (`crates/client`: the one remoting
//! client, used by nsadmin, namesrv-bench and the tests; protocol crate only, no server code) and
//! `namesrv-testkit` (`crates/testkit`: the integration tests' harness — in-process servers, the
//! test client over `namesrv-client`, broker builders; a dev-dependency only).
//! `scripts/check-structure.py` checks the layers, that the protocol crate stays free of actix
//! and I/O, and that no two files import each other in a circle.
#![forbid(unsafe_code)]

pub mod acl;
pub mod admission;
pub mod clock;
pub mod config_store;
pub mod connection;
pub mod controller;
pub mod filewatch;
pub mod health;
pub mod http;
pub mod io_pool;
pub mod kv;
pub mod limits;
pub mod listen;
pub mod mailbox;
pub mod metrics;
pub mod notifier;
pub mod observe;
pub mod origin;
pub mod peers;
pub mod persist;
pub mod preflight;
pub mod ratelog;
pub mod registry;
pub mod secret_file;
pub mod server;
pub mod service;
pub mod settings;
pub mod statelock;
pub mod tls;
pub mod warm;

pub use namesrv_protocol as protocol;
pub use namesrv_protocol::model;
