//! namesrv-testkit: the harness every integration test of the workspace uses — the real server
//! in-process on a pre-bound 127.0.0.1:0 listener ([`TestServer`]), the test [`Client`] (a
//! strict layer over namesrv-client's blocking connection), broker registrations ([`Broker`]),
//! controller peers ([`controller::ControllerCluster`]) and brokers in controller mode
//! ([`controller_broker::ControllerBroker`]), waits ([`eventually`]), and helpers for requests, routes, HTTP, access control and TLS.
//! It holds no socket code of its own for the remoting protocol.
#![forbid(unsafe_code)]

pub mod broker;
mod broker_loop;
mod broker_state;
pub mod checks;
pub mod client;
pub mod controller;
pub mod controller_broker;
pub mod http;
pub mod kv_config;
pub mod requests;
pub mod routeinfo;
pub mod security;
pub mod server;

pub use broker::Broker;
pub use client::{parse_lenient, route_addrs, route_queue, route_request, Client, Incoming};
pub use server::{eventually, temp_dir, test_settings, TestServer, Topology};

/// Defines each listed test function, which takes the [`Topology`] its servers run in, and
/// runs it in both: every connection on the server's one I/O thread (`<test>::one_io_thread`)
/// and connections spread over two (`<test>::two_io_threads`).
#[macro_export]
macro_rules! in_both_topologies {
    ($($(#[$meta:meta])* fn $name:ident($topology:ident) $body:block)*) => {$(
        $(#[$meta])*
        fn $name($topology: $crate::Topology) $body

        mod $name {
            #[test]
            fn one_io_thread() {
                super::$name($crate::Topology::ONE_THREAD);
            }

            #[test]
            fn two_io_threads() {
                super::$name($crate::Topology::TWO_THREADS);
            }
        }
    )*};
}
