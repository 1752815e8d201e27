//! Controller bodies as Java writes them with fastjson (fields alphabetical, nulls left out, no
//! spaces, bare numeric map keys) and lenient readers for what brokers and mqadmin send.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::json::lenient::{lenient_i64, parse_lenient};
use crate::json::{push_bool, push_decimal, push_field, push_int_key, push_joined, push_str, JsonStyle};

const STYLE: JsonStyle = JsonStyle::Fastjson;

/// A group's in-sync replicas and the epoch of that set (Java's `SyncStateSet` body).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncStateSet {
    /// Broker ids (Java's `HashSet<Long>`; written ascending).
    pub ids: BTreeSet<i64>,
    /// `syncStateSetEpoch`.
    pub epoch: i32,
}

fn push_ids(out: &mut Vec<u8>, ids: &BTreeSet<i64>) {
    out.push(b'[');
    push_joined(out, ids, |out, id| push_decimal(out, *id));
    out.push(b']');
}

impl SyncStateSet {
    /// `{"syncStateSet":[1,2],"syncStateSetEpoch":2}`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + self.ids.len() * 4);
        out.extend_from_slice(b"{\"syncStateSet\":");
        push_ids(&mut out, &self.ids);
        out.extend_from_slice(b",\"syncStateSetEpoch\":");
        push_decimal(&mut out, self.epoch);
        out.push(b'}');
        out
    }

    /// Reads a SyncStateSet leniently: missing fields are empty or 0, numbers may be strings.
    pub fn decode(body: &[u8]) -> Result<Self, serde_json::Error> {
        let json: SyncStateSetJson = parse_lenient(body)?;
        let epoch = i32::try_from(json.sync_state_set_epoch).map_err(serde::de::Error::custom)?;
        Ok(Self { ids: json.sync_state_set.unwrap_or_default().into_iter().map(|id| id.0).collect(), epoch })
    }
}

/// An i64 that may come as a number or a string.
#[derive(Deserialize)]
struct LenientId(#[serde(deserialize_with = "lenient_i64")] i64);

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct SyncStateSetJson {
    sync_state_set: Option<Vec<LenientId>>,
    #[serde(deserialize_with = "lenient_i64")]
    sync_state_set_epoch: i64,
}

/// One group's members as an election answers them (Java's `BrokerMemberGroup`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemberGroup {
    pub cluster: String,
    pub broker_name: String,
    /// Every registered replica's id and address.
    pub broker_addrs: BTreeMap<i64, String>,
}

/// CONTROLLER_ELECT_MASTER's body (Java's `ElectMasterResponseBody`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ElectMasterResponseBody {
    /// Present on SUCCESS, absent when the old master is kept (2011).
    pub member_group: Option<MemberGroup>,
    /// The new in-sync set.
    pub sync_state_set: BTreeSet<i64>,
}

impl ElectMasterResponseBody {
    /// The body with fastjson's bare numeric keys in `brokerAddrs` (not valid JSON, as Java's).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        out.push(b'{');
        if let Some(group) = &self.member_group {
            out.extend_from_slice(b"\"brokerMemberGroup\":{\"brokerAddrs\":{");
            push_joined(&mut out, &group.broker_addrs, |out, (id, addr)| {
                push_int_key(out, *id, STYLE);
                push_str(out, addr, STYLE);
            });
            out.extend_from_slice(b"},\"brokerName\":");
            push_str(&mut out, &group.broker_name, STYLE);
            out.extend_from_slice(b",\"cluster\":");
            push_str(&mut out, &group.cluster, STYLE);
            out.extend_from_slice(b"},");
        }
        out.extend_from_slice(b"\"syncStateSet\":");
        push_ids(&mut out, &self.sync_state_set);
        out.push(b'}');
        out
    }

    /// Reads the body leniently (bare keys accepted).
    pub fn decode(body: &[u8]) -> Result<Self, serde_json::Error> {
        let json: ElectJson = parse_lenient(body)?;
        let member_group = json.broker_member_group.map(|g| MemberGroup {
            cluster: g.cluster,
            broker_name: g.broker_name,
            broker_addrs: g.broker_addrs.into_iter().filter_map(|(k, v)| Some((k.trim().parse().ok()?, v))).collect(),
        });
        let sync_state_set = json.sync_state_set.unwrap_or_default().into_iter().map(|id| id.0).collect();
        Ok(Self { member_group, sync_state_set })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ElectJson {
    #[serde(default)]
    broker_member_group: Option<MemberGroupJson>,
    #[serde(default)]
    sync_state_set: Option<Vec<LenientId>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct MemberGroupJson {
    cluster: String,
    broker_name: String,
    broker_addrs: BTreeMap<String, String>,
}

/// One replica as CONTROLLER_GET_SYNC_STATE_DATA lists it (Java's `ReplicaIdentity`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicaIdentity {
    pub broker_name: String,
    pub broker_id: i64,
    pub broker_address: String,
    pub alive: bool,
}

/// One group's replicas (Java's `BrokerReplicasInfo.ReplicasInfo`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicasInfo {
    pub master_broker_id: Option<i64>,
    pub master_address: Option<String>,
    pub master_epoch: i32,
    pub sync_state_set_epoch: i32,
    pub in_sync_replicas: Vec<ReplicaIdentity>,
    pub not_in_sync_replicas: Vec<ReplicaIdentity>,
}

/// CONTROLLER_GET_SYNC_STATE_DATA's body (Java's `BrokerReplicasInfo`), groups by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BrokerReplicasInfo {
    pub replicas_info_table: BTreeMap<String, ReplicasInfo>,
}

fn push_replicas(out: &mut Vec<u8>, replicas: &[ReplicaIdentity]) {
    out.push(b'[');
    push_joined(out, replicas, |out, r| {
        out.extend_from_slice(b"{\"alive\":");
        push_bool(out, r.alive);
        out.extend_from_slice(b",\"brokerAddress\":");
        push_str(out, &r.broker_address, STYLE);
        out.extend_from_slice(b",\"brokerId\":");
        push_decimal(out, r.broker_id);
        out.extend_from_slice(b",\"brokerName\":");
        push_str(out, &r.broker_name, STYLE);
        out.push(b'}');
    });
    out.push(b']');
}

impl BrokerReplicasInfo {
    /// The body in fastjson's field order.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.replicas_info_table.len() * 256);
        out.extend_from_slice(b"{\"replicasInfoTable\":{");
        push_joined(&mut out, &self.replicas_info_table, |out, (name, info)| {
            push_str(out, name, STYLE);
            out.extend_from_slice(b":{\"inSyncReplicas\":");
            push_replicas(out, &info.in_sync_replicas);
            if let Some(addr) = &info.master_address {
                out.extend_from_slice(b",\"masterAddress\":");
                push_str(out, addr, STYLE);
            }
            if let Some(id) = info.master_broker_id {
                out.push(b',');
                push_field(out, "masterBrokerId");
                push_decimal(out, id);
            }
            out.extend_from_slice(b",\"masterEpoch\":");
            push_decimal(out, info.master_epoch);
            out.extend_from_slice(b",\"notInSyncReplicas\":");
            push_replicas(out, &info.not_in_sync_replicas);
            out.extend_from_slice(b",\"syncStateSetEpoch\":");
            push_decimal(out, info.sync_state_set_epoch);
            out.push(b'}');
        });
        out.extend_from_slice(b"}}");
        out
    }

    /// Reads the body leniently.
    pub fn decode(body: &[u8]) -> Result<Self, serde_json::Error> {
        parse_lenient(body)
    }
}

/// CONTROLLER_GET_SYNC_STATE_DATA's request body: a JSON list of broker names.
pub fn encode_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<u8> {
    let mut out = Vec::new();
    crate::json::push_str_array(&mut out, names, STYLE);
    out
}

/// Reads a list of broker names (nulls dropped).
pub fn decode_names(body: &[u8]) -> Result<Vec<String>, serde_json::Error> {
    let names: Vec<Option<String>> = parse_lenient(body)?;
    Ok(names.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_state_sets_encode_as_java_and_decode_leniently() {
        let set = SyncStateSet { ids: [2, 1].into(), epoch: 2 };
        assert_eq!(set.encode(), br#"{"syncStateSet":[1,2],"syncStateSetEpoch":2}"#);
        assert_eq!(SyncStateSet::default().encode(), br#"{"syncStateSet":[],"syncStateSetEpoch":0}"#);
        assert_eq!(SyncStateSet::decode(br#"{"syncStateSetEpoch":"2","syncStateSet":["1",2]}"#).unwrap(), set);
        assert_eq!(SyncStateSet::decode(b"{}").unwrap(), SyncStateSet::default());
        assert!(SyncStateSet::decode(br#"{"syncStateSetEpoch":99999999999}"#).is_err());
        assert!(SyncStateSet::decode(b"[").is_err());
    }

    #[test]
    fn elect_bodies_have_bare_keys_and_read_back() {
        let body = ElectMasterResponseBody {
            member_group: Some(MemberGroup {
                cluster: "CtlCluster".into(),
                broker_name: "cb".into(),
                broker_addrs: [(1, "127.0.0.1:22911".to_owned())].into(),
            }),
            sync_state_set: [1].into(),
        };
        let bytes = body.encode();
        assert_eq!(
            bytes,
            br#"{"brokerMemberGroup":{"brokerAddrs":{1:"127.0.0.1:22911"},"brokerName":"cb","cluster":"CtlCluster"},"syncStateSet":[1]}"#
        );
        assert_eq!(ElectMasterResponseBody::decode(&bytes).unwrap(), body);
        let kept = ElectMasterResponseBody { member_group: None, sync_state_set: [1, 2].into() };
        assert_eq!(kept.encode(), br#"{"syncStateSet":[1,2]}"#);
    }

    #[test]
    fn replicas_info_omits_an_absent_master_and_names_round_trip() {
        let replica = |id, alive| ReplicaIdentity {
            broker_name: "cb".into(),
            broker_id: id,
            broker_address: format!("a:{id}"),
            alive,
        };
        let info = ReplicasInfo {
            master_epoch: 2,
            sync_state_set_epoch: 3,
            in_sync_replicas: vec![replica(2, true)],
            not_in_sync_replicas: vec![replica(1, false)],
            ..ReplicasInfo::default()
        };
        let table = BrokerReplicasInfo { replicas_info_table: [("cb".to_owned(), info)].into() };
        let bytes = table.encode();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            r#"{"replicasInfoTable":{"cb":{"inSyncReplicas":[{"alive":true,"brokerAddress":"a:2","brokerId":2,"brokerName":"cb"}],"masterEpoch":2,"notInSyncReplicas":[{"alive":false,"brokerAddress":"a:1","brokerId":1,"brokerName":"cb"}],"syncStateSetEpoch":3}}}"#
        );
        assert_eq!(BrokerReplicasInfo::decode(&bytes).unwrap(), table);
        assert_eq!(BrokerReplicasInfo::default().encode(), br#"{"replicasInfoTable":{}}"#);
        assert_eq!(encode_names(["cb"]), br#"["cb"]"#);
        assert_eq!(decode_names(br#"["cb",null]"#).unwrap(), ["cb"]);
        assert!(decode_names(b"{}").is_err());
    }
}
