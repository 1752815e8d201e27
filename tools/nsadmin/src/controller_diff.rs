//! `diffControllers`: asks every controller of `-a` who leads (1005) and, for the groups of
//! `-b`/`-c`, each group's master, epochs and in-sync set (1006), then reports where they
//! disagree. Exit 2 when they do, or when one did not answer. Followers answer 1006 with
//! CONTROLLER_NOT_LEADER (2007), in Java's controller as in namesrv's: group state is compared
//! between the peers that serve it, and more than one serving peer is itself a disagreement
//! about the leader.

use std::collections::{BTreeMap, BTreeSet};

use namesrv_protocol::controller::body::{encode_names, BrokerReplicasInfo, ReplicasInfo};
use namesrv_protocol::controller::response::MetadataResponse;
use namesrv_protocol::RemotingCommand;
use serde_json::json;

use crate::controller::{cluster_groups, controllers, GET_METADATA, GET_SYNC_STATE_DATA};
use crate::escape::printable;
use crate::fleet::{success, CmdError, Fleet};
use crate::output::{Ctx, Exit};
use crate::table::print_json;

/// CONTROLLER_NOT_LEADER.
const NOT_LEADER: i32 = 2007;

/// What one controller said: subject → value.
type Facts = BTreeMap<String, String>;

/// `diffControllers -a "a;b;c" [-b name | -c cluster]`.
pub async fn run(ctx: &Ctx, list: &str, broker: Option<&str>, cluster: Option<&str>) -> Result<Exit, CmdError> {
    let names: Vec<String> = match (broker, cluster) {
        (Some(b), _) => vec![b.to_owned()],
        (None, Some(c)) => cluster_groups(ctx, c).await?,
        (None, None) => Vec::new(),
    };
    let fleet = controllers(ctx, list)?;
    let mut unreachable = Vec::new();
    let (mut leaders, mut groups) = (BTreeMap::new(), BTreeMap::new());
    for addr in &fleet.addrs {
        match ask(&fleet, addr, &names).await {
            Ok((leader, state)) => {
                leaders.insert(addr.clone(), leader);
                if let Some(state) = state {
                    groups.insert(addr.clone(), state);
                }
            }
            Err(e) => unreachable.push((addr.clone(), e.to_string())),
        }
    }
    let mut found = drifts(&leaders);
    found.extend(drifts(&groups));
    if !names.is_empty() && groups.len() > 1 {
        let serving = groups.keys().cloned().map(|a| (a, "serves".to_owned())).collect();
        found.insert(0, ("serving peers".into(), serving));
    }
    print(ctx, &found, &unreachable, leaders.len(), groups.len());
    Ok(if found.is_empty() && unreachable.is_empty() { Exit::Ok } else { Exit::Drift })
}

/// One controller's view of the leader and, when it serves 1006, of the groups `names`.
async fn ask(fleet: &Fleet, addr: &str, names: &[String]) -> Result<(Facts, Option<Facts>), CmdError> {
    let meta =
        MetadataResponse::read(&success(addr, fleet.call(addr, RemotingCommand::request(GET_METADATA, None)).await?)?);
    let mut leader = Facts::new();
    leader.insert("group".into(), meta.group);
    leader.insert(
        "leader".into(),
        format!(
            "{} {}",
            meta.controller_leader_id.unwrap_or_default(),
            meta.controller_leader_address.unwrap_or_default()
        ),
    );
    leader.insert("peers".into(), meta.peers);
    if names.is_empty() {
        return Ok((leader, None));
    }
    let cmd =
        RemotingCommand::request(GET_SYNC_STATE_DATA, None).with_body(encode_names(names.iter().map(String::as_str)));
    let answer = fleet.call(addr, cmd).await?;
    if answer.code == NOT_LEADER {
        return Ok((leader, None));
    }
    let answer = success(addr, answer)?;
    let info = BrokerReplicasInfo::decode(answer.body.as_deref().unwrap_or_default())
        .map_err(|source| CmdError::Body { addr: addr.to_owned(), source })?;
    let mut state = Facts::new();
    for name in names {
        group_facts(&mut state, name, info.replicas_info_table.get(name));
    }
    Ok((leader, Some(state)))
}

/// A group's master, epochs and in-sync ids as facts (`absent` when the controller has no such group).
fn group_facts(state: &mut Facts, name: &str, info: Option<&ReplicasInfo>) {
    let Some(r) = info else {
        state.insert(format!("{name} master"), "(absent)".into());
        return;
    };
    let master = format!(
        "{} {}",
        r.master_broker_id.map_or("-".into(), |id| id.to_string()),
        r.master_address.as_deref().unwrap_or("-")
    );
    let in_sync: BTreeSet<i64> = r.in_sync_replicas.iter().map(|i| i.broker_id).collect();
    let in_sync: Vec<String> = in_sync.iter().map(i64::to_string).collect();
    state.insert(format!("{name} master"), master);
    state.insert(format!("{name} masterEpoch"), r.master_epoch.to_string());
    state.insert(format!("{name} syncStateSetEpoch"), r.sync_state_set_epoch.to_string());
    state.insert(format!("{name} inSync"), in_sync.join(","));
}

/// Subjects on which the controllers of `seen` do not all say the same: subject → (addr → value).
fn drifts(seen: &BTreeMap<String, Facts>) -> Vec<(String, BTreeMap<String, String>)> {
    let subjects: BTreeSet<&String> = seen.values().flat_map(|f| f.keys()).collect();
    let mut out = Vec::new();
    for subject in subjects {
        let values: BTreeMap<String, String> = seen
            .iter()
            .map(|(addr, f)| (addr.clone(), f.get(subject).cloned().unwrap_or_else(|| "(absent)".into())))
            .collect();
        if values.values().collect::<BTreeSet<_>>().len() > 1 {
            out.push((subject.clone(), values));
        }
    }
    out
}

/// The report: a block per drift, a line per controller that did not answer, a summary.
fn print(
    ctx: &Ctx,
    drifts: &[(String, BTreeMap<String, String>)],
    unreachable: &[(String, String)],
    answered: usize,
    serving: usize,
) {
    if ctx.json {
        let drifts: Vec<_> = drifts.iter().map(|(s, v)| json!({"subject": s, "seen": v})).collect();
        let unreachable: Vec<_> = unreachable.iter().map(|(a, e)| json!({"controller": a, "error": e})).collect();
        let agree = drifts.is_empty() && unreachable.is_empty();
        print_json(
            &json!({"agree": agree, "drifts": drifts, "unreachable": unreachable, "answered": answered, "serving": serving}),
        );
        return;
    }
    for (addr, error) in unreachable {
        println!("UNREACHABLE {}  {}", printable(addr), printable(error));
    }
    for (subject, seen) in drifts {
        println!("DRIFT {}", printable(subject));
        for (addr, value) in seen {
            println!("    {}  {}", printable(addr), printable(value));
        }
    }
    let summary = format!("{answered} controllers answered, {serving} served group state");
    match drifts.len() {
        0 => println!("no drift: {summary}"),
        n => println!("{n} drifts: {summary}"),
    }
}
