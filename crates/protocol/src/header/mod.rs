//! Request and response headers: the JSON header (`json`, serialize type 0) with its fast
//! readers — `scan` for any plain header, `java_route` for the route query exactly as Java
//! clients write it — and the ROCKETMQ binary header (`binary`, serialize type 1); then typed
//! access to a request's `extFields` (`fields`). The fast readers give up rather than decide:
//! whatever they do not read exactly as the general reader would goes to that reader.

pub mod binary;
mod fields;
pub(crate) mod java_route;
pub mod json;
pub(crate) mod scan;

pub use fields::{BrokerHeartbeatHeader, BrokerIdentityHeader, Fields, HeaderError, RegisterBrokerHeader};
pub use java_route::RouteHeader;
