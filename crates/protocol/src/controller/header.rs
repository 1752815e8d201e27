//! Controller request headers, read leniently from `extFields` and written with
//! Java's key order (Java builds extFields as a `HashMap` of the header's fields, so its bytes
//! follow `String.hashCode` bucket order; each `to_ext` inserts in that order, which holds
//! when fields are absent too). Every value travels as a string; an absent field is a null.
//! The responses' headers are in `response`.

use crate::command::{ExtFields, RemotingCommand};
use crate::header::{Fields, HeaderError};

/// Builds extFields from `(key, value)` pairs in order, leaving out absent values.
pub(super) fn ext<const N: usize>(pairs: [(&str, Option<String>); N]) -> ExtFields {
    let mut fields = ExtFields::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            fields.insert(key, value);
        }
    }
    fields
}

/// A required `Integer` field: missing or not a 32-bit number is a header error.
fn required_i32(f: &Fields, name: &'static str) -> Result<i32, HeaderError> {
    let value = f.required(name)?;
    value.trim().parse().map_err(|_| HeaderError::NotANumber { field: name, value: value.to_owned() })
}

/// An optional `Integer` field; a value that does not parse is absent.
pub(super) fn optional_i32(f: &Fields, name: &str) -> Option<i32> {
    f.optional(name).and_then(|v| v.trim().parse().ok())
}

pub(super) fn text(s: &str) -> Option<String> {
    Some(s.to_owned())
}

pub(super) fn num(n: impl ToString) -> Option<String> {
    Some(n.to_string())
}

/// CONTROLLER_GET_NEXT_BROKER_ID's request (`GetNextBrokerIdRequestHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetNextBrokerIdHeader {
    pub cluster_name: String,
    pub broker_name: String,
}

impl GetNextBrokerIdHeader {
    /// Reads the header; both fields are required.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            cluster_name: f.required("clusterName")?.to_owned(),
            broker_name: f.required("brokerName")?.to_owned(),
        })
    }

    /// The extFields as a Java broker writes them.
    pub fn to_ext(&self) -> ExtFields {
        ext([("clusterName", text(&self.cluster_name)), ("brokerName", text(&self.broker_name))])
    }
}

/// CONTROLLER_APPLY_BROKER_ID's request (`ApplyBrokerIdRequestHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyBrokerIdHeader {
    pub cluster_name: String,
    pub broker_name: String,
    pub applied_broker_id: i64,
    /// `address;millis`: who applies, so that a retry by the same broker is recognised.
    pub register_check_code: String,
}

impl ApplyBrokerIdHeader {
    /// Reads the header; every field is required (Java dereferences each).
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            applied_broker_id: f.required_i64("appliedBrokerId")?,
            register_check_code: f.required("registerCheckCode")?.to_owned(),
            cluster_name: f.required("clusterName")?.to_owned(),
            broker_name: f.required("brokerName")?.to_owned(),
        })
    }

    /// The extFields in Java's order.
    pub fn to_ext(&self) -> ExtFields {
        ext([
            ("appliedBrokerId", num(self.applied_broker_id)),
            ("registerCheckCode", text(&self.register_check_code)),
            ("clusterName", text(&self.cluster_name)),
            ("brokerName", text(&self.broker_name)),
        ])
    }
}

/// CONTROLLER_REGISTER_BROKER's request (`RegisterBrokerToControllerRequestHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterToControllerHeader {
    pub cluster_name: String,
    pub broker_name: String,
    pub broker_id: i64,
    pub broker_address: String,
    pub invoke_time: Option<i64>,
}

impl RegisterToControllerHeader {
    /// Reads the header; all but `invokeTime` are required.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            broker_id: f.required_i64("brokerId")?,
            invoke_time: f.optional_i64("invokeTime"),
            cluster_name: f.required("clusterName")?.to_owned(),
            broker_name: f.required("brokerName")?.to_owned(),
            broker_address: f.required("brokerAddress")?.to_owned(),
        })
    }

    /// The extFields in Java's order.
    pub fn to_ext(&self) -> ExtFields {
        ext([
            ("brokerId", num(self.broker_id)),
            ("invokeTime", self.invoke_time.and_then(num)),
            ("clusterName", text(&self.cluster_name)),
            ("brokerName", text(&self.broker_name)),
            ("brokerAddress", text(&self.broker_address)),
        ])
    }
}

/// CONTROLLER_ELECT_MASTER's request (`ElectMasterRequestHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectMasterHeader {
    pub cluster_name: String,
    pub broker_name: String,
    /// The requester, or -1 when the controller itself asks.
    pub broker_id: i64,
    /// An admin naming the new master (`electMaster`), rather than a broker asking.
    pub designate_elect: bool,
    pub invoke_time: Option<i64>,
}

impl ElectMasterHeader {
    /// Whether `cmd` designates its broker as the new master (`designateElect` true in any
    /// case, as Java's `Boolean.parseBoolean` reads it): what access control and the header
    /// read alike.
    pub fn designates(cmd: &RemotingCommand) -> bool {
        cmd.ext("designateElect").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    /// Reads the header; `@CFNotNull` fields are required.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            broker_id: f.required_i64("brokerId")?,
            invoke_time: f.optional_i64("invokeTime"),
            cluster_name: f.required("clusterName")?.to_owned(),
            designate_elect: f.required("designateElect").map(|_| Self::designates(cmd))?,
            broker_name: f.required("brokerName")?.to_owned(),
        })
    }

    /// The extFields in Java's order.
    pub fn to_ext(&self) -> ExtFields {
        ext([
            ("brokerId", num(self.broker_id)),
            ("invokeTime", self.invoke_time.and_then(num)),
            ("clusterName", text(&self.cluster_name)),
            ("designateElect", num(self.designate_elect)),
            ("brokerName", text(&self.broker_name)),
        ])
    }
}

/// CONTROLLER_GET_REPLICA_INFO's request (`GetReplicaInfoRequestHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetReplicaInfoHeader {
    pub broker_name: String,
}

impl GetReplicaInfoHeader {
    /// Reads the header.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        Ok(Self { broker_name: Fields::of(cmd).required("brokerName")?.to_owned() })
    }

    /// The extFields.
    pub fn to_ext(&self) -> ExtFields {
        ext([("brokerName", text(&self.broker_name))])
    }
}

/// CONTROLLER_ALTER_SYNC_STATE_SET's request (`AlterSyncStateSetRequestHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterSyncStateSetHeader {
    pub broker_name: String,
    pub master_broker_id: i64,
    pub master_epoch: i32,
    pub invoke_time: Option<i64>,
}

impl AlterSyncStateSetHeader {
    /// Reads the header; all but `invokeTime` are required.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            master_broker_id: f.required_i64("masterBrokerId")?,
            invoke_time: f.optional_i64("invokeTime"),
            broker_name: f.required("brokerName")?.to_owned(),
            master_epoch: required_i32(&f, "masterEpoch")?,
        })
    }

    /// The extFields in Java's order.
    pub fn to_ext(&self) -> ExtFields {
        ext([
            ("masterBrokerId", num(self.master_broker_id)),
            ("invokeTime", self.invoke_time.and_then(num)),
            ("brokerName", text(&self.broker_name)),
            ("masterEpoch", num(self.master_epoch)),
        ])
    }
}

/// BROKER_HEARTBEAT as a controller-mode broker sends it (`BrokerHeartbeatRequestHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerHeartbeatHeader {
    pub cluster_name: String,
    pub broker_addr: String,
    pub broker_name: String,
    /// `None`: Java answers CONTROLLER_INVALID_REQUEST (never seen: the request is oneway).
    pub broker_id: Option<i64>,
    pub epoch: Option<i32>,
    pub max_offset: Option<i64>,
    pub confirm_offset: Option<i64>,
    pub heartbeat_timeout_mills: Option<i64>,
    pub election_priority: Option<i32>,
}

impl ControllerHeartbeatHeader {
    /// Reads the header; the three `@CFNotNull` names are required.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            broker_id: f.optional_i64("brokerId"),
            election_priority: optional_i32(&f, "electionPriority"),
            confirm_offset: f.optional_i64("confirmOffset"),
            heartbeat_timeout_mills: f.optional_i64("heartbeatTimeoutMills"),
            cluster_name: f.required("clusterName")?.to_owned(),
            broker_addr: f.required("brokerAddr")?.to_owned(),
            epoch: optional_i32(&f, "epoch"),
            max_offset: f.optional_i64("maxOffset"),
            broker_name: f.required("brokerName")?.to_owned(),
        })
    }

    /// The extFields in Java's order.
    pub fn to_ext(&self) -> ExtFields {
        ext([
            ("brokerId", self.broker_id.and_then(num)),
            ("electionPriority", self.election_priority.and_then(num)),
            ("confirmOffset", self.confirm_offset.and_then(num)),
            ("heartbeatTimeoutMills", self.heartbeat_timeout_mills.and_then(num)),
            ("clusterName", text(&self.cluster_name)),
            ("brokerAddr", text(&self.broker_addr)),
            ("epoch", self.epoch.and_then(num)),
            ("maxOffset", self.max_offset.and_then(num)),
            ("brokerName", text(&self.broker_name)),
        ])
    }
}

/// CLEAN_BROKER_DATA's request (`CleanControllerBrokerDataRequestHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanBrokerDataHeader {
    pub cluster_name: Option<String>,
    pub broker_name: String,
    /// `1;2`: the ids to remove; absent or blank: the whole group.
    pub broker_controller_ids_to_clean: Option<String>,
    pub is_clean_living_broker: bool,
    pub invoke_time: Option<i64>,
}

impl CleanBrokerDataHeader {
    /// Reads the header; only `brokerName` is required.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            broker_controller_ids_to_clean: f.optional("brokerControllerIdsToClean").map(str::to_owned),
            is_clean_living_broker: f.optional_bool("isCleanLivingBroker").unwrap_or(false),
            invoke_time: f.optional_i64("invokeTime"),
            cluster_name: f.optional("clusterName").map(str::to_owned),
            broker_name: f.required("brokerName")?.to_owned(),
        })
    }

    /// The extFields in Java's order.
    pub fn to_ext(&self) -> ExtFields {
        ext([
            ("brokerControllerIdsToClean", self.broker_controller_ids_to_clean.clone()),
            ("isCleanLivingBroker", num(self.is_clean_living_broker)),
            ("invokeTime", self.invoke_time.and_then(num)),
            ("clusterName", self.cluster_name.clone()),
            ("brokerName", text(&self.broker_name)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(fields: ExtFields) -> RemotingCommand {
        RemotingCommand::request(1, Some(fields))
    }

    fn keys(ext: &ExtFields) -> Vec<&str> {
        ext.iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn requests_read_back_what_they_write_in_java_order() {
        let apply = ApplyBrokerIdHeader {
            cluster_name: "c".into(),
            broker_name: "b".into(),
            applied_broker_id: 2,
            register_check_code: "a:1;5".into(),
        };
        assert_eq!(keys(&apply.to_ext()), ["appliedBrokerId", "registerCheckCode", "clusterName", "brokerName"]);
        assert_eq!(ApplyBrokerIdHeader::read(&with(apply.to_ext())).unwrap(), apply);
        let hb = ControllerHeartbeatHeader {
            cluster_name: "c".into(),
            broker_addr: "a:1".into(),
            broker_name: "b".into(),
            broker_id: Some(1),
            epoch: Some(-1),
            max_offset: Some(0),
            confirm_offset: Some(0),
            heartbeat_timeout_mills: Some(10_000),
            election_priority: Some(i32::MAX),
        };
        assert_eq!(ControllerHeartbeatHeader::read(&with(hb.to_ext())).unwrap(), hb);
        let alter = AlterSyncStateSetHeader {
            broker_name: "b".into(),
            master_broker_id: 1,
            master_epoch: 3,
            invoke_time: None,
        };
        assert_eq!(keys(&alter.to_ext()), ["masterBrokerId", "brokerName", "masterEpoch"]);
        assert_eq!(AlterSyncStateSetHeader::read(&with(alter.to_ext())).unwrap(), alter);
    }

    #[test]
    fn missing_or_bad_required_fields_are_header_errors() {
        let err = ApplyBrokerIdHeader::read(&with(ExtFields::new().with("appliedBrokerId", "1"))).unwrap_err();
        assert_eq!(err.to_string(), "the custom field <registerCheckCode> is null");
        let bad =
            ExtFields::new().with("masterBrokerId", "1").with("brokerName", "b").with("masterEpoch", "99999999999");
        assert!(matches!(AlterSyncStateSetHeader::read(&with(bad)), Err(HeaderError::NotANumber { .. })));
        let no_id = ExtFields::new().with("clusterName", "c").with("brokerAddr", "a").with("brokerName", "b");
        assert_eq!(ControllerHeartbeatHeader::read(&with(no_id)).unwrap().broker_id, None);
    }
}
