//! mqadmin's tools: write permissions, topic deletion, topic lists and broker member groups.

use tracing::info;

use bytes::Bytes;

use super::{success, Dispatcher, Outcome, RequestError};
use crate::origin::ConnId;
use crate::protocol::header::{Fields, HeaderError};
use crate::protocol::reply::body::encode_topic_list;
use crate::protocol::{ExtFields, RemotingCommand, RequestCode};
use crate::registry::admin::UnitFilter;
use crate::registry::listings::ListingKind;
use crate::registry::messages::*;

/// Listings of up to this many topic entries are built in place: handing them to the blocking
/// pool would cost more than building them.
const INLINE_LISTING_ENTRIES: usize = 4_096;

impl Dispatcher {
    pub(super) async fn write_perm(&self, conn: ConnId, req: &RemotingCommand, code: RequestCode) -> Outcome {
        let field = if code == RequestCode::WipeWritePermOfBroker { "wipeTopicCount" } else { "addTopicCount" };
        let count = match req.ext_fields {
            // Java skips header checks without extFields: a null broker name has no topics.
            None => 0,
            Some(_) => {
                let broker = Fields::of(req).required("brokerName")?.to_owned();
                let registry = &self.actors.registry;
                let count = if code == RequestCode::WipeWritePermOfBroker {
                    registry.ask(WipeWritePerm { conn, broker: broker.clone() }).await?
                } else {
                    registry.ask(AddWritePerm { conn, broker: broker.clone() }).await?
                };
                info!(%broker, topics = count, "{}", code.name());
                count
            }
        };
        Ok(RemotingCommand { ext_fields: Some(ExtFields::new().with(field, count.to_string())), ..success() })
    }

    pub(super) async fn delete_topic(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        if req.ext_fields.is_none() {
            // Java deletes the null topic: nothing, and answers SUCCESS.
            return Ok(success());
        }
        let f = Fields::of(req);
        let topic = f.required("topic")?.to_owned();
        let cluster = f.optional("clusterName").filter(|c| !c.is_empty()).map(str::to_owned);
        self.actors.registry.ask(DeleteTopic { conn, topic: topic.clone(), cluster: cluster.clone() }).await?;
        info!(?topic, cluster = ?cluster, "topic deleted");
        Ok(success())
    }

    pub(super) async fn all_topics(&self, conn: ConnId) -> Outcome {
        let body = self.listing(conn, ListingKind::All).await?;
        Ok(success().with_body(body))
    }

    pub(super) async fn topics_by_cluster(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let cluster = Fields::of(req).optional("cluster").map(str::to_owned);
        // The switch is checked before the header, as in Java.
        let body = self.listing(conn, ListingKind::ByCluster(cluster.clone().unwrap_or_default())).await?;
        match cluster {
            Some(_) => Ok(success().with_body(body)),
            // Java skips header checks without extFields: a null cluster has no topics.
            None if req.ext_fields.is_none() => Ok(success().with_body(encode_topic_list([], None))),
            None => Err(HeaderError::Missing("cluster").into()),
        }
    }

    pub(super) async fn system_topics(&self, conn: ConnId) -> Outcome {
        let body = self.actors.registry.ask(GetSystemTopics { conn }).await?;
        Ok(success().with_body(body))
    }

    pub(super) async fn unit_topics(&self, conn: ConnId, code: RequestCode) -> Outcome {
        let filter = match code {
            RequestCode::GetUnitTopicList => UnitFilter::Unit,
            RequestCode::GetHasUnitSubTopicList => UnitFilter::HasUnitSub,
            _ => UnitFilter::HasUnitSubNotUnit,
        };
        let body = self.listing(conn, ListingKind::Unit(filter)).await?;
        Ok(success().with_body(body))
    }

    /// Topic listing `kind`: the registry hands over its inputs (O(groups)); the listing is
    /// built here, once per change of the tables (on the blocking pool, one per core at a
    /// time, when it is large), never on the registry's thread.
    async fn listing(&self, conn: ConnId, kind: ListingKind) -> Result<Bytes, RequestError> {
        let inputs = self.actors.registry.ask(GetListingInputs { conn, kind: kind.clone() }).await?;
        if !inputs.enabled {
            return Err(RequestError::Disabled);
        }
        let generation = inputs.generation;
        if let Some(body) = self.listings.get(&kind, generation) {
            return Ok(body);
        }
        if inputs.entries() <= INLINE_LISTING_ENTRIES {
            let body = inputs.build(&kind);
            self.listings.put(kind, generation, body.clone());
            return Ok(body);
        }
        let _permit = self.large_replies.acquire().await?;
        // Built by another request while this one waited for its permit?
        if let Some(body) = self.listings.get(&kind, generation) {
            return Ok(body);
        }
        let built = kind.clone();
        let body = tokio::task::spawn_blocking(move || inputs.build(&built)).await?;
        self.listings.put(kind, generation, body.clone());
        Ok(body)
    }

    pub(super) async fn member_group(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let f = Fields::of(req);
        let cluster = f.required("clusterName")?.to_owned();
        let broker = f.required("brokerName")?.to_owned();
        let body = self.actors.registry.ask(GetBrokerMemberGroup { conn, cluster, broker }).await?;
        Ok(success().with_body(body))
    }
}
