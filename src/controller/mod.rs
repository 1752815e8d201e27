//! The RocketMQ 5 controller (Java's `controller` module): elects broker masters and tracks
//! in-sync replicas. `state` is the replicated state machine (pure).

pub mod state;
