//! The RocketMQ 5 controller's state machine, pure: no runtime, no actors, no I/O, no Raft, and
//! no clock of its own (every time is an argument). The server replicates its events with Raft
//! and runs it behind the controller port; everything here is tested without a socket.
//!
//! # Layout
//! - [`tables`]: the replicated [`ReplicaTables`] (per broker group its replicas, master,
//!   epochs and in-sync set), changed only by [`ReplicaTables::apply`] of an [`Event`], within
//!   the [`bounds`] every peer holds them to.
//! - [`event`]: the replicated events (the Raft entry payload) and what applying one gave.
//! - [`decide`]: what a request decides on the tables and a liveness view — an answer, and the
//!   event to commit first when it changes anything ([`decision`] holds those values); ids and
//!   registration there, elections in [`elect`], in-sync set fences and cleaning in `alter`.
//! - [`liveness`]: which brokers are alive as one peer hears their heartbeats, by deadline;
//!   [`failover`]: what the leader decides from it (masters lost, groups to elect for, whom to
//!   tell, each group's health, when it has heard every broker long enough to elect);
//!   [`ownership`]: which channel speaks for which replica.
#![forbid(unsafe_code)]

mod alter;
pub mod bounds;
pub mod decide;
pub mod decision;
pub mod elect;
pub mod event;
pub mod failover;
pub mod liveness;
pub mod ownership;
pub mod tables;
#[cfg(test)]
mod tests;

pub use event::{Applied, Command, Event, COMMAND_FORMAT};
pub use tables::{Broken, BrokenGroup, Group, Replica, ReplicaTables, FIRST_BROKER_ID};
