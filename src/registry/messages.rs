//! Every message the registry accepts: one struct each, with the domain value it answers.
//!
//! Encoding to wire frames happens in `dispatch`, never here.

use bytes::Bytes;

use super::liveness::BrokerRef;
use super::register::{RegisterOutcome, Registration};
use crate::model::DataVersion;
use crate::protocol::json::JsonStyle;

/// Identifies one TCP connection for the life of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ConnId(pub u64);

impl std::fmt::Display for ConnId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A request the registry can answer; the registry's one generic handler runs `apply`.
pub trait RegistryRequest: std::fmt::Debug + Send + 'static {
    /// The domain value the registry answers with.
    type Output: Send + 'static;
    /// The message type name for mailbox logs.
    const NAME: &'static str;
    /// The connection the request came from (`ConnId(0)` for the server itself).
    fn conn(&self) -> ConnId;
}

macro_rules! request {
    ($ty:ident, $out:ty) => {
        impl RegistryRequest for $ty {
            type Output = $out;
            const NAME: &'static str = stringify!($ty);
            fn conn(&self) -> ConnId {
                self.conn
            }
        }
    };
}

/// REGISTER_BROKER with its body already decoded; `None` answers a rejected registration.
#[derive(Debug)]
pub struct RegisterBroker {
    pub conn: ConnId,
    pub registration: Registration,
}
request!(RegisterBroker, Option<RegisterOutcome>);

/// UNREGISTER_BROKER; answers whether the broker was known.
#[derive(Debug)]
pub struct UnregisterBroker {
    pub conn: ConnId,
    pub broker: BrokerRef,
}
request!(UnregisterBroker, bool);

/// GET_ROUTEINFO_BY_TOPIC; answers the encoded route, or `None` when the topic has none.
#[derive(Debug)]
pub struct GetRouteInfo {
    pub conn: ConnId,
    pub topic: String,
    pub style: JsonStyle,
}
request!(GetRouteInfo, Option<Bytes>);

/// GET_BROKER_CLUSTER_INFO; answers the encoded ClusterInfo.
#[derive(Debug)]
pub struct GetClusterInfo {
    pub conn: ConnId,
}
request!(GetClusterInfo, Bytes);

/// QUERY_DATA_VERSION; answers (changed, stored version) and refreshes the broker.
#[derive(Debug)]
pub struct QueryDataVersion {
    pub conn: ConnId,
    pub cluster: String,
    pub addr: String,
    pub version: Option<DataVersion>,
}
request!(QueryDataVersion, (bool, Option<DataVersion>));

/// BROKER_HEARTBEAT; answers whether the broker was live.
#[derive(Debug)]
pub struct BrokerHeartbeat {
    pub conn: ConnId,
    pub cluster: String,
    pub addr: String,
}
request!(BrokerHeartbeat, bool);

/// A connection that carried broker registrations has closed; its brokers go at once.
#[derive(Debug)]
pub struct ConnectionClosed {
    pub conn: ConnId,
}
request!(ConnectionClosed, ());
