//! `exportKv` and `importKv`: the KV store as Java's `kvConfig.json` (`{"configTable": {namespace:
//! {key: value}}}`), read from a NameServer namespace by namespace, and written back to every
//! NameServer of `-n`, one PUT_KV_CONFIG per entry, pipelined.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use futures_util::future::join_all;
use namesrv_protocol::{RemotingCommand, RequestCode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::fleet::{client_error, success, CmdError};
use crate::in_place::{Entries, KvEntries};
use crate::output::{print_error, print_writes, Ctx, Exit};
use crate::wire;

/// QUERY_NOT_FOUND: the namespace does not exist on that NameServer.
const QUERY_NOT_FOUND: i32 = 22;
/// PUT_KV_CONFIG requests in flight per NameServer during an import.
const WINDOW: usize = 64;

/// The default `--max-bytes` of `importKv`: twice the NameServer's default KV store bound
/// (`kv_max_store_bytes`, 64 MiB), room for JSON escapes.
pub const DEFAULT_MAX_BYTES: u64 = 128 << 20;

/// Java's `KVConfigSerializeWrapper`: the whole store. On import the table is required and
/// nothing else is accepted, so `[]`, `{}` or another JSON file is refused, not imported as
/// nothing.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KvConfig {
    /// namespace → key → value.
    pub config_table: BTreeMap<String, BTreeMap<String, String>>,
}

/// What `importKv` accepts.
#[derive(Debug, Clone, Copy)]
pub struct ImportLimits {
    /// A larger file is refused before it is read whole.
    pub max_bytes: u64,
    /// Whether a file with no entries is imported (as nothing) instead of refused.
    pub allow_empty: bool,
}

/// `exportKv -s NS...`: the named namespaces of the first NameServer that answers, as one
/// `kvConfig.json` on stdout (the protocol cannot list namespaces, so they are named; for a
/// namesrv state directory, `namesrv --export-kv` writes the whole store). A namespace the
/// NameServer does not have is left out, with a line on stderr.
pub async fn export(ctx: &Ctx, namespaces: &[String]) -> Result<Exit, CmdError> {
    let mut answers = Vec::with_capacity(namespaces.len());
    for namespace in namespaces {
        let cmd = wire::request(RequestCode::GetKvlistByNamespace, &[("namespace", namespace)]);
        let (addr, answer) = ctx.fleet.first(&cmd).await?;
        if answer.code == QUERY_NOT_FOUND {
            print_error(&format!("{addr}: no namespace {namespace:?}: left out"));
            continue;
        }
        answers.push((namespace.as_str(), success(&addr, answer)?, addr));
    }
    // Read in place once every answer is in: the tables borrow their answers.
    let mut config_table = BTreeMap::new();
    for (namespace, answer, addr) in &answers {
        let kv = KvEntries::read(answer.body.as_deref().unwrap_or_default())
            .map_err(|source| CmdError::Body { addr: addr.clone(), source })?;
        config_table.insert(*namespace, kv.table);
    }
    crate::table::print_json(&Export { config_table });
    Ok(Exit::Ok)
}

/// What `exportKv` prints: a [`KvConfig`] whose tables borrow the answers they were read from.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Export<'a> {
    config_table: BTreeMap<&'a str, Entries<'a>>,
}

/// `importKv -f FILE`: every entry of a `kvConfig.json` put on every NameServer; one line per
/// NameServer with the entries it took.
pub async fn import(ctx: &Ctx, file: &Path, limits: ImportLimits) -> Result<Exit, CmdError> {
    let config = read_kv_config(file, limits)?;
    let puts: Vec<RemotingCommand> = config
        .config_table
        .iter()
        .flat_map(|(namespace, table)| {
            table.iter().map(move |(key, value)| {
                wire::request(RequestCode::PutKvConfig, &[("namespace", namespace), ("key", key), ("value", value)])
            })
        })
        .collect();
    let results = join_all(ctx.fleet.addrs.iter().map(|addr| {
        let puts = puts.clone();
        async move { (addr.clone(), put_all(ctx, addr, puts).await) }
    }))
    .await;
    Ok(print_writes(ctx, results))
}

/// Reads `file` as a kvConfig.json within `limits`: a regular file (not a device or a pipe),
/// no larger than `max_bytes`, with a `configTable` object and, unless allowed, an entry.
fn read_kv_config(file: &Path, limits: ImportLimits) -> Result<KvConfig, CmdError> {
    let bad = |reason: String| CmdError::BadFile { path: file.display().to_string(), reason };
    let opened = std::fs::File::open(file).map_err(|e| bad(e.to_string()))?;
    let meta = opened.metadata().map_err(|e| bad(e.to_string()))?;
    if !meta.is_file() {
        return Err(bad("not a regular file".into()));
    }
    let mut text = Vec::new();
    opened.take(limits.max_bytes.saturating_add(1)).read_to_end(&mut text).map_err(|e| bad(e.to_string()))?;
    if text.len() as u64 > limits.max_bytes {
        return Err(bad(format!("larger than --max-bytes ({} bytes)", limits.max_bytes)));
    }
    let config: KvConfig = serde_json::from_slice(&text).map_err(|e| bad(format!("not a kvConfig.json: {e}")))?;
    if !limits.allow_empty && config.config_table.values().all(BTreeMap::is_empty) {
        return Err(bad("nothing to import: the configTable has no entry (--allow-empty imports it)".into()));
    }
    Ok(config)
}

/// Puts every entry on `addr` over one connection; the count, or the first refusal.
async fn put_all(ctx: &Ctx, addr: &str, puts: Vec<RemotingCommand>) -> Result<Map<String, Value>, CmdError> {
    let count = puts.len();
    let mut conn = ctx.fleet.connect(addr).await?;
    let answers = conn.pipeline(puts, WINDOW).await.map_err(|e| client_error(addr, e))?;
    for answer in answers {
        success(addr, answer)?;
    }
    Ok(Map::from_iter([("entries".to_owned(), Value::from(count))]))
}
