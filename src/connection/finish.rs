//! The end of every request on a connection, route query or not: it is counted (alone, or in
//! its batch's tally), logged when slow or while debug lines are on, and its reply is queued
//! for the writer within the reply budget. Its lines keep the connection's target
//! (`namesrv::connection`), which operators filter on.

use std::time::{Duration, Instant};

use actix::prelude::*;
use tracing::{debug, warn};

use super::writer::Outbox;
use super::Connection;
use crate::metrics::requests::RequestTally;
use crate::protocol::CodecError;
use crate::service::{Outstanding, Reply, Service, Session, REQUEST_LOG_TARGET};

impl<S: Service> Connection<S> {
    /// Accounts for a request handled at `now` (counted in `tally` when given, else alone;
    /// slow-request and debug lines) and queues its reply, if it has one.
    pub(super) fn finish(
        &mut self,
        flight: Outstanding,
        reply: Reply,
        now: Instant,
        tally: Option<&mut RequestTally>,
        ctx: &mut Context<Self>,
    ) {
        self.flow.request_finished();
        let elapsed = now.saturating_duration_since(flight.begin);
        let response_code = reply.code();
        match tally {
            Some(tally) => tally.record(response_code, elapsed.as_nanos() as u64),
            None => {
                let listener = <S::Session as Session>::LISTENER;
                self.context.metrics.request_on(listener, flight.code, response_code, elapsed.as_nanos() as u64)
            }
        }
        self.log_handled(&flight, response_code, elapsed);
        if response_code == Some(0) && <S::Session as Session>::claims_reserve(flight.code) {
            // It carries a broker: the reserve of every budget is open to it from now on.
            self.share.promote();
            self.on_reserve = false;
        }
        match reply {
            Reply::Nothing => {}
            Reply::Command(response) => {
                let body_len = response.body.as_ref().map_or(0, |b| b.len());
                self.reply(body_len, now, ctx, |outbox| outbox.send(&response));
            }
            Reply::Framed(template, body) => {
                let len = body.bytes().len();
                self.reply(len, now, ctx, |outbox| Ok(outbox.send_shared(&template, flight.opaque, &body)));
            }
        }
        self.close_if_drained();
    }

    /// The slow-request line of a request handled in `elapsed`, and its debug line while
    /// debug lines are on (at most `DEBUG_LINES_PER_SECOND` a second, see [`crate::ratelog`]).
    fn log_handled(&self, flight: &Outstanding, response_code: Option<i32>, elapsed: Duration) {
        let slow = elapsed >= self.context.slow_request;
        let debug = tracing::enabled!(tracing::Level::DEBUG);
        if !slow && !debug {
            return;
        }
        let _entered = self.span.clone().entered();
        let Outstanding { code, depth_met, ref topic, header, .. } = *flight;
        let header = header.name();
        let msg = <S::Session as Session>::code_name(code);
        if slow {
            let elapsed_ms = elapsed.as_millis() as u64;
            warn!(target: REQUEST_LOG_TARGET, msg, code, elapsed_ms, mailbox_depth = depth_met, "slow request");
        }
        if let Some(suppressed) = debug.then(|| crate::ratelog::request_lines().admit()).flatten() {
            let (topic, queued, elapsed_us) = (topic.as_deref(), self.flow.in_flight(), elapsed.as_micros() as u64);
            debug!(target: REQUEST_LOG_TARGET, msg, code, topic, response_code, header, queued, elapsed_us, suppressed, "handled");
        }
    }

    /// Queues a reply of `body_len` body bytes, finished at `now`, for the writer (`send`
    /// puts it on the outbox).
    fn reply(
        &mut self,
        body_len: usize,
        now: Instant,
        ctx: &mut Context<Self>,
        send: impl FnOnce(&Outbox) -> Result<usize, CodecError>,
    ) {
        let Some(outbox) = &self.outbox else {
            return;
        };
        self.last_activity = now;
        if let Err(error) = self.flow.admit_reply(body_len) {
            // A peer that pipelines large requests and does not read their replies.
            let _entered = self.span.clone().entered();
            warn!(target: REQUEST_LOG_TARGET, %error, "closing connection: reply budget exhausted");
            ctx.stop();
            return;
        }
        if let Err(error) = send(outbox) {
            let _entered = self.span.clone().entered();
            warn!(target: REQUEST_LOG_TARGET, %error, "closing connection: reply cannot be encoded");
            ctx.stop();
        }
    }
}
