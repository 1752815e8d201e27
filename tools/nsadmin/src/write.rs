//! Write subcommands, sent to every NameServer of `-n` with the result of each printed (as
//! mqadmin's `UpdateKvConfigCommand`, `WipeWritePermSubCommand`, `DeleteTopicSubCommand`... do).

use futures_util::future::join_all;
use namesrv_protocol::{RemotingCommand, RequestCode};
use serde_json::{Map, Value};

use crate::fleet::{body, success, CmdError};
use crate::output::{print_writes, Ctx, Exit};
use crate::wire::{self, ClusterInfo, ORDER_TOPIC_NAMESPACE};

/// Sends `cmd` to every NameServer; `fields` turns a successful answer into what is printed.
async fn write_all(ctx: &Ctx, cmd: RemotingCommand, fields: impl Fn(&RemotingCommand) -> Map<String, Value>) -> Exit {
    let results = ctx
        .fleet
        .each(&cmd)
        .await
        .into_iter()
        .map(|(addr, r)| {
            let printed = r.and_then(|answer| success(&addr, answer)).map(|answer| fields(&answer));
            (addr, printed)
        })
        .collect();
    print_writes(ctx, results)
}

fn nothing(_: &RemotingCommand) -> Map<String, Value> {
    Map::new()
}

/// `updateNamesrvConfig -k K -v V`: a properties body, as mqadmin's `UpdateNamesrvConfigCommand`.
pub async fn update_namesrv_config(ctx: &Ctx, key: &str, value: &str) -> Result<Exit, CmdError> {
    if key.contains(['=', '\n', '\r']) || value.contains(['\n', '\r']) {
        return Err(CmdError::Usage("a key must not hold '=' or a line break, nor a value a line break".into()));
    }
    let cmd = wire::request(RequestCode::UpdateNamesrvConfig, &[]).with_body(format!("{key}={value}\n"));
    Ok(write_all(ctx, cmd, nothing).await)
}

/// `updateKvConfig -s NS -k K -v V`.
pub async fn put_kv(ctx: &Ctx, namespace: &str, key: &str, value: &str) -> Result<Exit, CmdError> {
    let fields = [("namespace", namespace), ("key", key), ("value", value)];
    Ok(write_all(ctx, wire::request(RequestCode::PutKvConfig, &fields), nothing).await)
}

/// `deleteKvConfig -s NS -k K`.
pub async fn delete_kv(ctx: &Ctx, namespace: &str, key: &str) -> Result<Exit, CmdError> {
    let fields = [("namespace", namespace), ("key", key)];
    Ok(write_all(ctx, wire::request(RequestCode::DeleteKvConfig, &fields), nothing).await)
}

/// `wipeWritePerm -b B` / `addWritePerm -b B`: prints each NameServer's topic count. When a
/// NameServer changed 0 topics and does not list the group, that is an error for it: a mistyped
/// group would otherwise "succeed" (Java answers an unknown group with a count of 0).
pub async fn write_perm(ctx: &Ctx, broker: &str, add: bool) -> Result<Exit, CmdError> {
    let (code, count) = if add {
        (RequestCode::AddWritePermOfBroker, "addTopicCount")
    } else {
        (RequestCode::WipeWritePermOfBroker, "wipeTopicCount")
    };
    let cmd = wire::request(code, &[("brokerName", broker)]);
    let writes = ctx.fleet.addrs.iter().map(|addr| {
        let cmd = cmd.clone();
        async move {
            let result = async {
                let answer = success(addr, ctx.fleet.call(addr, cmd).await?)?;
                let value = answer.ext(count).and_then(|v| v.trim().parse::<i64>().ok());
                if value == Some(0) {
                    let info = ctx.fleet.call(addr, wire::request(RequestCode::GetBrokerClusterInfo, &[])).await?;
                    let info: ClusterInfo = body(addr, &success(addr, info)?)?;
                    if !info.broker_addr_table.contains_key(broker) {
                        return Err(CmdError::UnknownBrokerGroup { addr: addr.clone(), broker: broker.to_owned() });
                    }
                }
                Ok(Map::from_iter([(count.to_owned(), value.map_or(Value::Null, Value::from))]))
            };
            (addr.clone(), result.await)
        }
    });
    Ok(print_writes(ctx, join_all(writes).await))
}

/// `updateOrderConf -t T -m put|get|delete [-v conf]`: mqadmin's `UpdateOrderConfCommand`, the
/// topic's entry in the ORDER_TOPIC_CONFIG namespace (`brokerName:queueNum;...`) on every
/// NameServer.
pub async fn order_conf(ctx: &Ctx, topic: &str, method: &str, conf: Option<&str>) -> Result<Exit, CmdError> {
    match (method, conf) {
        ("put", Some(conf)) if !conf.trim().is_empty() => put_kv(ctx, ORDER_TOPIC_NAMESPACE, topic, conf).await,
        ("put", _) => Err(CmdError::Usage("updateOrderConf -m put needs -v brokerName:queueNum;...".into())),
        ("get", _) => crate::read::kv_config(ctx, ORDER_TOPIC_NAMESPACE, Some(topic)).await,
        ("delete", _) => delete_kv(ctx, ORDER_TOPIC_NAMESPACE, topic).await,
        (other, _) => Err(CmdError::Usage(format!("updateOrderConf -m {other:?}: use put, get or delete"))),
    }
}

/// `deleteTopic -t T [-c C]`: the NameServer half of mqadmin's `DeleteTopicSubCommand` (the broker
/// half, deleting the topic config on each broker, needs the brokers).
pub async fn delete_topic(ctx: &Ctx, topic: &str, cluster: Option<&str>) -> Result<Exit, CmdError> {
    let mut fields = vec![("topic", topic)];
    if let Some(c) = cluster {
        fields.push(("clusterName", c));
    }
    Ok(write_all(ctx, wire::request(RequestCode::DeleteTopicInNamesrv, &fields), nothing).await)
}
