//! Controller request headers, read leniently from `extFields` and written with
//! Java's key order (Java builds extFields as a `HashMap` of the header's fields, so its bytes
//! follow `String.hashCode` bucket order; each header declares its fields in that order, which
//! holds when fields are absent too). Every value travels as a string; an absent field is a
//! null. Each header is declared once ([`controller_header`]): its fields, their Java names and
//! types give both the reader and the writer. The responses' headers are in `response`.

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

/// Whether a `Boolean` field's value is true, as Java's `Boolean.parseBoolean` reads a trimmed
/// value: `true` in any case.
fn is_true(value: &str) -> bool {
    value.trim().eq_ignore_ascii_case("true")
}

/// How a header field of this type is read and written: a plain type is required (`@CFNotNull`:
/// absent or not a number is a header error), an `Option` optional (a number that does not
/// parse is absent, as in Java).
pub trait HeaderValue: Sized {
    /// Reads field `name`.
    fn read(f: &Fields, name: &'static str) -> Result<Self, HeaderError>;
    /// The value as it travels; `None` leaves the field out.
    fn write(&self) -> Option<String>;
}

impl HeaderValue for String {
    fn read(f: &Fields, name: &'static str) -> Result<Self, HeaderError> {
        f.required(name).map(str::to_owned)
    }
    fn write(&self) -> Option<String> {
        text(self)
    }
}

impl HeaderValue for i64 {
    fn read(f: &Fields, name: &'static str) -> Result<Self, HeaderError> {
        f.required_i64(name)
    }
    fn write(&self) -> Option<String> {
        num(self)
    }
}

impl HeaderValue for i32 {
    fn read(f: &Fields, name: &'static str) -> Result<Self, HeaderError> {
        required_i32(f, name)
    }
    fn write(&self) -> Option<String> {
        num(self)
    }
}

impl HeaderValue for bool {
    fn read(f: &Fields, name: &'static str) -> Result<Self, HeaderError> {
        f.required(name).map(is_true)
    }
    fn write(&self) -> Option<String> {
        num(self)
    }
}

impl HeaderValue for Option<String> {
    fn read(f: &Fields, name: &'static str) -> Result<Self, HeaderError> {
        Ok(f.optional(name).map(str::to_owned))
    }
    fn write(&self) -> Option<String> {
        self.clone()
    }
}

impl HeaderValue for Option<i64> {
    fn read(f: &Fields, name: &'static str) -> Result<Self, HeaderError> {
        Ok(f.optional_i64(name))
    }
    fn write(&self) -> Option<String> {
        self.and_then(num)
    }
}

impl HeaderValue for Option<i32> {
    fn read(f: &Fields, name: &'static str) -> Result<Self, HeaderError> {
        Ok(optional_i32(f, name))
    }
    fn write(&self) -> Option<String> {
        self.and_then(num)
    }
}

impl HeaderValue for Option<bool> {
    fn read(f: &Fields, name: &'static str) -> Result<Self, HeaderError> {
        Ok(f.optional_bool(name))
    }
    fn write(&self) -> Option<String> {
        self.and_then(num)
    }
}

/// Declares a request header once: a struct whose fields, in Java's extFields order, each name
/// their Java key; `read` (failing on the first required field absent or malformed, in that
/// order) and `to_ext` (that order) come from the one list.
macro_rules! controller_header {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty = $key:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)+
        }

        impl $name {
            /// Reads the header from a request's extFields.
            pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
                let f = Fields::of(cmd);
                Ok(Self { $($field: HeaderValue::read(&f, $key)?,)+ })
            }

            /// The extFields in Java's order, absent fields left out.
            pub fn to_ext(&self) -> ExtFields {
                let mut fields = ExtFields::new();
                $(if let Some(value) = HeaderValue::write(&self.$field) {
                    fields.insert($key, value);
                })+
                fields
            }
        }
    };
}

controller_header! {
    /// CONTROLLER_GET_NEXT_BROKER_ID's request (`GetNextBrokerIdRequestHeader`).
    GetNextBrokerIdHeader {
        cluster_name: String = "clusterName",
        broker_name: String = "brokerName",
    }
}

controller_header! {
    /// CONTROLLER_APPLY_BROKER_ID's request (`ApplyBrokerIdRequestHeader`); every field is
    /// required (Java dereferences each).
    ApplyBrokerIdHeader {
        applied_broker_id: i64 = "appliedBrokerId",
        /// `address;millis`: who applies, so that a retry by the same broker is recognised.
        register_check_code: String = "registerCheckCode",
        cluster_name: String = "clusterName",
        broker_name: String = "brokerName",
    }
}

controller_header! {
    /// CONTROLLER_REGISTER_BROKER's request (`RegisterBrokerToControllerRequestHeader`).
    RegisterToControllerHeader {
        broker_id: i64 = "brokerId",
        invoke_time: Option<i64> = "invokeTime",
        cluster_name: String = "clusterName",
        broker_name: String = "brokerName",
        broker_address: String = "brokerAddress",
    }
}

controller_header! {
    /// CONTROLLER_ELECT_MASTER's request (`ElectMasterRequestHeader`).
    ElectMasterHeader {
        /// The requester, or -1 when the controller itself asks.
        broker_id: i64 = "brokerId",
        invoke_time: Option<i64> = "invokeTime",
        cluster_name: String = "clusterName",
        /// An admin naming the new master (`electMaster`), rather than a broker asking.
        designate_elect: bool = "designateElect",
        broker_name: String = "brokerName",
    }
}

impl ElectMasterHeader {
    /// Whether `cmd` designates its broker as the new master (`designateElect` true in any
    /// case, as Java's `Boolean.parseBoolean` reads it): what access control and the header
    /// read alike.
    pub fn designates(cmd: &RemotingCommand) -> bool {
        cmd.ext("designateElect").is_some_and(is_true)
    }
}

controller_header! {
    /// CONTROLLER_GET_REPLICA_INFO's request (`GetReplicaInfoRequestHeader`).
    GetReplicaInfoHeader {
        broker_name: String = "brokerName",
    }
}

controller_header! {
    /// CONTROLLER_ALTER_SYNC_STATE_SET's request (`AlterSyncStateSetRequestHeader`).
    AlterSyncStateSetHeader {
        master_broker_id: i64 = "masterBrokerId",
        invoke_time: Option<i64> = "invokeTime",
        broker_name: String = "brokerName",
        master_epoch: i32 = "masterEpoch",
    }
}

controller_header! {
    /// BROKER_HEARTBEAT as a controller-mode broker sends it (`BrokerHeartbeatRequestHeader`);
    /// the three `@CFNotNull` names are required.
    ControllerHeartbeatHeader {
        /// `None`: Java answers CONTROLLER_INVALID_REQUEST (never seen: the request is oneway).
        broker_id: Option<i64> = "brokerId",
        election_priority: Option<i32> = "electionPriority",
        confirm_offset: Option<i64> = "confirmOffset",
        heartbeat_timeout_mills: Option<i64> = "heartbeatTimeoutMills",
        cluster_name: String = "clusterName",
        broker_addr: String = "brokerAddr",
        epoch: Option<i32> = "epoch",
        max_offset: Option<i64> = "maxOffset",
        broker_name: String = "brokerName",
    }
}

controller_header! {
    /// CLEAN_BROKER_DATA's request (`CleanControllerBrokerDataRequestHeader`); only
    /// `brokerName` is required.
    CleanBrokerDataHeader {
        /// `1;2`: the ids to remove; absent or blank: the whole group.
        broker_controller_ids_to_clean: Option<String> = "brokerControllerIdsToClean",
        /// Absent: false.
        is_clean_living_broker: Option<bool> = "isCleanLivingBroker",
        invoke_time: Option<i64> = "invokeTime",
        cluster_name: Option<String> = "clusterName",
        broker_name: String = "brokerName",
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
