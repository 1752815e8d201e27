//! Read subcommands: topicRoute, topicList, getNamesrvConfig, getKvConfig and
//! brokerMembers (the NameServer halves of mqadmin's `TopicRouteSubCommand`,
//! `TopicListSubCommand`, `GetNamesrvConfigCommand`, ...).

use std::collections::BTreeMap;

use namesrv_protocol::{RemotingCommand, RequestCode};

use crate::escape::printable;
use crate::fleet::{body, success, CmdError, PerNamesrv};
use crate::in_place::{KvEntries, TopicNames};
use crate::output::{print_each, print_each_to, Ctx, Exit};
use crate::table::Table;
use crate::wire::{self, perm_name, ClusterInfo, MemberGroupBody, TopicRoute};

/// Parses each successful answer's body as `T`; errors keep the NameServer's address.
pub(crate) fn bodies<T: serde::de::DeserializeOwned>(results: PerNamesrv<RemotingCommand>) -> PerNamesrv<T> {
    results
        .into_iter()
        .map(|(addr, r)| {
            let parsed = r.and_then(|answer| success(&addr, answer)).and_then(|answer| body(&addr, &answer));
            (addr, parsed)
        })
        .collect()
}

/// `topicRoute -t T [-l]`.
pub async fn topic_route(ctx: &Ctx, topic: &str, list: bool) -> Result<Exit, CmdError> {
    let results = ctx.fleet.read(&wire::route_request(topic), ctx.all).await;
    Ok(print_each(ctx, bodies::<TopicRoute>(results), if list { route_list } else { route_text }))
}

/// A route as one row per broker address, with its group's queues (`topicRoute -l`).
pub fn route_list(route: &TopicRoute) -> String {
    let mut table =
        Table::new(&["#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Read Queues", "#Write Queues", "#Perm"]);
    for group in &route.broker_datas {
        let queues = route.queue_datas.iter().find(|q| q.broker_name == group.broker_name);
        let (read, write, perm) = queues.map_or(("-".into(), "-".into(), "-".into()), |q| {
            (q.read_queue_nums.to_string(), q.write_queue_nums.to_string(), perm_name(q.perm).to_string())
        });
        for (id, addr) in &group.broker_addrs {
            table.row(vec![
                group.cluster.clone(),
                group.broker_name.clone(),
                id.to_string(),
                addr.clone(),
                read.clone(),
                write.clone(),
                perm.clone(),
            ]);
        }
    }
    table.render()
}

/// A route as three sections: broker datas, queue datas, order conf.
pub fn route_text(route: &TopicRoute) -> String {
    let mut brokers = Table::new(&["#Cluster Name", "#Broker Name", "#BID", "#Addr"]);
    for group in &route.broker_datas {
        for (id, addr) in &group.broker_addrs {
            brokers.row(vec![group.cluster.clone(), group.broker_name.clone(), id.to_string(), addr.clone()]);
        }
    }
    let mut queues = Table::new(&["#Broker Name", "#Read Queues", "#Write Queues", "#Perm", "#Sys Flag"]);
    for q in &route.queue_datas {
        queues.row(vec![
            q.broker_name.clone(),
            q.read_queue_nums.to_string(),
            q.write_queue_nums.to_string(),
            format!("{} ({})", perm_name(q.perm), q.perm),
            q.topic_sys_flag.to_string(),
        ]);
    }
    let order = printable(route.order_topic_conf.as_deref().unwrap_or("-"));
    format!("Broker datas:\n{}\nQueue datas:\n{}\nOrder conf: {order}\n", brokers.render(), queues.render())
}

/// `topicList [-c C]`: one topic name per line. A topic list is the largest answer a NameServer
/// gives: its names are borrowed from the answer and written out one by one, never copied whole.
pub async fn topic_list(ctx: &Ctx, cluster: Option<&str>) -> Result<Exit, CmdError> {
    let cmd = match cluster {
        Some(c) => wire::request(RequestCode::GetTopicsByCluster, &[("cluster", c)]),
        None => wire::request(RequestCode::GetAllTopicListFromNameserver, &[]),
    };
    let (held, results) = held_answers(ctx.fleet.read(&cmd, ctx.all).await);
    let lists = read_held(&held, results, TopicNames::read);
    Ok(print_each_to(ctx, lists, |list: &TopicNames<'_>, out| {
        list.topic_list.iter().try_for_each(|name| writeln!(out, "{}", printable(name.as_str())))
    }))
}

/// The successful answers, kept apart from the results so that what is read from them can
/// borrow them: each result is its answer's index, or the failure.
fn held_answers(results: PerNamesrv<RemotingCommand>) -> (Vec<RemotingCommand>, PerNamesrv<usize>) {
    let mut held = Vec::with_capacity(results.len());
    let indexes = results
        .into_iter()
        .map(|(addr, r)| {
            let index = r.and_then(|answer| success(&addr, answer)).map(|answer| {
                held.push(answer);
                held.len() - 1
            });
            (addr, index)
        })
        .collect();
    (held, indexes)
}

/// Reads the body of each held answer with `read` (in place: what it reads borrows the body).
fn read_held<'h, T>(
    held: &'h [RemotingCommand],
    results: PerNamesrv<usize>,
    read: impl Fn(&'h [u8]) -> Result<T, serde_json::Error>,
) -> PerNamesrv<T> {
    let body = |i: usize| held.get(i).and_then(|a| a.body.as_deref()).unwrap_or_default();
    results
        .into_iter()
        .map(|(addr, r)| {
            let value = r.and_then(|i| read(body(i)).map_err(|source| CmdError::Body { addr: addr.clone(), source }));
            (addr, value)
        })
        .collect()
}

/// `getNamesrvConfig`: every NameServer's settings (mqadmin's `GetNamesrvConfigCommand` asks each).
pub async fn namesrv_config(ctx: &Ctx) -> Result<Exit, CmdError> {
    let results = ctx.fleet.each(&wire::request(RequestCode::GetNamesrvConfig, &[])).await;
    let configs = results
        .into_iter()
        .map(|(addr, r)| {
            let parsed = r.and_then(|answer| success(&addr, answer)).map(|answer| properties(answer.body.as_deref()));
            (addr, parsed)
        })
        .collect();
    let all = Ctx { all: true, ..ctx.clone() };
    Ok(print_each(&all, configs, |config| {
        config.iter().map(|(k, v)| format!("{:<50}=  {}\n", printable(k), printable(v))).collect()
    }))
}

/// Reads `key=value` lines (Java's properties text as GET_NAMESRV_CONFIG writes it).
pub fn properties(body: Option<&[u8]>) -> BTreeMap<String, String> {
    let text = String::from_utf8_lossy(body.unwrap_or_default());
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('!'))
        .map(|l| match l.split_once('=') {
            Some((k, v)) => (k.trim().to_owned(), v.trim().to_owned()),
            None => (l.to_owned(), String::new()),
        })
        .collect()
}

/// `getKvConfig -s NS [-k K]`: the value (or the namespace's table) on every NameServer.
pub async fn kv_config(ctx: &Ctx, namespace: &str, key: Option<&str>) -> Result<Exit, CmdError> {
    let all = Ctx { all: true, ..ctx.clone() };
    let Some(key) = key else {
        let cmd = wire::request(RequestCode::GetKvlistByNamespace, &[("namespace", namespace)]);
        let (held, results) = held_answers(ctx.fleet.each(&cmd).await);
        let tables = read_held(&held, results, KvEntries::read);
        return Ok(print_each_to(&all, tables, |kv: &KvEntries<'_>, out| {
            let mut entries = kv.table.0.iter();
            entries.try_for_each(|(k, v)| writeln!(out, "{}={}", printable(k.as_str()), printable(v.as_str())))
        }));
    };
    let cmd = wire::request(RequestCode::GetKvConfig, &[("namespace", namespace), ("key", key)]);
    let values = ctx
        .fleet
        .each(&cmd)
        .await
        .into_iter()
        .map(|(addr, r)| {
            let value = r.and_then(|answer| success(&addr, answer)).map(|a| a.ext("value").unwrap_or("").to_owned());
            (addr, value)
        })
        .collect();
    Ok(print_each(&all, values, |value| format!("{}\n", printable(value))))
}

/// `brokerMembers -b B [-c C]`: the group's members by id; the cluster comes from clusterList
/// when not given.
pub async fn broker_members(ctx: &Ctx, broker: &str, cluster: Option<String>) -> Result<Exit, CmdError> {
    let cluster = match cluster {
        Some(c) => c,
        None => {
            let (addr, answer) = ctx.fleet.first(&wire::request(RequestCode::GetBrokerClusterInfo, &[])).await?;
            let info: ClusterInfo = body(&addr, &success(&addr, answer)?)?;
            info.cluster_of(broker)
                .map(str::to_owned)
                .ok_or_else(|| CmdError::Usage(format!("{addr}: broker group {broker:?} is not listed; give -c")))?
        }
    };
    let cmd = wire::request(RequestCode::GetBrokerMemberGroup, &[("clusterName", &cluster), ("brokerName", broker)]);
    let results = bodies::<MemberGroupBody>(ctx.fleet.read(&cmd, ctx.all).await);
    Ok(print_each(ctx, results, |body| {
        let group = &body.broker_member_group;
        let mut table = Table::new(&["#Cluster Name", "#Broker Name", "#BID", "#Addr"]);
        for (id, addr) in &group.broker_addrs {
            table.row(vec![group.cluster.clone(), group.broker_name.clone(), id.to_string(), addr.clone()]);
        }
        table.render()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_lines_become_a_sorted_map() {
        let map = properties(Some(b"b=2\n# comment\na = 1\n\nflag\nurl=x=y\n"));
        let pairs: Vec<(&str, &str)> = map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(pairs, [("a", "1"), ("b", "2"), ("flag", ""), ("url", "x=y")]);
    }
}
