//! What clients ask: GET_ROUTEINFO_BY_TOPIC (the query and its not-found reply; the route
//! lane in `route` carries it) and GET_BROKER_CLUSTER_INFO.

use super::{success, Dispatcher, Outcome};
use crate::origin::ConnId;
use crate::protocol::header::Fields;
use crate::protocol::json::JsonStyle;
use crate::protocol::{RemotingCommand, ResponseCode};
use crate::registry::messages::GetClusterInfo;
use crate::registry::route_answer::RouteQuery;

/// The remark of TOPIC_NOT_EXIST, Java's wording.
fn topic_not_exist_remark(topic: &str) -> String {
    format!(
        "No topic route info in name server for the topic: {topic}\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
    )
}

/// The query of a route request for `topic` (`None`: the request has no extFields): its JSON
/// style and zone filter.
pub(super) fn route_query(conn: ConnId, req: &RemotingCommand, topic: Option<String>) -> RouteQuery {
    let f = Fields::of(req);
    let style = JsonStyle::for_route(req.version, f.optional("acceptStandardJsonOnly"));
    let zone_mode = f.optional_bool("__ZONE_MODE") == Some(true);
    let zone = f.optional("__ZONE_NAME").filter(|z| zone_mode && !z.trim().is_empty()).map(str::to_owned);
    RouteQuery { conn, topic: topic.map(Into::into), style, zone }
}

/// TOPIC_NOT_EXIST for `topic`.
pub(super) fn topic_not_exist(topic: &str) -> RemotingCommand {
    RemotingCommand::response(ResponseCode::TopicNotExist, Some(topic_not_exist_remark(topic)))
}

impl Dispatcher {
    pub(super) async fn cluster_info(&self, conn: ConnId) -> Outcome {
        let body = self.actors.registry.ask(GetClusterInfo { conn }).await?;
        Ok(success().with_body(body))
    }
}
