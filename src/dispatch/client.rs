//! What clients ask: GET_ROUTEINFO_BY_TOPIC (with the zone filter) and GET_BROKER_CLUSTER_INFO.

use std::rc::Rc;

use super::batch::RouteBatcher;
use super::{success, Dispatcher, Outcome, RequestError};
use crate::origin::ConnId;
use crate::protocol::header::Fields;
use crate::protocol::json::JsonStyle;
use crate::protocol::reply::template::ReplyTemplate;
use crate::protocol::{RemotingCommand, RequestCode, ResponseCode, SerializeType};
use crate::registry::messages::*;
use actix::MailboxError;

/// The remark of TOPIC_NOT_EXIST, Java's wording.
fn topic_not_exist_remark(topic: &str) -> String {
    format!(
        "No topic route info in name server for the topic: {topic}\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
    )
}

/// The query of a route request for `topic`: its JSON style and zone filter.
fn route_query(conn: ConnId, req: &RemotingCommand, topic: String) -> GetRouteInfo {
    let f = Fields::of(req);
    let style = JsonStyle::for_route(req.version, f.optional("acceptStandardJsonOnly"));
    let zone_mode = f.optional_bool("__ZONE_MODE") == Some(true);
    let zone = f.optional("__ZONE_NAME").filter(|z| zone_mode && !z.trim().is_empty()).map(str::to_owned);
    GetRouteInfo { conn, topic: topic.into(), style, zone }
}

/// The reply to a route query from what the registry found.
fn route_outcome(answer: RouteAnswer) -> Outcome {
    match answer {
        RouteAnswer::Found(body) => Ok(success().with_body(body)),
        RouteAnswer::NotReady => Err(RequestError::NotReady),
        RouteAnswer::NotFound(topic) => Ok(topic_not_exist(&topic)),
    }
}

fn topic_not_exist(topic: &str) -> RemotingCommand {
    RemotingCommand::response(ResponseCode::TopicNotExist, Some(topic_not_exist_remark(topic)))
}

impl Dispatcher {
    pub(super) async fn route_info(&self, conn: ConnId, req: &RemotingCommand, routes: &Rc<RouteBatcher>) -> Outcome {
        // Java skips header validation when there are no extFields at all: the topic is then
        // null and the lookup simply finds nothing.
        let topic = match req.ext_fields {
            Some(_) => Some(Fields::of(req).required("topic")?),
            None => None,
        };
        let query = route_query(conn, req, topic.unwrap_or_default().to_owned());
        match routes.clone().ask(query).await? {
            RouteAnswer::NotFound(_) => Ok(topic_not_exist(topic.unwrap_or("null"))),
            answer => route_outcome(answer),
        }
    }

    /// Whether plain route queries may take the route lane: not where access control must
    /// check each request.
    pub fn route_lane_open(&self) -> bool {
        self.acl.is_none()
    }

    /// The query of `req` when it may take the route lane: a GET_ROUTEINFO_BY_TOPIC to answer,
    /// with its topic, on a server without access control. The topic is moved out of `req`.
    /// `None` sends it the general way ([`Dispatcher::dispatch`]).
    pub fn lane_query(&self, conn: ConnId, req: &mut RemotingCommand) -> Option<GetRouteInfo> {
        if req.code != RequestCode::GetRouteinfoByTopic as i32 || req.is_oneway() || self.acl.is_some() {
            return None;
        }
        let topic = req.ext_fields.as_mut()?.take("topic")?;
        Some(route_query(conn, req, topic))
    }

    /// The reply to a lane query: what the registry answered (or why it could not), stamped
    /// as [`Dispatcher::dispatch`] stamps every reply.
    pub fn lane_reply(
        &self,
        answer: Result<RouteAnswer, MailboxError>,
        opaque: i32,
        header: SerializeType,
    ) -> RemotingCommand {
        let outcome = answer.map_err(RequestError::from).and_then(route_outcome);
        self.respond(outcome, RequestCode::GetRouteinfoByTopic as i32, opaque, header)
    }

    /// The template of the reply to a lane query (its header read as `header`) that found its
    /// route; `None` where that reply is not JSON.
    pub fn route_found_template(&self, header: SerializeType) -> Option<&ReplyTemplate> {
        let json = self.options.response_serialization.unwrap_or(header) == SerializeType::Json;
        self.route_found.as_deref().filter(|_| json)
    }

    pub(super) async fn cluster_info(&self, conn: ConnId) -> Outcome {
        let body = self.actors.registry.ask(GetClusterInfo { conn }).await?;
        Ok(success().with_body(body))
    }
}
