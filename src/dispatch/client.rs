//! What clients ask: GET_ROUTEINFO_BY_TOPIC (with the zone filter) and GET_BROKER_CLUSTER_INFO.

use std::rc::Rc;

use super::batch::RouteBatcher;
use super::{success, Dispatcher, Outcome, RequestError};
use crate::origin::ConnId;
use crate::protocol::code::version;
use crate::protocol::header::Fields;
use crate::protocol::json::JsonStyle;
use crate::protocol::{RemotingCommand, ResponseCode};
use crate::registry::messages::*;

/// The remark of TOPIC_NOT_EXIST, Java's wording.
fn topic_not_exist_remark(topic: &str) -> String {
    format!(
        "No topic route info in name server for the topic: {topic}\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
    )
}

impl Dispatcher {
    pub(super) async fn route_info(&self, conn: ConnId, req: &RemotingCommand, routes: &Rc<RouteBatcher>) -> Outcome {
        let f = Fields::of(req);
        // Java skips header validation when there are no extFields at all: the topic is then
        // null and the lookup simply finds nothing.
        let topic = match req.ext_fields {
            Some(_) => Some(f.required("topic")?),
            None => None,
        };
        let standard = req.version >= version::V4_9_4 || f.optional_bool("acceptStandardJsonOnly") == Some(true);
        let style = if standard { JsonStyle::Standard } else { JsonStyle::Fastjson };
        let zone_mode = f.optional_bool("__ZONE_MODE") == Some(true);
        let zone = f.optional("__ZONE_NAME").filter(|z| zone_mode && !z.trim().is_empty()).map(str::to_owned);
        let query = GetRouteInfo { conn, topic: topic.unwrap_or_default().to_owned(), style, zone };
        match routes.clone().ask(query).await? {
            RouteAnswer::Found(body) => Ok(success().with_body(body)),
            RouteAnswer::NotReady => Err(RequestError::NotReady),
            RouteAnswer::NotFound => Ok(RemotingCommand::response(
                ResponseCode::TopicNotExist,
                Some(topic_not_exist_remark(topic.unwrap_or("null"))),
            )),
        }
    }

    pub(super) async fn cluster_info(&self, conn: ConnId) -> Outcome {
        let body = self.actors.registry.ask(GetClusterInfo { conn }).await?;
        Ok(success().with_body(body))
    }
}
