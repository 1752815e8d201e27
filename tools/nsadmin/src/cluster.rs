//! `clusterList` (mqadmin's `ClusterListSubCommand`: `-c`, `-m` for broker figures, `-i` to
//! print again every few seconds) and `topicClusterList` (mqadmin's `TopicClusterSubCommand`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use namesrv_protocol::RequestCode;

use crate::cli::ClusterListArgs;
use crate::escape::printable;
use crate::fleet::{body, success, CmdError};
use crate::http::{get_json, snapshot_ages, snapshot_note};
use crate::output::{print_each, print_each_to, print_error, Ctx, Exit};
use crate::read::bodies;
use crate::stats;
use crate::table::Table;
use crate::wire::{self, ClusterInfo, TopicRoute};

/// `clusterList [-c C] [-m] [-i SECS [--count N]]`: the table once, or every `-i` seconds until
/// interrupted (or `--count` rounds). A failed round is reported and the next one still runs, so
/// a watched NameServer coming back shows; the exit is 1 when any round failed.
pub async fn cluster_list(ctx: &Ctx, args: &ClusterListArgs) -> Result<Exit, CmdError> {
    let mut worst = Exit::Ok;
    let mut rounds = 0u64;
    loop {
        if rounds > 0 && !ctx.json {
            println!();
        }
        let exit = cluster_list_once(ctx, args).await;
        if exit != Exit::Ok {
            worst = exit;
        }
        rounds += 1;
        let Some(secs) = args.interval else { break };
        if args.count.is_some_and(|count| rounds >= count) {
            break;
        }
        tokio::time::sleep(Duration::from_secs(secs)).await;
    }
    Ok(worst)
}

/// One round: the cluster list of the first answering NameServer (or of each with `--all`), cut
/// to `-c`'s cluster (an unknown cluster is an error), as the member table or with `-m` the
/// brokers' figures.
async fn cluster_list_once(ctx: &Ctx, args: &ClusterListArgs) -> Exit {
    let results = ctx.fleet.read(&wire::request(RequestCode::GetBrokerClusterInfo, &[]), ctx.all).await;
    let mut results = bodies::<ClusterInfo>(results);
    if let Some(cluster) = args.cluster.as_deref() {
        for (addr, result) in &mut results {
            if let Ok(info) = result {
                match only_cluster(info, cluster) {
                    Some(one) => *info = one,
                    None => *result = Err(CmdError::UnknownCluster { addr: addr.clone(), cluster: cluster.to_owned() }),
                }
            }
        }
    }
    if args.more_stats {
        return stats::print(ctx, results).await;
    }
    let mut provisional = BTreeMap::new();
    if let Some(http) = &args.http {
        match get_json(http, "/api/v1/brokers", ctx.fleet.timeout).await {
            Ok(doc) => provisional = snapshot_ages(&doc),
            Err(e) => {
                print_error(&format!("HTTP endpoint {http}: {e}: brokers from the route snapshot are not marked"))
            }
        }
    }
    print_each_to(ctx, results, |info, out| marked_cluster_table(info, &provisional).write_to(out))
}

/// `info` cut down to `cluster` and its groups, or `None` when it has no such cluster.
fn only_cluster(info: &ClusterInfo, cluster: &str) -> Option<ClusterInfo> {
    let names = info.cluster_addr_table.get(cluster)?;
    let mut one = info.clone();
    one.cluster_addr_table.retain(|c, _| c == cluster);
    one.broker_addr_table.retain(|name, _| names.contains(name));
    Some(one)
}

/// The clusterList table: one row per broker member, like mqadmin's without broker figures.
pub fn cluster_table(info: &ClusterInfo) -> String {
    marked_cluster_table(info, &BTreeMap::new()).render()
}

/// The clusterList table, with a `#Note` column when any member is in `provisional` (broker
/// address to the age in ms of the route snapshot it was loaded from).
fn marked_cluster_table(info: &ClusterInfo, provisional: &BTreeMap<String, u64>) -> Table {
    let mut headers = vec!["#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Zone"];
    if !provisional.is_empty() {
        headers.push("#Note");
    }
    let note = |addr: &str| provisional.get(addr).map(|ms| snapshot_note(*ms));
    let mut table = Table::new(&headers);
    for (cluster, name) in info.groups() {
        let Some(group) = info.broker_addr_table.get(name) else {
            table.row(vec![cluster.into(), name.into(), "-".into(), "(not in brokerAddrTable)".into()]);
            continue;
        };
        let zone = group.zone_name.clone().unwrap_or_default();
        for (id, addr) in &group.broker_addrs {
            let mut row = vec![cluster.into(), name.into(), id.to_string(), addr.clone(), zone.clone()];
            if !provisional.is_empty() {
                row.push(note(addr).unwrap_or_default());
            }
            table.row(row);
        }
    }
    table
}

/// `topicClusterList -t T`: the clusters of the groups in the topic's route, one per line,
/// each group's cluster taken from the same NameServer's cluster list.
pub async fn topic_cluster_list(ctx: &Ctx, topic: &str) -> Result<Exit, CmdError> {
    let routes = bodies::<TopicRoute>(ctx.fleet.read(&wire::route_request(topic), ctx.all).await);
    let mut results = Vec::with_capacity(routes.len());
    for (addr, route) in routes {
        let clusters = match route {
            Ok(route) => clusters_of(ctx, &addr, &route).await,
            Err(e) => Err(e),
        };
        results.push((addr, clusters));
    }
    Ok(print_each(ctx, results, |clusters| clusters.iter().map(|c| format!("{}\n", printable(c))).collect()))
}

/// The clusters `route`'s groups are in, by the cluster list of `addr` (mqadmin's
/// `getTopicClusterList` looks at the first group only; every group is looked at here). A group
/// the list no longer has is placed by the cluster its route entry names.
async fn clusters_of(ctx: &Ctx, addr: &str, route: &TopicRoute) -> Result<BTreeSet<String>, CmdError> {
    let answer = ctx.fleet.call(addr, wire::request(RequestCode::GetBrokerClusterInfo, &[])).await?;
    let info: ClusterInfo = body(addr, &success(addr, answer)?)?;
    let cluster = |group: &wire::BrokerData| {
        info.cluster_of(&group.broker_name).map(str::to_owned).or_else(|| Some(group.cluster.clone()))
    };
    Ok(route.broker_datas.iter().filter_map(cluster).filter(|c| !c.is_empty()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_table_lists_every_member_and_unlisted_groups() {
        let body = br#"{"brokerAddrTable":{"a":{"brokerAddrs":{0:"h:1",1:"h:2"},"brokerName":"a","cluster":"C"},"z":{"brokerAddrs":{0:"h:9"},"brokerName":"z","cluster":"D"}},"clusterAddrTable":{"C":["a"]}}"#;
        let info: ClusterInfo = wire::parse(Some(body)).expect("parses");
        let text = cluster_table(&info);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 4, "{text}");
        assert!(rows[1].starts_with("C") && rows[1].contains("h:1"), "{text}");
        assert!(rows[2].contains(" 1 ") && rows[2].contains("h:2"), "{text}");
        assert!(rows[3].starts_with("D") && rows[3].contains("h:9"), "{text}");
    }

    #[test]
    fn members_from_the_route_snapshot_get_a_note_and_others_none() {
        let body = br#"{"brokerAddrTable":{"a":{"brokerAddrs":{0:"h:1",1:"h:2"},"brokerName":"a","cluster":"C"}},"clusterAddrTable":{"C":["a"]}}"#;
        let info: ClusterInfo = wire::parse(Some(body)).expect("parses");
        let text = marked_cluster_table(&info, &BTreeMap::from([("h:2".to_owned(), 42_900)])).render();
        let rows: Vec<&str> = text.lines().collect();
        assert!(rows[0].trim_end().ends_with("#Note"), "{text}");
        assert!(!rows[1].contains("snapshot"), "{text}");
        assert!(rows[2].trim_end().ends_with("from snapshot (age 42 s)"), "{text}");
        assert!(!cluster_table(&info).contains("#Note"), "no column when nothing is provisional");
    }
}
