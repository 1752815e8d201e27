//! The controller subcommands, as mqadmin has them for a RocketMQ 5 controller (namesrv's
//! embedded or standalone one, or Java's): `getControllerMetaData` (1005), `getSyncStateSet`
//! (1006), `electMaster` (1002 designating a broker), `cleanBrokerMetadata` (1011),
//! `getControllerConfig` (1010) and `updateControllerConfig` (1009). Writes and state reads go
//! to the leader, found with 1005 from the first `-a` address that answers.

use std::collections::BTreeMap;

use namesrv_protocol::controller::body::{encode_names, BrokerReplicasInfo, ElectMasterResponseBody};
use namesrv_protocol::controller::header::{CleanBrokerDataHeader, ElectMasterHeader};
use namesrv_protocol::controller::response::{MasterFields, MetadataResponse};
use namesrv_protocol::{RemotingCommand, RequestCode};
use serde_json::{Map, Value};

use crate::controller_show::{self, sync_states_of, Elected, Metadata};
use crate::escape::printable;
use crate::fleet::{body, success, CmdError, Fleet};
use crate::output::{print_each, print_error, print_writes, Ctx, Exit};
use crate::wire::{self, ClusterInfo};

/// CONTROLLER_GET_METADATA_INFO.
pub(crate) const GET_METADATA: i32 = 1005;
const ELECT_MASTER: i32 = 1002;
/// CONTROLLER_GET_SYNC_STATE_DATA.
pub(crate) const GET_SYNC_STATE_DATA: i32 = 1006;
const CLEAN_BROKER_DATA: i32 = 1011;
const UPDATE_CONFIG: i32 = 1009;
const GET_CONFIG: i32 = 1010;

/// The controllers of `-a` (`host:port;host:port`), reached as the `-n` NameServers are
/// (timeout, credentials, TLS).
pub(crate) fn controllers(ctx: &Ctx, list: &str) -> Result<Fleet, CmdError> {
    let addrs = Fleet::new(list, ctx.fleet.timeout, None).map_err(|_| CmdError::NoController)?.addrs;
    Ok(Fleet { addrs, ..ctx.fleet.clone() })
}

/// 1005 from the first controller that answers: the answering address and its metadata.
async fn metadata(fleet: &Fleet) -> Result<(String, MetadataResponse), CmdError> {
    let (addr, answer) = fleet.first(&RemotingCommand::request(GET_METADATA, None)).await?;
    let answer = success(&addr, answer)?;
    Ok((addr, MetadataResponse::read(&answer)))
}

/// The leader's controller address, as the first answering controller names it.
async fn leader(fleet: &Fleet) -> Result<String, CmdError> {
    let (addr, meta) = metadata(fleet).await?;
    meta.controller_leader_address.filter(|a| !a.is_empty()).ok_or(CmdError::NoControllerLeader { addr })
}

/// `getControllerMetaData -a addr`: the group, the leader and the peers.
pub async fn get_metadata(ctx: &Ctx, list: &str) -> Result<Exit, CmdError> {
    let fleet = controllers(ctx, list)?;
    let result = metadata(&fleet).await.map(|(_, m)| Metadata::from(m));
    Ok(print_each(ctx, vec![(fleet.addrs.join(";"), result)], controller_show::metadata))
}

/// `getSyncStateSet -a addrs (-b name | -c cluster)`: each group's master, epochs and
/// replicas, in sync or not; `-c` takes the cluster's groups from the NameServers (`-n`).
pub async fn get_sync_state_set(
    ctx: &Ctx,
    list: &str,
    broker: Option<&str>,
    cluster: Option<&str>,
) -> Result<Exit, CmdError> {
    let names: Vec<String> = match (broker, cluster) {
        (Some(b), _) => vec![b.to_owned()],
        (None, Some(c)) => cluster_groups(ctx, c).await?,
        (None, None) => return Err(CmdError::Usage("getSyncStateSet needs -b brokerName or -c clusterName".into())),
    };
    let fleet = controllers(ctx, list)?;
    let leader = leader(&fleet).await?;
    let request =
        RemotingCommand::request(GET_SYNC_STATE_DATA, None).with_body(encode_names(names.iter().map(String::as_str)));
    let result = async {
        let answer = success(&leader, fleet.call(&leader, request).await?)?;
        let info = BrokerReplicasInfo::decode(answer.body.as_deref().unwrap_or_default())
            .map_err(|source| CmdError::Body { addr: leader.clone(), source })?;
        Ok(sync_states_of(info))
    };
    Ok(print_each(ctx, vec![(leader.clone(), result.await)], controller_show::sync_states))
}

/// The broker groups of `cluster`, from the first NameServer that answers.
pub(crate) async fn cluster_groups(ctx: &Ctx, cluster: &str) -> Result<Vec<String>, CmdError> {
    let (addr, answer) = ctx.fleet.first(&wire::request(RequestCode::GetBrokerClusterInfo, &[])).await?;
    let info: ClusterInfo = body(&addr, &success(&addr, answer)?)?;
    let names = info
        .cluster_addr_table
        .get(cluster)
        .ok_or_else(|| CmdError::UnknownCluster { addr, cluster: cluster.to_owned() })?;
    Ok(names.iter().cloned().collect())
}

/// `electMaster -a addr -c cluster --brokerName name -b id`: designates broker `id` as the
/// group's master. Only a new master is success (a kept one, 2011, is an error here).
pub async fn elect_master(ctx: &Ctx, list: &str, cluster: &str, broker: &str, id: i64) -> Result<Exit, CmdError> {
    let fleet = controllers(ctx, list)?;
    let leader = leader(&fleet).await?;
    let header = ElectMasterHeader {
        cluster_name: cluster.to_owned(),
        broker_name: broker.to_owned(),
        broker_id: id,
        designate_elect: true,
        invoke_time: Some(now_ms()),
    };
    let result = async {
        let answer = success(
            &leader,
            fleet.call(&leader, RemotingCommand::request(ELECT_MASTER, Some(header.to_ext()))).await?,
        )?;
        let elected = ElectMasterResponseBody::decode(answer.body.as_deref().unwrap_or_default())
            .map_err(|source| CmdError::Body { addr: leader.clone(), source })?;
        Ok(Elected::new(cluster, broker, MasterFields::read(&answer), elected))
    };
    Ok(print_each(ctx, vec![(leader.clone(), result.await)], controller_show::elected))
}

/// `cleanBrokerMetadata -a addr --brokerName name [-b "1;2"] [-c cluster] [-l]`: removes the
/// group (or the listed ids) from the controller; `-c` is needed unless `-l` cleans living
/// brokers too.
pub async fn clean_broker_metadata(ctx: &Ctx, list: &str, clean: CleanArgs<'_>) -> Result<Exit, CmdError> {
    if clean.cluster.is_none() && !clean.living {
        return Err(CmdError::Usage("cleanBrokerMetadata needs -c clusterName unless -l".into()));
    }
    let fleet = controllers(ctx, list)?;
    let leader = leader(&fleet).await?;
    let header = CleanBrokerDataHeader {
        cluster_name: clean.cluster.map(str::to_owned),
        broker_name: clean.broker.to_owned(),
        broker_controller_ids_to_clean: clean.ids.map(str::to_owned),
        is_clean_living_broker: Some(clean.living),
        invoke_time: Some(now_ms()),
    };
    let cmd = RemotingCommand::request(CLEAN_BROKER_DATA, Some(header.to_ext()));
    let result = async { success(&leader, fleet.call(&leader, cmd).await?).map(|_| Map::new()) }.await;
    match result {
        _ if ctx.json => Ok(print_writes(ctx, vec![(leader, result)])),
        Ok(_) => {
            println!("clear broker {} metadata from controller success!", printable(clean.broker));
            Ok(Exit::Ok)
        }
        Err(e) => {
            print_error(&e);
            Ok(Exit::Failed)
        }
    }
}

/// What `cleanBrokerMetadata` removes.
#[derive(Debug, Clone, Copy)]
pub struct CleanArgs<'a> {
    /// The broker group.
    pub broker: &'a str,
    /// `1;2`: only these ids.
    pub ids: Option<&'a str>,
    /// The group's cluster.
    pub cluster: Option<&'a str>,
    /// Clean living brokers too.
    pub living: bool,
}

/// `getControllerConfig -a "a;b"`: each controller's configuration, key by key.
pub async fn get_config(ctx: &Ctx, list: &str) -> Result<Exit, CmdError> {
    let fleet = controllers(ctx, list)?;
    let results = fleet
        .each(&RemotingCommand::request(GET_CONFIG, None))
        .await
        .into_iter()
        .map(|(addr, r)| {
            let parsed = r.and_then(|a| success(&addr, a)).map(|a| properties(a.body.as_deref().unwrap_or_default()));
            (addr, parsed)
        })
        .collect::<Vec<_>>();
    let many = ctx.all || results.len() > 1;
    let ctx = Ctx { all: many, ..ctx.clone() };
    Ok(print_each(&ctx, results, controller_show::config))
}

/// `updateControllerConfig -a "a;b" -k key -v value` on every controller; any failure fails.
pub async fn update_config(ctx: &Ctx, list: &str, key: &str, value: &str) -> Result<Exit, CmdError> {
    if key.contains(['=', '\n', '\r']) || value.contains(['\n', '\r']) {
        return Err(CmdError::Usage("a key must not hold '=' or a line break, nor a value a line break".into()));
    }
    let fleet = controllers(ctx, list)?;
    let cmd = RemotingCommand::request(UPDATE_CONFIG, None).with_body(format!("{key}={value}\n"));
    let results = fleet
        .each(&cmd)
        .await
        .into_iter()
        .map(|(addr, r)| {
            let done =
                r.and_then(|a| success(&addr, a)).map(|_| Map::from_iter([(key.to_owned(), Value::from(value))]));
            (addr, done)
        })
        .collect();
    Ok(print_writes(ctx, results))
}

/// `key=value` lines (Java's `Properties` text as the controller writes it), sorted by key.
fn properties(body: &[u8]) -> BTreeMap<String, String> {
    String::from_utf8_lossy(body)
        .lines()
        .filter(|l| !l.trim_start().starts_with(['#', '!']))
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controller_config_is_read_as_properties_sorted_by_key() {
        let text = b"#comment\nscanNotActiveBrokerInterval=5000\nenableElectUncleanMaster = true\n\nbad line\n";
        let read = properties(text);
        let expected = [("enableElectUncleanMaster", "true"), ("scanNotActiveBrokerInterval", "5000")];
        assert_eq!(read.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect::<Vec<_>>(), expected);
        assert_eq!(
            crate::controller_show::config(&read).lines().next(),
            Some(format!("{:<50}=  true", "enableElectUncleanMaster").as_str())
        );
    }
}
