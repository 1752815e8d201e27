//! RemotingCommand → actor message → RemotingCommand. Every request failure becomes a RocketMQ
//! response code here, in one place; only framing errors close a connection.
//!
//! The handlers are grouped as the Java NameServer's callers are: `broker` (what brokers send),
//! `client` (route and cluster queries), `admin` (mqadmin's topic and permission tools) and
//! `store` (KV and runtime configuration).

mod admin;
mod broker;
mod client;
mod store;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix::MailboxError;
use thiserror::Error;
use tracing::debug;

use crate::config_store::ConfigHandle;
use crate::kv::KvHandle;
use crate::mailbox::ConnId;
use crate::protocol::body::BodyError;
use crate::protocol::command::FLAG_RESPONSE;
use crate::protocol::header::HeaderError;
use crate::protocol::{LanguageCode, RemotingCommand, RequestCode, ResponseCode};
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
    /// A route query inside the `need_wait_for_service` window.
    #[error("name server not ready")]
    NotReady,
    /// A topic list switched off by configuration.
    #[error("disable")]
    Disabled,
    /// PUT_KV_CONFIG without any extFields.
    #[error("namespace or key is null")]
    NamespaceOrKeyNull,
    /// A store could not make a change durable, or refused a value.
    #[error("{0}")]
    Store(String),
    /// UPDATE_NAMESRV_CONFIG touched a blacklisted key.
    #[error("Can not update config in black list.")]
    BlackListed,
    /// UPDATE_NAMESRV_CONFIG's body is not properties text.
    #[error("string2Properties error")]
    BadProperties,
    /// A task failed unexpectedly.
    #[error("internal error: {0}")]
    Internal(String),
    /// An actor is gone (shutdown).
    #[error("namesrv unavailable: {0}")]
    Unavailable(#[from] MailboxError),
}

impl RequestError {
    /// The response code Java answers this failure with.
    pub fn code(&self) -> ResponseCode {
        match self {
            Self::NotSupported(_) => ResponseCode::RequestCodeNotSupported,
            Self::BlackListed => ResponseCode::NoPermission,
            _ => ResponseCode::SystemError,
        }
    }
}

/// Per-server settings the dispatcher needs.
#[derive(Debug, Clone)]
pub struct DispatchOptions {
    pub response_serialization: ResponseSerialization,
    pub response_version: i32,
    pub max_inflated_body_bytes: usize,
    /// Decode large register bodies on the blocking pool (true) or in place.
    pub decode_large_bodies_off_thread: bool,
}

impl From<&Settings> for DispatchOptions {
    fn from(s: &Settings) -> Self {
        Self {
            response_serialization: s.response_serialization().unwrap_or(ResponseSerialization::SameAsRequest),
            response_version: s.response_version,
            max_inflated_body_bytes: s.max_inflated_body_bytes,
            decode_large_bodies_off_thread: match s.large_body_decode.to_ascii_lowercase().as_str() {
                "blocking" => true,
                "inline" => false,
                // Only where this process may use another core (its CPU affinity included).
                _ => std::thread::available_parallelism().is_ok_and(|n| n.get() > 1),
            },
        }
    }
}

/// The actors a request can reach.
#[derive(Clone)]
pub struct Actors {
    pub registry: RegistryHandle,
    pub kv: KvHandle,
    pub config: ConfigHandle,
}

/// Turns requests into actor messages and answers into responses. Cheap to clone.
#[derive(Clone)]
pub struct Dispatcher {
    actors: Actors,
    options: Arc<DispatchOptions>,
    in_flight: Arc<AtomicUsize>,
    large_decodes: Arc<tokio::sync::Semaphore>,
}

type Outcome = Result<RemotingCommand, RequestError>;

/// Counts a request as in flight until dropped, even if its future is cancelled.
struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Dispatcher {
    /// A dispatcher in front of `actors`.
    pub fn new(actors: Actors, options: DispatchOptions) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            actors,
            options: Arc::new(options),
            in_flight: Arc::new(AtomicUsize::new(0)),
            large_decodes: Arc::new(tokio::sync::Semaphore::new(cores)),
        }
    }

    /// Requests being handled right now, across every connection.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Handles one request; `None` for oneway requests, which are never answered.
    pub async fn dispatch(self, conn: ConnId, request: RemotingCommand) -> Option<RemotingCommand> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        let _guard = InFlight(self.in_flight.clone());
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
        use RequestCode::*;
        let Some(code) = RequestCode::from_i32(req.code) else {
            return Err(RequestError::NotSupported(req.code));
        };
        match code {
            PutKvConfig => self.put_kv_config(conn, req).await,
            GetKvConfig => self.get_kv_config(conn, req).await,
            DeleteKvConfig => self.delete_kv_config(conn, req).await,
            GetKvlistByNamespace => self.get_kv_list(conn, req).await,
            UpdateNamesrvConfig => self.update_config(conn, req).await,
            GetNamesrvConfig => self.get_config(conn).await,
            RegisterBroker => self.register_broker(conn, req).await,
            UnregisterBroker => self.unregister_broker(conn, req).await,
            QueryDataVersion => self.query_data_version(conn, req).await,
            BrokerHeartbeat => self.broker_heartbeat(conn, req).await,
            RegisterTopicInNamesrv => self.register_topic(conn, req).await,
            GetRouteinfoByTopic => self.route_info(conn, req).await,
            GetBrokerClusterInfo => self.cluster_info(conn).await,
            GetBrokerMemberGroup => self.member_group(conn, req).await,
            WipeWritePermOfBroker | AddWritePermOfBroker => self.write_perm(conn, req, code).await,
            DeleteTopicInNamesrv => self.delete_topic(conn, req).await,
            GetAllTopicListFromNameserver => self.all_topics(conn).await,
            GetTopicsByCluster => self.topics_by_cluster(conn, req).await,
            GetSystemTopicListFromNs => self.system_topics(conn).await,
            GetUnitTopicList | GetHasUnitSubTopicList | GetHasUnitSubUnunitTopicList => {
                self.unit_topics(conn, code).await
            }
            NotifyMinBrokerIdChange => Err(RequestError::NotSupported(req.code)),
        }
    }
}

/// A SUCCESS response with nothing else.
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
    fn errors_map_to_javas_codes_and_remarks() {
        assert_eq!(RequestError::NotSupported(99999).to_string(), " request type 99999 not supported");
        assert_eq!(RequestError::NotSupported(1).code(), ResponseCode::RequestCodeNotSupported);
        assert_eq!(RequestError::BlackListed.code(), ResponseCode::NoPermission);
        assert_eq!(RequestError::CrcMismatch.code(), ResponseCode::SystemError);
    }
}
