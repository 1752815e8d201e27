//! `namesrv-bench`: a load tool for any RocketMQ NameServer (ours, Java's, rocketmq-rust's).
//!
//! Subcommands: `populate`, `route`, `register`, `storm`, `conns`, `fleet`, `memory`, `churn`, `attack`, and `canned`
//! (a server that does no NameServer work: the limit a NameServer is measured against). Each prints a
//! table, or one JSON line with `--json`. Everything is bounded in count and time and stops by itself.
#![forbid(unsafe_code)]

mod attack;
mod canned;
mod churn;
mod conn;
mod fair;
mod fleet;
mod listings;
mod memory;
mod procfs;
mod routeload;
mod scenarios;
mod starve;
mod stats;
mod workload;

use std::path::Path;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use namesrv_client::ConnectOptions;

use crate::conn::Target;

/// Load generator for RocketMQ NameServers.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// NameServer address.
    #[arg(long, default_value = "127.0.0.1:9876", global = true)]
    addr: String,
    /// Print one JSON line instead of a table.
    #[arg(long, global = true)]
    json: bool,
    /// Sign every request with this access key (RocketMQ session credentials), for a
    /// NameServer with access control on.
    #[arg(long, global = true, requires = "secret_key")]
    access_key: Option<String>,
    /// The secret of `--access-key`.
    #[arg(long, global = true, requires = "access_key")]
    secret_key: Option<String>,
    /// Connect over TLS, trusting the CA certificates in this PEM file.
    #[arg(long, global = true, value_name = "PEM")]
    tls_ca: Option<String>,
    /// Allow an `--addr` that is not a loopback address. The load registers simulated brokers
    /// (at documentation-only addresses) and may delete or wipe what it registered: point it at
    /// a production NameServer only on purpose.
    #[arg(long, global = true)]
    allow_remote: bool,
    #[command(subcommand)]
    command: Command,
}

/// The cluster shape brokers register.
#[derive(Args, Debug, Clone)]
pub struct Shape {
    /// Clusters.
    #[arg(long, default_value_t = 4)]
    clusters: usize,
    /// Brokers per cluster.
    #[arg(long, default_value_t = 8)]
    brokers: usize,
    /// Topics per broker.
    #[arg(long, default_value_t = 10_000)]
    topics: usize,
    /// Queues per topic.
    #[arg(long, default_value_t = 8)]
    queues: u32,
    /// Every broker of a cluster hosts the same topics (RIP-29 shape) instead of its own.
    #[arg(long)]
    shared_topics: bool,
    /// Re-registration period of the holding brokers, ms (unchanged dataVersion).
    #[arg(long, default_value_t = 30_000)]
    period_ms: u64,
}

/// Route-load parameters.
#[derive(Args, Debug, Clone)]
pub struct Load {
    /// Client connections.
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Requests in flight per connection.
    #[arg(long, default_value_t = 4)]
    depth: usize,
    /// Threads the connections are dealt over (each a runtime of its own).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Warm-up before measuring, seconds.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Measured window, seconds.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Seed of the topic choice.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// The server's process id: its CPU use over the measured window is reported.
    #[arg(long)]
    server_pid: Option<u32>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Register the shape and hold the broker connections for `--hold` seconds.
    Populate {
        #[command(flatten)]
        shape: Shape,
        /// How long to hold the registrations.
        #[arg(long, default_value_t = 10.0)]
        hold: f64,
    },
    /// Populate, then measure route queries.
    Route {
        #[command(flatten)]
        shape: Shape,
        #[command(flatten)]
        load: Load,
    },
    /// Full registrations with a changed dataVersion every round.
    Register {
        #[command(flatten)]
        shape: Shape,
        /// Rounds per broker.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// Route load while every broker re-registers its full table every `--storm-period-ms`.
    Storm {
        #[command(flatten)]
        shape: Shape,
        #[command(flatten)]
        load: Load,
        /// Re-registration period during the storm, ms.
        #[arg(long, default_value_t = 1000)]
        storm_period_ms: u64,
    },
    /// Open K idle connections, then check queries still succeed.
    Conns {
        /// Idle connections to open.
        #[arg(long, default_value_t = 10_000)]
        count: usize,
    },
    /// A fleet's load at a smaller scale: brokers heartbeating full tables, clients polling
    /// routes; the server's CPU per registration and per route query, and memory per topic.
    Fleet {
        #[command(flatten)]
        fleet: fleet::Fleet,
    },
    /// One broker registers many topics; the server's memory per topic.
    Memory {
        #[command(flatten)]
        memory: memory::Memory,
    },
    /// Brokers restarting with new names on reused addresses, closing or going silent, with route
    /// load alongside; afterwards no broker may be left listed.
    Churn {
        #[command(flatten)]
        churn: churn::Churn,
    },
    /// One hostile peer's attack, with a probe asking for a route every 20 ms throughout.
    Attack {
        /// Which attack.
        #[arg(value_enum)]
        kind: attack::Kind,
        /// How long to watch, seconds.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// PID of the server, to sample its resident memory (Linux).
        #[arg(long)]
        server_pid: Option<u32>,
        /// The server's HTTP endpoint (`host:port`), for the attacks that use it (`listings`,
        /// `http-idle`, `listing-churn`).
        #[arg(long)]
        http: Option<String>,
    },
    /// Serve as the physical limit: frame and parse each request, answer code 0 with a fixed
    /// body, no NameServer work (one thread; runs until killed).
    Canned {
        #[command(flatten)]
        canned: canned::Canned,
    },
}

/// Why `--addr` was refused.
#[derive(Debug)]
enum TargetError {
    /// The address did not resolve.
    Unresolved(String, std::io::Error),
    /// The address is not on this host and `--allow-remote` was not given.
    NotLoopback(String),
}

impl std::fmt::Display for TargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetError::Unresolved(addr, e) => write!(f, "--addr {addr}: {e}"),
            TargetError::NotLoopback(addr) => write!(
                f,
                "--addr {addr} is not a loopback address: the load registers simulated brokers there; \
                 pass --allow-remote to run it against that NameServer anyway"
            ),
        }
    }
}

/// Refuses a NameServer address that is not on this host unless `--allow-remote` was given.
fn check_target(addr: &str, allow_remote: bool) -> Result<(), TargetError> {
    use std::net::ToSocketAddrs;
    let resolved: Vec<_> = addr.to_socket_addrs().map_err(|e| TargetError::Unresolved(addr.into(), e))?.collect();
    if allow_remote || resolved.iter().all(|a| a.ip().is_loopback()) {
        return Ok(());
    }
    Err(TargetError::NotLoopback(addr.into()))
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = check_target(&cli.addr, cli.allow_remote) {
        eprintln!("namesrv-bench: {e}");
        std::process::exit(2);
    }
    let credentials = cli.access_key.clone().zip(cli.secret_key.clone()).map(|(access_key, secret_key)| {
        namesrv_protocol::signature::SessionCredentials { access_key, secret_key, security_token: None }
    });
    let tls = match cli.tls_ca.as_deref().map(|ca| namesrv_client::tls::client_config(Path::new(ca), None)).transpose()
    {
        Ok(tls) => tls,
        Err(e) => {
            eprintln!("namesrv-bench: --tls-ca: {e}");
            std::process::exit(2);
        }
    };
    // No answer within a minute is a server in trouble, not load.
    let options = ConnectOptions { timeout: Duration::from_secs(60), credentials, tls, ..ConnectOptions::default() };
    let target = Target { addr: cli.addr.clone(), options };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let result = runtime.block_on(async {
        match cli.command {
            Command::Populate { shape, hold } => scenarios::populate(&target, &shape, hold).await,
            Command::Route { shape, load } => scenarios::route(&target, &shape, &load).await,
            Command::Register { shape, rounds } => scenarios::register(&target, &shape, rounds).await,
            Command::Storm { shape, load, storm_period_ms } => {
                scenarios::storm(&target, &shape, &load, storm_period_ms).await
            }
            Command::Conns { count } => scenarios::conns(&target, count).await,
            Command::Fleet { fleet } => scenarios::local(fleet::run(&target, &fleet)).await,
            Command::Memory { memory } => memory::run(&target, &memory).await,
            Command::Churn { churn } => scenarios::local(churn::run(&target, &churn)).await,
            Command::Attack { kind, seconds, server_pid, http } => {
                scenarios::local(attack::run(&target, http.as_deref(), kind, seconds, server_pid)).await
            }
            Command::Canned { canned } => scenarios::local(canned::run(&canned)).await,
        }
    });
    match result {
        Ok(report) => {
            if cli.json {
                println!("{}", serde_json::to_string(&report).unwrap_or_default());
            } else {
                print_table("", &report);
            }
        }
        Err(e) => {
            eprintln!("namesrv-bench: {e}");
            std::process::exit(1);
        }
    }
}

/// Prints a report as aligned `key value` lines, nested figures as `group.key`.
fn print_table(prefix: &str, value: &serde_json::Value) {
    match value.as_object() {
        Some(map) => {
            for (key, v) in map {
                let name = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                print_table(&name, v);
            }
        }
        None => match value.as_f64() {
            Some(f) if value.is_f64() => println!("{prefix:<32} {f:.1}"),
            _ => println!("{prefix:<32} {value}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_targets_run_without_allow_remote() {
        assert!(check_target("127.0.0.1:9876", false).is_ok());
        assert!(check_target("[::1]:9876", false).is_ok());
        assert!(matches!(check_target("192.0.2.7:9876", false), Err(TargetError::NotLoopback(_))));
        assert!(check_target("192.0.2.7:9876", true).is_ok());
        assert!(matches!(check_target("no-port", false), Err(TargetError::Unresolved(..))));
    }
}
