//! Requests finished elsewhere (the NameServer's route lane answers a batch at a time): their
//! replies come back through the connection's finished queue, and each is finished as every
//! request is; a batch's requests are counted in the metrics at once.

use std::time::Instant;

use actix::prelude::*;

use super::Connection;
use crate::service::{Done, Service, Session};

impl<S: Service> StreamHandler<Vec<Done>> for Connection<S> {
    /// Replies to the requests finished elsewhere (one batch at a time).
    fn handle(&mut self, mut batch: Vec<Done>, ctx: &mut Context<Self>) {
        let Some(code) = batch.first().map(|(flight, _)| flight.code) else { return };
        let now = Instant::now();
        let mut tally = self.context.metrics.tally(<S::Session as Session>::LISTENER, code);
        for (flight, reply) in batch.drain(..) {
            self.finish(flight, reply, now, Some(&mut tally), ctx);
        }
        self.finished.recycle(batch);
        self.context.metrics.add_tally(&tally);
    }

    /// The queue never ends while the connection lives: nothing to do.
    fn finished(&mut self, _: &mut Context<Self>) {}
}
