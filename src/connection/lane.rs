//! A connection's route lane: plain route queries go to its thread's route batcher as they are
//! read, and their answers come back a batch at a time. A found route in JSON is framed from
//! the dispatcher's reply template (no command built, no header encoded), and a batch's
//! requests are counted in the metrics at once; any other answer is replied to the general way.

use std::time::Instant;

use actix::prelude::*;

use super::frames::RouteFrame;
use super::{Connection, Handled};
use crate::dispatch::batch::{LaneAnswer, LaneReply, RouteTicket};
use crate::metrics::requests::RequestTally;
use crate::protocol::{RequestCode, SerializeType};
use crate::registry::messages::GetRouteInfo;

/// The code every lane query has.
const ROUTE: i32 = RequestCode::GetRouteinfoByTopic as i32;

impl Connection {
    /// Sends a plain route query down the route lane.
    pub(super) fn on_route(&mut self, route: RouteFrame) {
        let RouteFrame { read_at: begin, opaque, topic, style } = route;
        // Its topic for the debug line, copied only while that line is enabled.
        let logged = tracing::enabled!(tracing::Level::DEBUG).then(|| topic.to_string());
        self.flow.request_started();
        let depth_met = self.context.registry.depth();
        let query = GetRouteInfo { conn: self.origin.conn, topic, style, zone: None };
        let ticket = RouteTicket { opaque, serialize_type: SerializeType::Json, begin, depth_met, topic: logged };
        self.routes.enqueue(query, ticket, &self.answered);
    }

    /// Replies to one answered lane query, at `now`; found routes are counted in `tally`.
    fn answer_route(
        &mut self,
        ticket: RouteTicket,
        reply: LaneReply,
        now: Instant,
        tally: &mut RequestTally,
        ctx: &mut Context<Self>,
    ) {
        let RouteTicket { opaque, serialize_type, begin, depth_met, topic } = ticket;
        let handled = Handled { code: ROUTE, begin, depth_met, topic, header: serialize_type.name() };
        let dispatcher = self.dispatcher.clone();
        let (Some(body), Some(template)) = (reply.body(), dispatcher.route_found_template(serialize_type)) else {
            // Not found, or not to be framed from the template: the general way.
            let response = self.dispatcher.lane_reply(reply.into_answer(), opaque, serialize_type);
            return self.finish(handled, Some(response), now, ctx);
        };
        self.flow.request_finished();
        let elapsed = now.saturating_duration_since(begin);
        tally.record(Some(0), elapsed.as_nanos() as u64);
        self.log_handled(&handled, Some(0), elapsed);
        self.reply(body.bytes().len(), now, ctx, |outbox| Ok(outbox.send_shared(template, opaque, body)));
    }
}

impl StreamHandler<Vec<LaneAnswer>> for Connection {
    /// Replies to the route-lane queries the batcher answered (one batch at a time).
    fn handle(&mut self, mut answers: Vec<LaneAnswer>, ctx: &mut Context<Self>) {
        let now = Instant::now();
        let mut tally = self.context.metrics.tally(ROUTE);
        for (ticket, answer) in answers.drain(..) {
            self.answer_route(ticket, answer, now, &mut tally, ctx);
        }
        self.answered.recycle(answers);
        self.context.metrics.add_tally(&tally);
        self.close_if_drained();
    }

    /// The answers never end while the connection lives: nothing to do.
    fn finished(&mut self, _: &mut Context<Self>) {}
}
