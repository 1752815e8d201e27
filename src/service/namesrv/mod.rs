//! The NameServer service: RemotingCommand → actor message → RemotingCommand. Every request
//! failure becomes a RocketMQ response code here, in one place ([`RequestError::code`]); only
//! framing errors close a connection.
//!
//! Every request enters through its connection's session (`session`): the admission gate as
//! `policy` describes the code (access control, transport rules), then route queries down the
//! route lane (`route`, `batch`: its thread's batcher) and the rest to [`Dispatcher::dispatch`].
//!
//! The handlers are grouped as the Java NameServer's callers are: `broker` (what brokers send),
//! `client` (route and cluster queries), `admin` (mqadmin's topic and permission tools) and
//! `store` (KV and runtime configuration); `shape` is the shape a signed broker request must have.

mod admin;
pub mod batch;
mod broker;
mod client;
pub mod policy;
pub mod route;
pub mod session;
mod shape;
mod store;

use std::rc::Rc;
use std::sync::Arc;

use actix::MailboxError;
use bytes::Bytes;
use thiserror::Error;
use tracing::debug;

use self::route::Checked;
use crate::acl::verify::Denied;
use crate::acl::Caller;
use crate::admission::Gate;
use crate::config_store::{ConfigError, ConfigHandle};
use crate::kv::{KvError, KvHandle};
use crate::origin::Origin;
use crate::protocol::body::{BodyError, BodyLimits};
use crate::protocol::header::HeaderError;
use crate::protocol::reply::template::ReplyTemplate;
use crate::protocol::{RemotingCommand, RequestCode, ResponseCode, SerializeType};
use crate::registry::binding::BoundElsewhere;
use crate::registry::listings::ListingCache;
use crate::registry::topic_limit::RegisterRefused;
use crate::registry::RegistryHandle;
use crate::service::Stamp;
use crate::settings::{LargeBodyDecode, Settings, UpdateError};

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
    /// A name, topic or value over its limit.
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
    /// The KV store refused a change or could not make it durable.
    #[error(transparent)]
    Kv(#[from] KvError),
    /// UPDATE_NAMESRV_CONFIG was refused or could not be made durable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// UPDATE_NAMESRV_CONFIG's body is not properties text.
    #[error("string2Properties error")]
    BadProperties,
    /// The blocking-pool task decoding a body failed.
    #[error("body decode task failed: {0}")]
    DecodeTask(#[from] tokio::task::JoinError),
    /// The pool of large-body decodes is closed (shutdown).
    #[error("body decode pool closed")]
    DecodePoolClosed(#[from] tokio::sync::AcquireError),
    /// An actor is gone (shutdown).
    #[error("namesrv unavailable: {0}")]
    Unavailable(#[from] MailboxError),
    /// Access control refused the request.
    #[error(transparent)]
    Denied(#[from] Denied),
    /// A broker live under another access key.
    #[error(transparent)]
    BoundElsewhere(#[from] BoundElsewhere),
    /// A registration past `max_topics_total`.
    #[error(transparent)]
    Registration(#[from] RegisterRefused),
}

impl RequestError {
    /// The response code Java answers this failure with.
    pub fn code(&self) -> ResponseCode {
        match self {
            Self::NotSupported(_) => ResponseCode::RequestCodeNotSupported,
            Self::Config(ConfigError::Update(UpdateError::BlackListed(_))) => ResponseCode::NoPermission,
            Self::Denied(_) | Self::BoundElsewhere(_) => ResponseCode::NoPermission,
            Self::Registration(RegisterRefused::BoundElsewhere(_)) => ResponseCode::NoPermission,
            _ => ResponseCode::SystemError,
        }
    }
}

/// Per-server settings the dispatcher needs.
#[derive(Debug, Clone)]
pub struct DispatchOptions {
    /// How replies are stamped.
    pub stamp: Stamp,
    /// Bounds on decoding register bodies.
    pub body_limits: BodyLimits,
    /// Where register bodies are decoded.
    pub body_decode: LargeBodyDecode,
    /// Largest KV value.
    pub kv_max_value_bytes: usize,
}

impl From<&Settings> for DispatchOptions {
    fn from(s: &Settings) -> Self {
        Self {
            stamp: Stamp::of(s),
            body_limits: BodyLimits {
                max_inflated_bytes: s.limits.max_inflated_body_bytes,
                max_topics: s.limits.max_topics_per_broker,
            },
            body_decode: s.listen.large_body_decode,
            kv_max_value_bytes: s.limits.kv_max_value_bytes,
        }
    }
}

/// The actors a request can reach.
#[derive(Clone)]
pub struct Actors {
    /// Route state.
    pub registry: RegistryHandle,
    /// The KV config store.
    pub kv: KvHandle,
    /// The runtime configuration.
    pub config: ConfigHandle,
}

/// Turns requests into actor messages and answers into responses. Cheap to clone: the service
/// is one, and each I/O thread keeps a clone its connections share (`session`).
#[derive(Clone)]
pub struct Dispatcher {
    /// The actors requests are sent to.
    actors: Actors,
    /// Settings fixed at start.
    options: Arc<DispatchOptions>,
    /// One permit per core: large register bodies decoded on the blocking pool at once.
    large_decodes: Arc<tokio::sync::Semaphore>,
    /// One permit per core: KV namespace lists (a copy of the namespace, then its JSON) built at
    /// once, so pipelined lists wait here instead of each holding a copy.
    large_replies: Arc<tokio::sync::Semaphore>,
    /// Topic listings built, for the tables' current generation (shared by every thread).
    listings: Arc<ListingCache>,
    /// The admission layer every request passes.
    gate: Arc<Gate>,
}

type Outcome = Result<RemotingCommand, RequestError>;

impl Dispatcher {
    /// A dispatcher in front of `actors`, behind `gate`.
    pub fn new(actors: Actors, options: DispatchOptions, gate: Arc<Gate>) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            actors,
            options: Arc::new(options),
            large_decodes: Arc::new(tokio::sync::Semaphore::new(cores)),
            large_replies: Arc::new(tokio::sync::Semaphore::new(cores)),
            listings: Arc::default(),
            gate,
        }
    }

    /// The template of the reply to a route query that found its route, but for opaque and
    /// body, when replies are JSON (`None` where they cannot be framed from one).
    pub fn route_found_template(&self) -> Option<ReplyTemplate> {
        let found = self.respond(Ok(success().with_body(Bytes::new())), route::ROUTE, 0, SerializeType::Json);
        ReplyTemplate::json(&found)
    }

    /// Handles one admitted request (never a route query: those take the route lane); `None`
    /// for oneway requests, which are never answered.
    pub async fn dispatch(self: Rc<Self>, origin: Origin, checked: Checked) -> Option<RemotingCommand> {
        let Checked { request, caller } = checked;
        let outcome = self.handle(origin, &request, &caller).await;
        let response = self.respond(outcome, request.code, request.opaque, request.serialize_type);
        (!request.is_oneway()).then_some(response)
    }

    /// The reply to request `code` (`opaque`, its header read as `header`): the outcome's
    /// response or its failure's code and remark, stamped as every reply is.
    fn respond(&self, outcome: Outcome, code: i32, opaque: i32, header: SerializeType) -> RemotingCommand {
        let response = outcome.unwrap_or_else(|e| {
            debug!(code, error = %e, "request failed");
            RemotingCommand::response(e.code(), Some(e.to_string()))
        });
        self.options.stamp.stamp(response, opaque, header)
    }

    async fn handle(&self, origin: Origin, req: &RemotingCommand, caller: &Caller) -> Outcome {
        use RequestCode::*;
        let conn = origin.conn;
        let Some(code) = RequestCode::from_i32(req.code) else {
            return Err(RequestError::NotSupported(req.code));
        };
        if is_costly(code) {
            // Its own address's rate: a peer pipelining listings waits on its own connection.
            self.gate.pace(&origin).await;
        }
        // The frequent codes are awaited in place; the rest are boxed, so that the future every
        // request allocates stays small (register and config futures are kilobytes).
        match code {
            // Never here: `admit` sends every route query down the route lane.
            GetRouteinfoByTopic => Err(RequestError::NotSupported(req.code)),
            BrokerHeartbeat => self.broker_heartbeat(origin, req, caller).await,
            QueryDataVersion => self.query_data_version(origin, req, caller).await,
            GetBrokerClusterInfo => self.cluster_info(conn).await,
            PutKvConfig => Box::pin(self.put_kv_config(conn, req)).await,
            GetKvConfig => Box::pin(self.get_kv_config(conn, req)).await,
            DeleteKvConfig => Box::pin(self.delete_kv_config(conn, req)).await,
            GetKvlistByNamespace => Box::pin(self.get_kv_list(conn, req)).await,
            UpdateNamesrvConfig => Box::pin(self.update_config(origin, req)).await,
            GetNamesrvConfig => Box::pin(self.get_config(conn)).await,
            RegisterBroker => Box::pin(self.register_broker(origin, req, caller)).await,
            UnregisterBroker => Box::pin(self.unregister_broker(origin, req, caller)).await,
            RegisterTopicInNamesrv => Box::pin(self.register_topic(origin, req, caller)).await,
            GetBrokerMemberGroup => Box::pin(self.member_group(conn, req)).await,
            WipeWritePermOfBroker | AddWritePermOfBroker => Box::pin(self.write_perm(conn, req, code)).await,
            DeleteTopicInNamesrv => Box::pin(self.delete_topic(conn, req)).await,
            GetAllTopicListFromNameserver => Box::pin(self.all_topics(conn)).await,
            GetTopicsByCluster => Box::pin(self.topics_by_cluster(conn, req)).await,
            GetSystemTopicListFromNs => Box::pin(self.system_topics(conn)).await,
            GetUnitTopicList | GetHasUnitSubTopicList | GetHasUnitSubUnunitTopicList => {
                Box::pin(self.unit_topics(conn, code)).await
            }
            NotifyMinBrokerIdChange => Err(RequestError::NotSupported(req.code)),
        }
    }
}

/// Whether requests of `code` cost work in proportion to the tables or the KV store (topic
/// listings, KV namespace lists): each source address may send them only at its own rate.
fn is_costly(code: RequestCode) -> bool {
    use RequestCode::*;
    matches!(
        code,
        GetAllTopicListFromNameserver
            | GetTopicsByCluster
            | GetUnitTopicList
            | GetHasUnitSubTopicList
            | GetHasUnitSubUnunitTopicList
            | GetKvlistByNamespace
    )
}

/// A SUCCESS response with nothing else.
fn success() -> RemotingCommand {
    RemotingCommand::response(ResponseCode::Success, None)
}

/// CRC-32 of the body with the top bit cleared, as brokers send it in `bodyCrc32`.
pub use crate::protocol::body_crc32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_check_value_is_the_standard_one() {
        assert_eq!(body_crc32(b"123456789"), 1_274_296_614);
    }

    #[test]
    fn errors_map_to_javas_codes_and_remarks() {
        assert_eq!(RequestError::NotSupported(99999).to_string(), " request type 99999 not supported");
        assert_eq!(RequestError::NotSupported(1).code(), ResponseCode::RequestCodeNotSupported);
        let black = RequestError::Config(ConfigError::Update(UpdateError::BlackListed("x".into())));
        assert_eq!(black.code(), ResponseCode::NoPermission);
        assert_eq!(black.to_string(), "Can not update config in black list.");
        assert_eq!(RequestError::CrcMismatch.code(), ResponseCode::SystemError);
    }
}
