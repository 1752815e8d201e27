//! nsadmin: the NameServer half of RocketMQ's mqadmin for any RocketMQ NameServer, plus `diff`,
//! which checks that every NameServer of a fleet tells clients the same thing.
//!
//! # Layout
//! - `cli`: clap definitions; `output`: per-NameServer result printing; `table`: text tables;
//!   `escape`: the one escaping of server text for the terminal.
//! - `fleet`: the `-n` list, its connections (the `namesrv-client` crate: pipelined, signed,
//!   TLS) and its errors.
//! - `wire`: request builders and answer bodies; `in_place`: the large ones read in place;
//!   `lenient`: fastjson's nulls and objects as sorted pairs.
//! - `read`, `cluster` with `stats`, `write`, `wait`: the mqadmin-style subcommands; `controller` with
//!   `controller_show`: the controller's; `backup`: KV export and import;
//!   `diff`: fleet drift; `watch` with `http`: the refreshing view.
#![forbid(unsafe_code)]

mod backup;
mod cli;
mod cluster;
mod controller;
mod controller_diff;
mod controller_show;
mod diff;
mod escape;
mod fleet;
mod http;
mod in_place;
mod lenient;
mod output;
mod read;
mod stats;
mod table;
mod wait;
mod watch;
mod wire;
mod write;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use namesrv_client::tls;
use namesrv_protocol::signature::SessionCredentials;
use rustls::ClientConfig;

use cli::{Cli, Command, Global};
use fleet::{CmdError, Fleet};
use output::{Ctx, Exit};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("nsadmin: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let json = cli.global.json;
    match runtime.block_on(run(cli)) {
        Ok(exit) => ExitCode::from(exit as u8),
        Err(e) => {
            if json {
                // A JSON reader gets the error too, not an empty stdout.
                table::print_json(&serde_json::json!({"error": e.to_string()}));
            }
            output::print_error(&e);
            ExitCode::from(Exit::Failed as u8)
        }
    }
}

/// Credentials from the flags (or their environment variables), if an access key is given.
fn credentials(global: &Global) -> Result<Option<SessionCredentials>, CmdError> {
    let Some(access_key) = global.access_key.clone().filter(|k| !k.trim().is_empty()) else {
        return Ok(None);
    };
    let secret_key = global
        .secret_key
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| CmdError::Usage("--access-key needs --secret-key (or NSADMIN_SECRET_KEY)".into()))?;
    let security_token = global.security_token.clone();
    Ok(Some(SessionCredentials { access_key, secret_key, security_token }))
}

/// The TLS configuration the flags ask for, if any: `--tls-ca` (or, with `--tls` alone, the
/// system's CA certificates) and a client certificate for mutual TLS.
fn tls_config(global: &Global) -> Result<Option<Arc<ClientConfig>>, CmdError> {
    if !global.tls && global.tls_ca.is_none() && global.tls_cert.is_none() {
        return Ok(None);
    }
    let ca = match global.tls_ca.clone() {
        Some(ca) => ca,
        None => tls::system_ca_file()
            .ok_or_else(|| CmdError::Usage("--tls: no system CA certificates found; give --tls-ca PEM".into()))?,
    };
    let client = global.tls_cert.as_deref().zip(global.tls_key.as_deref());
    Ok(Some(tls::client_config(&ca, client)?))
}

async fn run(cli: Cli) -> Result<Exit, CmdError> {
    let global = cli.global;
    let fleet =
        Fleet::new(&global.namesrv_addrs(), Duration::from_millis(global.timeout_ms.max(1)), credentials(&global)?)?
            .with_tls(tls_config(&global)?)
            .with_max_answer_bytes(usize::try_from(global.max_answer_bytes).unwrap_or(usize::MAX));
    let ctx = Ctx { fleet, json: global.json, all: global.all };
    match cli.command {
        Command::ClusterList(args) => cluster::cluster_list(&ctx, &args).await,
        Command::TopicClusterList { topic } => cluster::topic_cluster_list(&ctx, &topic).await,
        Command::TopicRoute { topic, list } => read::topic_route(&ctx, &topic, list).await,
        Command::TopicList { cluster } => read::topic_list(&ctx, cluster.as_deref()).await,
        Command::GetNamesrvConfig => read::namesrv_config(&ctx).await,
        Command::GetKvConfig { namespace, key } => read::kv_config(&ctx, &namespace, key.as_deref()).await,
        Command::BrokerMembers { broker, cluster } => read::broker_members(&ctx, &broker, cluster).await,
        Command::UpdateNamesrvConfig { key, value } => write::update_namesrv_config(&ctx, &key, &value).await,
        Command::UpdateKvConfig { namespace, key, value } => write::put_kv(&ctx, &namespace, &key, &value).await,
        Command::DeleteKvConfig { namespace, key } => write::delete_kv(&ctx, &namespace, &key).await,
        Command::WipeWritePerm { broker } => write::write_perm(&ctx, &broker, false).await,
        Command::AddWritePerm { broker } => write::write_perm(&ctx, &broker, true).await,
        Command::DeleteTopic { topic, cluster } => write::delete_topic(&ctx, &topic, cluster.as_deref()).await,
        Command::UpdateOrderConf { topic, method, conf } => {
            write::order_conf(&ctx, &topic, &method, conf.as_deref()).await
        }
        Command::ExportKv { namespaces } => backup::export(&ctx, &namespaces).await,
        Command::ImportKv { file, max_bytes, allow_empty } => {
            backup::import(&ctx, &file, backup::ImportLimits { max_bytes, allow_empty }).await
        }
        Command::Diff(args) => diff::run(&ctx, &args).await,
        Command::GetControllerMetaData { controllers } => controller::get_metadata(&ctx, &controllers).await,
        Command::GetSyncStateSet { controllers, broker, cluster } => {
            controller::get_sync_state_set(&ctx, &controllers, broker.as_deref(), cluster.as_deref()).await
        }
        Command::ElectMaster { controllers, cluster, broker, id } => {
            controller::elect_master(&ctx, &controllers, &cluster, &broker, id).await
        }
        Command::CleanBrokerMetadata { controllers, broker, ids, cluster, living } => {
            let clean =
                controller::CleanArgs { broker: &broker, ids: ids.as_deref(), cluster: cluster.as_deref(), living };
            controller::clean_broker_metadata(&ctx, &controllers, clean).await
        }
        Command::DiffControllers { controllers, broker, cluster } => {
            controller_diff::run(&ctx, &controllers, broker.as_deref(), cluster.as_deref()).await
        }
        Command::GetControllerConfig { controllers } => controller::get_config(&ctx, &controllers).await,
        Command::UpdateControllerConfig { controllers, key, value } => {
            controller::update_config(&ctx, &controllers, &key, &value).await
        }
        Command::Watch(args) => watch::run(&ctx, &args).await,
        Command::Wait(args) => wait::run(&ctx, &args).await,
    }
}
