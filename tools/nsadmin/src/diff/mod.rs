//! `diff`: fetches what every NameServer of `-n` tells clients (cluster info, every topic's
//! route, the order-topic KV namespace), all NameServers at once and route queries pipelined,
//! then reports where they disagree (apache/rocketmq#4807). Exit 2 when they do.

/// The comparison itself, on snapshots (pure).
pub mod compare;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use futures_util::future::join_all;
use namesrv_protocol::{RemotingCommand, RequestCode};
use serde_json::json;

use crate::cli::DiffArgs;
use crate::escape::printable;
use crate::fleet::{body, client_error, success, CmdError};
use crate::output::{Ctx, Exit};
use crate::table::print_json;
use crate::wire::{self, ClusterInfo, KvTable, TopicList, TopicRoute, ORDER_TOPIC_NAMESPACE};
use compare::{compare, Report, Snapshot};
use namesrv_client::{ClientError, Conn};

/// TOPIC_NOT_EXIST: the topic has no route on that NameServer.
const TOPIC_NOT_EXIST: i32 = 17;
/// QUERY_NOT_FOUND: the KV namespace does not exist on that NameServer.
const QUERY_NOT_FOUND: i32 = 22;

/// Runs `diff`. NameServers that cannot be reached (or answer with an error) are reported by
/// address and left out; the others are still compared, since drift matters most exactly when
/// part of the fleet is down. Exit 2 when they disagree or one did not answer.
pub async fn run(ctx: &Ctx, args: &DiffArgs) -> Result<Exit, CmdError> {
    if ctx.fleet.addrs.len() < 2 {
        return Err(CmdError::Usage("diff compares NameServers: give two or more with -n \"a:9876;b:9876\"".into()));
    }
    let started = Instant::now();
    let firsts = join_all(ctx.fleet.addrs.iter().map(|addr| first_pass(ctx, addr))).await;
    let mut unreachable = Vec::new();
    let mut passes = Vec::with_capacity(firsts.len());
    for (addr, pass) in ctx.fleet.addrs.iter().zip(firsts) {
        match pass {
            Ok(pass) => passes.push(pass),
            Err(e) => unreachable.push(Unreachable { namesrv: addr.clone(), error: e.to_string() }),
        }
    }
    let topics: BTreeSet<String> = passes.iter().flat_map(|p| p.topics.iter().cloned()).collect();
    let addrs: Vec<String> = passes.iter().map(|p| p.addr.clone()).collect();
    let routes = join_all(passes.into_iter().map(|pass| routes_pass(pass, &topics, args.window))).await;
    let mut snaps = Vec::with_capacity(routes.len());
    for (addr, snap) in addrs.into_iter().zip(routes) {
        match snap {
            Ok(snap) => snaps.push(snap),
            Err(e) => unreachable.push(Unreachable { namesrv: addr, error: e.to_string() }),
        }
    }
    let report = compare(&snaps);
    let elapsed_ms = started.elapsed().as_millis();
    print_report(ctx, &report, &unreachable, snaps.len(), elapsed_ms);
    Ok(if report.drifts.is_empty() && unreachable.is_empty() { Exit::Ok } else { Exit::Drift })
}

/// A NameServer of `-n` that could not be compared, and why.
#[derive(Debug, serde::Serialize)]
struct Unreachable {
    namesrv: String,
    error: String,
}

/// One NameServer after the first round trip: its connection, cluster info, topic names and order configs.
struct FirstPass {
    addr: String,
    conn: Conn,
    cluster: ClusterInfo,
    topics: BTreeSet<String>,
    order_conf: BTreeMap<String, String>,
}

/// Asks `addr` for cluster info, all topics and the order-topic namespace in one pipelined
/// batch; when the all-topics list is disabled, asks for each cluster's topics instead.
async fn first_pass(ctx: &Ctx, addr: &str) -> Result<FirstPass, CmdError> {
    let mut conn = ctx.fleet.connect(addr).await?;
    let batch = vec![
        wire::request(RequestCode::GetBrokerClusterInfo, &[]),
        wire::request(RequestCode::GetAllTopicListFromNameserver, &[]),
        wire::request(RequestCode::GetKvlistByNamespace, &[("namespace", ORDER_TOPIC_NAMESPACE)]),
    ];
    let mut answers = conn.pipeline(batch, 3).await.map_err(|e| client_error(addr, e))?.into_iter();
    let mut next = || answers.next().ok_or_else(|| client_error(addr, ClientError::Closed));
    let cluster: ClusterInfo = body(addr, &success(addr, next()?)?)?;
    let all_topics = next()?;
    let kv = next()?;
    let order_conf = match kv.code {
        QUERY_NOT_FOUND => BTreeMap::new(),
        _ => body::<KvTable>(addr, &success(addr, kv)?)?.table,
    };
    let topics = match all_topics.code {
        0 => body::<TopicList>(addr, &all_topics)?.topic_list,
        _ => cluster_topics(addr, &mut conn, &cluster).await?,
    };
    Ok(FirstPass { addr: addr.to_owned(), conn, cluster, topics, order_conf })
}

/// The union of every cluster's topics (GET_TOPICS_BY_CLUSTER), for NameServers with
/// `enableAllTopicList=false`.
async fn cluster_topics(addr: &str, conn: &mut Conn, cluster: &ClusterInfo) -> Result<BTreeSet<String>, CmdError> {
    let batch: Vec<RemotingCommand> = cluster
        .cluster_addr_table
        .keys()
        .map(|c| wire::request(RequestCode::GetTopicsByCluster, &[("cluster", c)]))
        .collect();
    let answers = conn.pipeline(batch, 64).await.map_err(|e| client_error(addr, e))?;
    let mut topics = BTreeSet::new();
    for answer in answers {
        topics.extend(body::<TopicList>(addr, &success(addr, answer)?)?.topic_list);
    }
    Ok(topics)
}

/// Asks one NameServer for the route of every topic of the fleet, `window` queries in flight.
async fn routes_pass(mut pass: FirstPass, topics: &BTreeSet<String>, window: usize) -> Result<Snapshot, CmdError> {
    let addr = pass.addr.as_str();
    let batch: Vec<RemotingCommand> = topics.iter().map(|t| wire::route_request(t)).collect();
    let answers = pass.conn.pipeline(batch, window).await.map_err(|e| client_error(addr, e))?;
    let mut routes = BTreeMap::new();
    for (topic, answer) in topics.iter().zip(answers) {
        if answer.code == TOPIC_NOT_EXIST {
            continue;
        }
        let answer =
            success(addr, answer).map_err(|e| CmdError::Route { topic: topic.clone(), source: Box::new(e) })?;
        routes.insert(topic.clone(), body::<TopicRoute>(addr, &answer)?);
    }
    Ok(Snapshot { addr: pass.addr, cluster: pass.cluster, routes, order_conf: pass.order_conf })
}

/// Prints the report as text (a line per unreachable NameServer, a block per drift and a
/// summary line) or as one JSON object.
fn print_report(ctx: &Ctx, report: &Report, unreachable: &[Unreachable], answered: usize, elapsed_ms: u128) {
    if ctx.json {
        print_json(&json!({
            "namesrvs": ctx.fleet.addrs,
            "agree": report.drifts.is_empty() && unreachable.is_empty(),
            "unreachable": unreachable,
            "report": report,
            "elapsed_ms": elapsed_ms as u64,
        }));
        return;
    }
    for u in unreachable {
        println!("UNREACHABLE {}  {}", printable(&u.namesrv), printable(&u.error));
    }
    let width = ctx.fleet.addrs.iter().map(String::len).max().unwrap_or(0);
    for drift in &report.drifts {
        println!("DRIFT {}  {}", drift.kind.name(), printable(&drift.subject));
        for seen in &drift.seen {
            let value = printable(seen.value.as_deref().unwrap_or("(absent)"));
            println!("    {:<width$}  {value}", printable(&seen.namesrv));
        }
    }
    let compared = format!(
        "{answered} NameServers, {} broker groups, {} topics, {} order configs compared in {} ms",
        report.brokers, report.topics, report.order_configs, elapsed_ms
    );
    let missing = match unreachable.len() {
        0 => String::new(),
        n => format!("; {n} of {} NameServers did not answer", ctx.fleet.addrs.len()),
    };
    if report.drifts.is_empty() {
        println!("no drift: {compared}{missing}");
        return;
    }
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for drift in &report.drifts {
        *kinds.entry(drift.kind.name()).or_default() += 1;
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let explained = match report.explained {
        0 => String::new(),
        n => format!("; {n} topic/queue differences follow from missing broker groups"),
    };
    println!("{} drifts ({}){explained}: {compared}{missing}", report.drifts.len(), kinds.join(", "));
}
