//! Typed request headers read from `extFields`, with the leniency of Java's `decodeCommandCustomHeader`.

use thiserror::Error;

use crate::command::RemotingCommand;

/// A custom header that does not satisfy its request class; answered with SYSTEM_ERROR.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HeaderError {
    /// A `@CFNotNull` field is absent (Java's exact wording).
    #[error("the custom field <{0}> is null")]
    Missing(&'static str),
    /// A required numeric field does not parse.
    #[error("the custom field <{field}> is not a number: {value:?}")]
    NotANumber { field: &'static str, value: String },
}

/// Read access to a request's ext fields with required/optional semantics.
pub struct Fields<'a>(&'a RemotingCommand);

impl<'a> Fields<'a> {
    /// Views the ext fields of `cmd`.
    pub fn of(cmd: &'a RemotingCommand) -> Self {
        Self(cmd)
    }

    /// A required string field.
    pub fn required(&self, name: &'static str) -> Result<&'a str, HeaderError> {
        self.0.ext(name).ok_or(HeaderError::Missing(name))
    }

    /// A required integer field.
    pub fn required_i64(&self, name: &'static str) -> Result<i64, HeaderError> {
        let value = self.required(name)?;
        value.trim().parse().map_err(|_| HeaderError::NotANumber { field: name, value: value.to_owned() })
    }

    /// An optional string field.
    pub fn optional(&self, name: &str) -> Option<&'a str> {
        self.0.ext(name)
    }

    /// An optional integer; a value that does not parse counts as absent, as in Java.
    pub fn optional_i64(&self, name: &str) -> Option<i64> {
        self.optional(name).and_then(|v| v.trim().parse().ok())
    }

    /// An optional boolean parsed like Java's `Boolean.parseBoolean`: only "true", any case.
    pub fn optional_bool(&self, name: &str) -> Option<bool> {
        self.optional(name).map(|v| v.eq_ignore_ascii_case("true"))
    }
}

/// REGISTER_BROKER's header (Java's `RegisterBrokerRequestHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterBrokerHeader {
    pub broker_name: String,
    pub broker_addr: String,
    pub cluster_name: String,
    pub ha_server_addr: String,
    pub broker_id: i64,
    pub heartbeat_timeout_millis: Option<i64>,
    pub enable_acting_master: Option<bool>,
    pub compressed: bool,
    pub body_crc32: i64,
    pub zone_name: Option<String>,
}

impl RegisterBrokerHeader {
    /// Reads the header, failing on the first missing required field.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            broker_name: f.required("brokerName")?.to_owned(),
            broker_addr: f.required("brokerAddr")?.to_owned(),
            cluster_name: f.required("clusterName")?.to_owned(),
            ha_server_addr: f.required("haServerAddr")?.to_owned(),
            broker_id: f.required_i64("brokerId")?,
            heartbeat_timeout_millis: f.optional_i64("heartbeatTimeoutMillis"),
            enable_acting_master: f.optional_bool("enableActingMaster"),
            compressed: f.optional_bool("compressed").unwrap_or(false),
            body_crc32: f.optional_i64("bodyCrc32").unwrap_or(0),
            zone_name: f.optional("__ZONE_NAME").map(str::to_owned),
        })
    }
}

/// The identity fields shared by UNREGISTER_BROKER and QUERY_DATA_VERSION.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerIdentityHeader {
    pub broker_name: String,
    pub broker_addr: String,
    pub cluster_name: String,
    pub broker_id: i64,
}

impl BrokerIdentityHeader {
    /// Reads the header, failing on the first missing required field.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            broker_name: f.required("brokerName")?.to_owned(),
            broker_addr: f.required("brokerAddr")?.to_owned(),
            cluster_name: f.required("clusterName")?.to_owned(),
            broker_id: f.required_i64("brokerId")?,
        })
    }
}

/// BROKER_HEARTBEAT's header; the controller-only fields are ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerHeartbeatHeader {
    pub cluster_name: String,
    pub broker_addr: String,
    pub broker_name: String,
}

impl BrokerHeartbeatHeader {
    /// Reads the header, failing on the first missing required field.
    pub fn read(cmd: &RemotingCommand) -> Result<Self, HeaderError> {
        let f = Fields::of(cmd);
        Ok(Self {
            cluster_name: f.required("clusterName")?.to_owned(),
            broker_addr: f.required("brokerAddr")?.to_owned(),
            broker_name: f.required("brokerName")?.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::ExtFields;

    fn cmd(fields: &[(&str, &str)]) -> RemotingCommand {
        RemotingCommand::request(103, Some(fields.iter().map(|(k, v)| (*k, *v)).collect::<ExtFields>()))
    }

    #[test]
    fn missing_required_field_is_named_like_java() {
        let err = BrokerIdentityHeader::read(&cmd(&[("brokerName", "b")])).unwrap_err();
        assert_eq!(err.to_string(), "the custom field <brokerAddr> is null");
    }

    #[test]
    fn optional_values_parse_leniently() {
        let c = cmd(&[("a", "TRUE"), ("b", "yes"), ("n", "x12"), ("m", " 12 ")]);
        let f = Fields::of(&c);
        assert_eq!(f.optional_bool("a"), Some(true));
        assert_eq!(f.optional_bool("b"), Some(false));
        assert_eq!(f.optional_bool("c"), None);
        assert_eq!(f.optional_i64("n"), None);
        assert_eq!(f.optional_i64("m"), Some(12));
    }
}
