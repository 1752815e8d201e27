//! RemotingCommand → registry message → RemotingCommand. Every request failure becomes a
//! RocketMQ response code here, in one place; only framing errors close a connection.

use std::sync::Arc;

use actix::MailboxError;
use thiserror::Error;
use tracing::debug;

use crate::model::DataVersion;
use crate::protocol::body::{decode_data_version, decode_register_body, BodyError};
use crate::protocol::code::version;
use crate::protocol::command::FLAG_RESPONSE;
use crate::protocol::header::{BrokerHeartbeatHeader, BrokerIdentityHeader, Fields, HeaderError, RegisterBrokerHeader};
use crate::protocol::json::JsonStyle;
use crate::protocol::{ExtFields, LanguageCode, RemotingCommand, RequestCode, ResponseCode};
use crate::registry::liveness::BrokerRef;
use crate::registry::messages::*;
use crate::registry::register::Registration;
use crate::registry::RegistryHandle;
use crate::settings::{ResponseSerialization, Settings};

/// Why a request failed; each maps to one response code and remark.
#[derive(Debug, Error)]
pub enum RequestError {
    /// The code is not one the NameServer serves.
    #[error(" request type {0} not supported")]
    NotSupported(i32),
    /// A required header field is missing or malformed.
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// The body does not decode.
    #[error(transparent)]
    Body(#[from] BodyError),
    /// `bodyCrc32` does not match the body.
    #[error("crc32 not match")]
    CrcMismatch,
    /// The registry refused the registration (first registration with a single topic).
    #[error("register broker failed")]
    RegisterFailed,
    /// The registry is gone (shutdown).
    #[error("route registry unavailable: {0}")]
    Unavailable(#[from] MailboxError),
}

impl RequestError {
    /// The response code Java answers this failure with.
    pub fn code(&self) -> ResponseCode {
        match self {
            Self::NotSupported(_) => ResponseCode::RequestCodeNotSupported,
            _ => ResponseCode::SystemError,
        }
    }
}

/// The remark of TOPIC_NOT_EXIST, Java's wording.
fn topic_not_exist_remark(topic: &str) -> String {
    format!(
        "No topic route info in name server for the topic: {topic}\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
    )
}

/// Per-server settings the dispatcher needs.
#[derive(Debug, Clone)]
pub struct DispatchOptions {
    pub response_serialization: ResponseSerialization,
    pub response_version: i32,
    pub max_inflated_body_bytes: usize,
}

impl From<&Settings> for DispatchOptions {
    fn from(s: &Settings) -> Self {
        Self {
            response_serialization: s.response_serialization().unwrap_or(ResponseSerialization::SameAsRequest),
            response_version: s.response_version,
            max_inflated_body_bytes: s.max_inflated_body_bytes,
        }
    }
}

/// Turns requests into registry messages and answers into responses. Cheap to clone.
#[derive(Clone)]
pub struct Dispatcher {
    registry: RegistryHandle,
    options: Arc<DispatchOptions>,
}

type Outcome = Result<RemotingCommand, RequestError>;

impl Dispatcher {
    /// A dispatcher in front of `registry`.
    pub fn new(registry: RegistryHandle, options: DispatchOptions) -> Self {
        Self { registry, options: Arc::new(options) }
    }

    /// Handles one request; `None` for oneway requests, which are never answered.
    pub async fn dispatch(self, conn: ConnId, request: RemotingCommand) -> Option<RemotingCommand> {
        let outcome = self.handle(conn, &request).await;
        let mut response = outcome.unwrap_or_else(|e| {
            debug!(conn = conn.0, code = request.code, error = %e, "request failed");
            RemotingCommand::response(e.code(), Some(e.to_string()))
        });
        if request.is_oneway() {
            return None;
        }
        response.opaque = request.opaque;
        response.flag |= FLAG_RESPONSE;
        response.language = Some(LanguageCode::Java);
        response.version = self.options.response_version;
        response.serialize_type = match self.options.response_serialization {
            ResponseSerialization::SameAsRequest => request.serialize_type,
            ResponseSerialization::Fixed(t) => t,
        };
        Some(response)
    }

    async fn handle(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let Some(code) = RequestCode::from_i32(req.code) else {
            return Err(RequestError::NotSupported(req.code));
        };
        match code {
            RequestCode::RegisterBroker => self.register_broker(conn, req).await,
            RequestCode::UnregisterBroker => self.unregister_broker(conn, req).await,
            RequestCode::GetRouteinfoByTopic => self.route_info(conn, req).await,
            RequestCode::GetBrokerClusterInfo => {
                let body = self.registry.ask(GetClusterInfo { conn }).await?;
                Ok(success().with_body(body))
            }
            RequestCode::QueryDataVersion => self.query_data_version(conn, req).await,
            RequestCode::BrokerHeartbeat => {
                let h = BrokerHeartbeatHeader::read(req)?;
                self.registry.ask(BrokerHeartbeat { conn, cluster: h.cluster_name, addr: h.broker_addr }).await?;
                Ok(success())
            }
            _ => Err(RequestError::NotSupported(req.code)),
        }
    }

    async fn register_broker(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let h = RegisterBrokerHeader::read(req)?;
        let body = req.body.as_deref();
        if h.body_crc32 != 0 && i64::from(body_crc32(body.unwrap_or_default())) != h.body_crc32 {
            return Err(RequestError::CrcMismatch);
        }
        let body = decode_register_body(body, h.compressed, req.version, self.options.max_inflated_body_bytes)?;
        let registration = Registration {
            conn,
            cluster: h.cluster_name,
            addr: h.broker_addr,
            broker_name: h.broker_name,
            broker_id: h.broker_id,
            ha_server_addr: h.ha_server_addr,
            zone_name: h.zone_name,
            timeout_ms: h.heartbeat_timeout_millis.map(|ms| ms.max(0) as u64),
            enable_acting_master: h.enable_acting_master,
            topics_fingerprint: body.topics_fingerprint(),
            body,
        };
        let outcome =
            self.registry.ask(RegisterBroker { conn, registration }).await?.ok_or(RequestError::RegisterFailed)?;
        let mut ext = ExtFields::new();
        if let Some(master) = outcome.master_addr {
            ext.insert("masterAddr", master);
        }
        if let Some(ha) = outcome.ha_server_addr {
            ext.insert("haServerAddr", ha);
        }
        Ok(RemotingCommand { ext_fields: Some(ext), ..success() })
    }

    async fn unregister_broker(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let h = BrokerIdentityHeader::read(req)?;
        let broker = BrokerRef {
            cluster: h.cluster_name,
            addr: h.broker_addr,
            broker_name: h.broker_name,
            broker_id: h.broker_id,
        };
        self.registry.ask(UnregisterBroker { conn, broker }).await?;
        Ok(success())
    }

    async fn route_info(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        // Java skips header validation when there are no extFields at all: the topic is then
        // null and the lookup simply finds nothing.
        if req.ext_fields.is_none() {
            return Ok(RemotingCommand::response(ResponseCode::TopicNotExist, Some(topic_not_exist_remark("null"))));
        }
        let f = Fields::of(req);
        let topic = f.required("topic")?;
        let standard = req.version >= version::V4_9_4 || f.optional_bool("acceptStandardJsonOnly") == Some(true);
        let style = if standard { JsonStyle::Standard } else { JsonStyle::Fastjson };
        let route = self.registry.ask(GetRouteInfo { conn, topic: topic.to_owned(), style }).await?;
        Ok(match route {
            Some(body) => success().with_body(body),
            None => RemotingCommand::response(ResponseCode::TopicNotExist, Some(topic_not_exist_remark(topic))),
        })
    }

    async fn query_data_version(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let h = BrokerIdentityHeader::read(req)?;
        let version: Option<DataVersion> = req.body.as_deref().map(decode_data_version).transpose()?;
        let (changed, stored) =
            self.registry.ask(QueryDataVersion { conn, cluster: h.cluster_name, addr: h.broker_addr, version }).await?;
        let mut response =
            RemotingCommand { ext_fields: Some(ExtFields::new().with("changed", changed.to_string())), ..success() };
        if let Some(stored) = stored {
            response.body = Some(stored.to_json().into());
        }
        Ok(response)
    }
}

fn success() -> RemotingCommand {
    RemotingCommand::response(ResponseCode::Success, None)
}

/// CRC-32 of the body with the top bit cleared, as brokers send it in `bodyCrc32`.
pub fn body_crc32(body: &[u8]) -> u32 {
    crc32fast::hash(body) & 0x7FFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_check_value_matches_the_spec() {
        assert_eq!(body_crc32(b"123456789"), 1_274_296_614);
    }

    #[test]
    fn unknown_code_remark_has_javas_leading_space() {
        assert_eq!(RequestError::NotSupported(99999).to_string(), " request type 99999 not supported");
        assert_eq!(RequestError::NotSupported(1).code(), ResponseCode::RequestCodeNotSupported);
        assert_eq!(RequestError::CrcMismatch.code(), ResponseCode::SystemError);
    }
}
