//! A connection's route lane: its route queries go to its thread's route batcher as they are
//! admitted, and their answers come back a batch at a time, each turned into its reply by the
//! dispatcher and finished as every request is; a batch's requests are counted in the metrics
//! at once.

use std::time::Instant;

use actix::prelude::*;

use super::Connection;
use crate::dispatch::batch::Answer;
use crate::dispatch::route::{Outstanding, RouteFrame, ROUTE};
use crate::registry::route_answer::RouteQuery;

impl Connection {
    /// Sends a route query the codec read off its frame down the route lane.
    pub(super) fn on_route(&mut self, frame: RouteFrame) {
        self.flow.request_started();
        let depth_met = self.context.registry.depth();
        let (flight, query) = self.dispatcher.route_frame(self.origin.conn, frame, depth_met);
        self.route(query, flight);
    }

    /// Sends a route query down the route lane, its topic noted for the debug line while that
    /// line is enabled.
    pub(super) fn route(&mut self, query: RouteQuery, mut flight: Outstanding) {
        if tracing::enabled!(tracing::Level::DEBUG) {
            flight.topic = query.topic.as_deref().map(str::to_owned);
        }
        self.routes.enqueue(query, flight, &self.answered);
    }
}

impl StreamHandler<Vec<Answer>> for Connection {
    /// Replies to the route queries the batcher answered (one batch at a time).
    fn handle(&mut self, mut answers: Vec<Answer>, ctx: &mut Context<Self>) {
        let now = Instant::now();
        let mut tally = self.context.metrics.tally(ROUTE);
        for (flight, answer) in answers.drain(..) {
            let reply = self.dispatcher.route_reply(&flight, answer);
            self.finish(flight, reply, now, Some(&mut tally), ctx);
        }
        self.answered.recycle(answers);
        self.context.metrics.add_tally(&tally);
    }

    /// The answers never end while the connection lives: nothing to do.
    fn finished(&mut self, _: &mut Context<Self>) {}
}
