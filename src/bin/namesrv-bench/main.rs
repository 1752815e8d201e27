//! `namesrv-bench`: a load tool for any RocketMQ NameServer (ours, Java's, rocketmq-rust's).
//!
//! Subcommands: `populate`, `route`, `register`, `storm`, `conns`. Each prints a table, or one
//! JSON line with `--json`. Everything is bounded in count and time and stops by itself.

mod client;
mod scenarios;
mod stats;
mod workload;

use clap::{Args, Parser, Subcommand};

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
    /// Warm-up before measuring, seconds.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Measured window, seconds.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Seed of the topic choice.
    #[arg(long, default_value_t = 42)]
    seed: u64,
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
}

fn main() {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let result = runtime.block_on(async {
        match cli.command {
            Command::Populate { shape, hold } => scenarios::populate(&cli.addr, &shape, hold).await,
            Command::Route { shape, load } => scenarios::route(&cli.addr, &shape, &load).await,
            Command::Register { shape, rounds } => scenarios::register(&cli.addr, &shape, rounds).await,
            Command::Storm { shape, load, storm_period_ms } => {
                scenarios::storm(&cli.addr, &shape, &load, storm_period_ms).await
            }
            Command::Conns { count } => scenarios::conns(&cli.addr, count).await,
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
