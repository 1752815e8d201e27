//! `clusterList -m`: each broker member's message counts, asked of the broker itself with
//! GET_BROKER_RUNTIME_INFO (28), as mqadmin's `ClusterListSubCommand` does: the NameServer knows
//! the members, never their figures.

use futures_util::stream::{self, StreamExt};
use namesrv_protocol::RemotingCommand;
use serde::Serialize;

use crate::fleet::{success, CmdError, PerNamesrv};
use crate::in_place::{Entries, KvEntries};
use crate::output::{print_each, print_error, Ctx, Exit};
use crate::table::Table;
use crate::wire::ClusterInfo;

/// GET_BROKER_RUNTIME_INFO, answered by a broker with its runtime figures as a `KVTable`.
pub const GET_BROKER_RUNTIME_INFO: i32 = 28;

/// Brokers asked at once (a cluster list may name hundreds).
const IN_FLIGHT: usize = 16;

/// What `-m` prints above its table, so nobody takes the figures for the NameServer's.
pub const LEGEND: &str = "# messages put (In) and got (Out) per broker member, yesterday and today so far, \
     from each broker's runtime info (GET_BROKER_RUNTIME_INFO); - where the broker did not answer";

/// Message counts of one broker, from its runtime-info totals (Java's `BrokerController`
/// `msgPutTotal*` / `msgGetTotal*` keys): yesterday is this morning's total minus yesterday
/// morning's, today is now's minus this morning's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Messages put yesterday.
    pub in_total_yest: i64,
    /// Messages got yesterday.
    pub out_total_yest: i64,
    /// Messages put today so far.
    pub in_total_today: i64,
    /// Messages got today so far.
    pub out_total_today: i64,
}

impl Counts {
    /// The counts from a runtime-info table, or `None` when a total is missing or no number.
    pub fn from_table(table: &Entries<'_>) -> Option<Counts> {
        let n = |key: &str| table.get(key)?.trim().parse::<i64>().ok();
        let put = (n("msgPutTotalYesterdayMorning")?, n("msgPutTotalTodayMorning")?, n("msgPutTotalTodayNow")?);
        let got = (n("msgGetTotalYesterdayMorning")?, n("msgGetTotalTodayMorning")?, n("msgGetTotalTodayNow")?);
        Some(Counts {
            in_total_yest: put.1.saturating_sub(put.0),
            out_total_yest: got.1.saturating_sub(got.0),
            in_total_today: put.2.saturating_sub(put.1),
            out_total_today: got.2.saturating_sub(got.1),
        })
    }
}

/// One row of `-m`: a broker member and its counts, or why it has none.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberStats {
    /// The member's cluster.
    pub cluster: String,
    /// Its group.
    pub broker_name: String,
    /// Its broker id.
    pub broker_id: i64,
    /// The address asked.
    pub addr: String,
    /// The counts, when the broker answered with them.
    #[serde(flatten)]
    pub counts: Option<Counts>,
    /// Why there are no counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Asks every member of each cluster list for its counts and prints them (text: a legend line,
/// then the table); a broker that does not answer is reported on stderr and makes the exit 1.
pub async fn print(ctx: &Ctx, results: PerNamesrv<ClusterInfo>) -> Exit {
    let mut rows = Vec::with_capacity(results.len());
    for (addr, result) in results {
        let stats = match result {
            Ok(info) => Ok(member_stats(ctx, &info).await),
            Err(e) => Err(e),
        };
        rows.push((addr, stats));
    }
    let mut silent = 0;
    for member in rows.iter().filter_map(|(_, r)| r.as_ref().ok()).flatten() {
        if let Some(e) = &member.error {
            silent += 1;
            print_error(&format!("broker {}: {e}", member.addr));
        }
    }
    if !ctx.json {
        println!("{LEGEND}");
    }
    let exit = print_each(ctx, rows, stats_table);
    if silent > 0 {
        Exit::Failed
    } else {
        exit
    }
}

/// Every member of `info` with its counts, brokers asked [`IN_FLIGHT`] at a time.
async fn member_stats(ctx: &Ctx, info: &ClusterInfo) -> Vec<MemberStats> {
    let members: Vec<MemberStats> = info
        .groups()
        .into_iter()
        .filter_map(|(cluster, name)| Some((cluster, name, info.broker_addr_table.get(name)?)))
        .flat_map(|(cluster, name, group)| {
            group.broker_addrs.iter().map(move |(id, addr)| MemberStats {
                cluster: cluster.to_owned(),
                broker_name: name.to_owned(),
                broker_id: *id,
                addr: addr.clone(),
                counts: None,
                error: None,
            })
        })
        .collect();
    stream::iter(members)
        .map(|mut member| async move {
            match counts(ctx, &member.addr).await {
                Ok(counts) => member.counts = Some(counts),
                Err(e) => member.error = Some(e.to_string()),
            }
            member
        })
        .buffered(IN_FLIGHT)
        .collect()
        .await
}

/// GET_BROKER_RUNTIME_INFO from the broker at `addr` (over a connection made as the NameServers'
/// are: timeout, credentials, TLS), read as [`Counts`].
async fn counts(ctx: &Ctx, addr: &str) -> Result<Counts, CmdError> {
    let answer = ctx.fleet.call(addr, RemotingCommand::request(GET_BROKER_RUNTIME_INFO, None)).await?;
    let answer = success(addr, answer)?;
    let info = KvEntries::read(answer.body.as_deref().unwrap_or_default())
        .map_err(|source| CmdError::Body { addr: addr.to_owned(), source })?;
    Counts::from_table(&info.table).ok_or_else(|| CmdError::NoMessageTotals { addr: addr.to_owned() })
}

/// The `-m` table: mqadmin's moreStats columns, with each member's id and address.
fn stats_table(members: &Vec<MemberStats>) -> String {
    let mut table = Table::new(&[
        "#Cluster Name",
        "#Broker Name",
        "#BID",
        "#Addr",
        "#InTotalYest",
        "#OutTotalYest",
        "#InTotalToday",
        "#OutTotalToday",
    ]);
    for m in members {
        let mut row = vec![m.cluster.clone(), m.broker_name.clone(), m.broker_id.to_string(), m.addr.clone()];
        match m.counts {
            Some(c) => row.extend(
                [c.in_total_yest, c.out_total_yest, c.in_total_today, c.out_total_today].map(|n| n.to_string()),
            ),
            None => row.extend(std::iter::repeat_n("-".to_owned(), 4)),
        }
        table.row(row);
    }
    table.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_differences_of_the_totals_and_need_every_total() {
        let body = br#"{"table":{"msgPutTotalYesterdayMorning":"100","msgPutTotalTodayMorning":"250",
            "msgPutTotalTodayNow":"260","msgGetTotalYesterdayMorning":"10","msgGetTotalTodayMorning":" 40 ",
            "msgGetTotalTodayNow":"45","brokerVersionDesc":"V5_3_1"}}"#;
        let info = KvEntries::read(body).expect("parses");
        let counts = Counts::from_table(&info.table).expect("counts");
        assert_eq!(counts, Counts { in_total_yest: 150, out_total_yest: 30, in_total_today: 10, out_total_today: 5 });
        let body = String::from_utf8_lossy(body).replace(r#""45""#, r#""n/a""#);
        assert_eq!(Counts::from_table(&KvEntries::read(body.as_bytes()).expect("parses").table), None);
    }
}
