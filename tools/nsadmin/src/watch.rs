//! `watch`: a view of the brokers and topics of a NameServer, redrawn in place every interval
//! (ANSI home + clear), with request rate, mailbox depth and heartbeat ages when the HTTP
//! endpoint answers. `--count` bounds it; `--json` prints one JSON line per refresh instead.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use namesrv_protocol::RequestCode;
use serde_json::{json, Value};

use crate::cli::WatchArgs;
use crate::cluster::cluster_table;
use crate::escape::printable;
use crate::fleet::{body, success, CmdError};
use crate::http::{find_key, get_json, heartbeat_ages, snapshot_ages, snapshot_note};
use crate::in_place::TopicNames;
use crate::output::{Ctx, Exit};
use crate::table::{print_json, Table};
use crate::wire::{self, ClusterInfo};

/// Moves the cursor home and clears the screen.
const CLEAR: &str = "\x1b[H\x1b[2J";

/// One refresh's figures.
struct View {
    namesrv: String,
    cluster: Result<ClusterInfo, CmdError>,
    topics: Option<usize>,
    stats: Option<Value>,
    ages: BTreeMap<String, u64>,
    /// Brokers loaded from the route snapshot and not registered since: the snapshot's age.
    provisional: BTreeMap<String, u64>,
}

/// Runs `watch` until `--count` refreshes are done (or forever); exit 1 if the last failed.
pub async fn run(ctx: &Ctx, args: &WatchArgs) -> Result<Exit, CmdError> {
    let started = Instant::now();
    let interval = Duration::from_millis(args.interval_ms.max(10));
    let mut refresh = 0u64;
    loop {
        refresh += 1;
        let view = fetch(ctx, args).await;
        let ok = view.cluster.is_ok();
        if ctx.json {
            print_json(&view_json(&view, refresh));
        } else if std::io::stdout().is_terminal() {
            print!("{CLEAR}{}", render(&view, args, refresh, started.elapsed()));
            let _ = std::io::stdout().flush();
        } else {
            // Into a pipe or a file: no screen control codes, one block per refresh.
            println!("{}", render(&view, args, refresh, started.elapsed()));
        }
        if args.count.is_some_and(|count| refresh >= count) {
            return Ok(if ok { Exit::Ok } else { Exit::Failed });
        }
        tokio::time::sleep(interval).await;
    }
}

/// Cluster info and topic count from the first answering NameServer, and the HTTP figures.
async fn fetch(ctx: &Ctx, args: &WatchArgs) -> View {
    let cluster = match ctx.fleet.first(&wire::request(RequestCode::GetBrokerClusterInfo, &[])).await {
        Ok((addr, answer)) => success(&addr, answer).and_then(|a| body::<ClusterInfo>(&addr, &a)).map(|c| (addr, c)),
        Err(e) => Err(e),
    };
    let (namesrv, cluster) = match cluster {
        Ok((addr, info)) => (addr, Ok(info)),
        Err(e) => (ctx.fleet.addrs.join(";"), Err(e)),
    };
    let topics = match &cluster {
        Ok(_) => topic_count(ctx, &namesrv).await,
        Err(_) => None,
    };
    let (mut stats, mut ages, mut provisional) = (None, BTreeMap::new(), BTreeMap::new());
    if let Some(http) = &args.http {
        stats = get_json(http, "/api/v1/stats", ctx.fleet.timeout).await.ok();
        if let Ok(doc) = get_json(http, "/api/v1/brokers", ctx.fleet.timeout).await {
            ages = heartbeat_ages(&doc);
            provisional = snapshot_ages(&doc);
        }
    }
    View { namesrv, cluster, topics, stats, ages, provisional }
}

/// The number of topics `namesrv` lists (GET_ALL_TOPIC_LIST_FROM_NAMESERVER), if it answers;
/// the names are counted in place, not copied.
async fn topic_count(ctx: &Ctx, namesrv: &str) -> Option<usize> {
    let answer = ctx.fleet.call(namesrv, wire::request(RequestCode::GetAllTopicListFromNameserver, &[])).await.ok()?;
    let body = answer.body.as_deref().filter(|_| answer.code == 0)?;
    Some(TopicNames::read(body).ok()?.topic_list.len())
}

/// A figure from the stats document as text: a number, or `name=value` pairs for an object.
fn figure(stats: Option<&Value>, key: &str) -> String {
    match stats.and_then(|s| find_key(s, key)) {
        Some(Value::Number(n)) => number(n),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_number().map_or_else(|| v.to_string(), number)))
            .collect::<Vec<_>>()
            .join(" "),
        Some(other) => other.to_string(),
        None => "-".to_owned(),
    }
}

/// A figure as people read it: integers whole, fractions to one decimal place.
fn number(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => i.to_string(),
        (_, Some(u), _) => u.to_string(),
        (_, _, Some(f)) => format!("{f:.1}"),
        _ => n.to_string(),
    }
}

/// The screen for one refresh.
fn render(view: &View, args: &WatchArgs, refresh: u64, elapsed: Duration) -> String {
    let mut out = format!(
        "nsadmin watch  {}  refresh {refresh} every {} ms  (+{} s)\n\n",
        printable(&view.namesrv),
        args.interval_ms,
        elapsed.as_secs()
    );
    match &view.cluster {
        Ok(info) if view.ages.is_empty() => out.push_str(&cluster_table(info)),
        Ok(info) => out.push_str(&table_with_ages(info, &view.ages, &view.provisional)),
        Err(e) => out.push_str(&format!("error: {}\n", printable(&e.to_string()))),
    }
    let topics = view.topics.map_or("-".to_owned(), |n| n.to_string());
    out.push_str(&format!("\ntopics: {topics}\n"));
    match (&args.http, &view.stats) {
        (None, _) => out.push_str("requests/s and mailbox depth: give --http host:port\n"),
        (Some(http), None) => {
            out.push_str(&format!("HTTP endpoint {http} not reachable: no request rate or mailbox depth\n"))
        }
        (Some(_), Some(stats)) => out.push_str(&format!(
            "requests/s: {}   mailbox depth: {}\n",
            printable(&figure(Some(stats), "requests_per_second")),
            printable(&figure(Some(stats), "mailbox_depth"))
        )),
    }
    out
}

/// The broker table with a heartbeat-age column (from the HTTP brokers document), brokers loaded
/// from the route snapshot and not registered since marked with the snapshot's age.
fn table_with_ages(info: &ClusterInfo, ages: &BTreeMap<String, u64>, provisional: &BTreeMap<String, u64>) -> String {
    let mut table = Table::new(&["#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Heartbeat Age"]);
    for (name, group) in &info.broker_addr_table {
        let cluster = info.cluster_of(name).unwrap_or(&group.cluster);
        for (id, addr) in &group.broker_addrs {
            let mut age = ages.get(addr).map_or("-".to_owned(), |ms| format!("{:.1} s", *ms as f64 / 1000.0));
            if let Some(ms) = provisional.get(addr) {
                age.push_str(&format!(", {}", snapshot_note(*ms)));
            }
            table.row(vec![cluster.to_owned(), name.clone(), id.to_string(), addr.clone(), age]);
        }
    }
    table.render()
}

/// One refresh as JSON.
fn view_json(view: &View, refresh: u64) -> Value {
    json!({
        "refresh": refresh,
        "namesrv": view.namesrv,
        "cluster": view.cluster.as_ref().ok(),
        "error": view.cluster.as_ref().err().map(ToString::to_string),
        "topics": view.topics,
        "requests_per_second": view.stats.as_ref().and_then(|s| find_key(s, "requests_per_second")),
        "mailbox_depth": view.stats.as_ref().and_then(|s| find_key(s, "mailbox_depth")),
        "heartbeat_age_ms": view.ages,
        "provisional_snapshot_age_ms": view.provisional,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brokers_from_the_route_snapshot_are_marked_with_its_age() {
        let info: ClusterInfo = serde_json::from_value(serde_json::json!({
            "brokerAddrTable": {"b": {"cluster": "C", "brokerName": "b", "brokerAddrs": {"0": "h:1", "1": "h:2"}}},
            "clusterAddrTable": {"C": ["b"]}
        }))
        .unwrap();
        let ages = BTreeMap::from([("h:1".to_owned(), 61_500), ("h:2".to_owned(), 800)]);
        let provisional = BTreeMap::from([("h:1".to_owned(), 42_900)]);
        let text = table_with_ages(&info, &ages, &provisional);
        let row = |addr: &str| text.lines().find(|l| l.contains(addr)).unwrap().to_owned();
        assert!(row("h:1").ends_with("61.5 s, from snapshot (age 42 s)"), "{text}");
        assert!(row("h:2").ends_with("0.8 s"), "{text}");
    }

    #[test]
    fn figures_are_shown_whole_or_to_one_decimal_place() {
        let stats =
            serde_json::json!({"requests_per_second": 133.20000000000002, "mailbox_depth": {"kv": 0, "registry": 2.5}});
        assert_eq!(figure(Some(&stats), "requests_per_second"), "133.2");
        assert_eq!(figure(Some(&stats), "mailbox_depth"), "kv=0 registry=2.5");
        assert_eq!(figure(Some(&stats), "absent"), "-");
    }
}
