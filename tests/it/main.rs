//! namesrv's integration tests, one module per behaviour, in one test binary (one link, one
//! process): each drives the real server over TCP on 127.0.0.1 — in this process (the
//! `namesrv-testkit` crate's `TestServer`) or as the built binary (`common::process`).
//! Run one module with `cargo test -p namesrv --test it -- <module>::`.

mod acceptance_acting_master;
mod acceptance_processor;
mod acl;
mod acl_process;
mod acl_reload;
mod address_reuse;
mod admin_codes;
mod broker_lifecycle;
mod cli;
mod client;
mod common;
mod connection_limit;
mod controller;
mod differential;
mod fair_shares;
mod healthcheck;
mod http_endpoint;
mod ipv6;
mod java_parity;
mod java_store;
mod kv_backup;
mod kv_store;
mod limits;
mod logs;
mod memory_budgets;
mod metrics_series;
mod migration;
mod notify_limits;
mod reference;
mod registry_punctuality;
mod robustness;
mod route_lane;
mod runtime_config;
mod runtime_overrides;
mod service;
mod settings_truth;
mod snapshot_failures;
mod stalls;
mod startup;
mod state_bounds;
mod state_files;
mod store_bounds;
mod tls;
mod tls_process;
mod topic_lists;
mod unwritable_state;
mod warm_restart;
mod wire_samples;
mod zones_and_notifications;
