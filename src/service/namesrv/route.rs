//! The NameServer's entrance for every request, and the route lane: a request is admitted first
//! (the admission gate is synchronous), then a GET_ROUTEINFO_BY_TOPIC becomes a [`RouteQuery`]
//! for its thread's batcher and anything else goes to [`Dispatcher::dispatch`]. A route query's
//! answer becomes its reply here too: a found route in JSON is framed from the reply template
//! (no command built, no header encoded), anything else is stamped as every reply is.

use std::rc::Rc;
use std::time::Instant;

use actix::MailboxError;

use super::client::{route_query, topic_not_exist};
use super::policy::guard;
use super::{success, Dispatcher, RequestError};
use crate::acl::Caller;
use crate::origin::{ConnId, Origin};
use crate::protocol::header::HeaderError;
use crate::protocol::reply::template::ReplyTemplate;
use crate::protocol::{RemotingCommand, RequestCode, SerializeType};
use crate::registry::route_answer::{RouteAnswer, RouteQuery, SharedBody};
use crate::service::{Outstanding, Reply, RouteFrame};

/// The code of every route query.
pub const ROUTE: i32 = RequestCode::GetRouteinfoByTopic as i32;

/// A request whose caller the gate has checked, and that is no route query: only
/// [`Dispatcher::admit`] makes one.
pub struct Checked {
    pub(super) request: RemotingCommand,
    pub(super) caller: Caller,
}

/// Where an admitted request goes.
pub enum Admission {
    /// Down the route lane.
    Route(RouteQuery),
    /// To [`Dispatcher::dispatch`].
    Dispatch(Checked),
    /// Nowhere: answered at once (refused by the gate, or a route query without its topic
    /// field).
    Answered(Reply),
}

impl Dispatcher {
    /// Admits `request` from `origin`, read at `begin` with the registry `depth_met` deep: the
    /// gate first, then where it goes. Returns what to keep of it meanwhile.
    pub fn admit(
        &self,
        origin: Origin,
        mut request: RemotingCommand,
        begin: Instant,
        depth_met: usize,
    ) -> (Outstanding, Admission) {
        let flight = Outstanding::of(&request, begin, depth_met);
        let caller = match self.gate.admit(&origin, &request, &guard(request.code)) {
            Ok(caller) => caller,
            Err(denied) => return self.answered(flight, Err(denied.into())),
        };
        if request.code != ROUTE {
            return (flight, Admission::Dispatch(Checked { request, caller }));
        }
        // Java skips header validation when there are no extFields at all: the topic is then
        // null and the lookup simply finds nothing.
        let topic = match request.ext_fields.as_mut() {
            None => None,
            Some(fields) => match fields.take("topic") {
                Some(topic) => Some(topic),
                None => return self.answered(flight, Err(HeaderError::Missing("topic").into())),
            },
        };
        let query = route_query(origin.conn, &request, topic);
        (flight, Admission::Route(query))
    }

    /// The query and in-flight record of a route query the codec read off its frame, with the
    /// registry `depth_met` deep (such a query is never refused by the gate: the lane is open
    /// to frames only where route queries are unchecked).
    pub fn route_frame(&self, conn: ConnId, frame: RouteFrame, depth_met: usize) -> (Outstanding, RouteQuery) {
        let RouteFrame { read_at, opaque, topic, style } = frame;
        let flight = Outstanding {
            code: ROUTE,
            opaque,
            header: SerializeType::Json,
            oneway: false,
            begin: read_at,
            depth_met,
            topic: None,
        };
        (flight, RouteQuery { conn, topic: Some(topic), style, zone: None })
    }

    /// Whether the codec may read plain route queries straight off their frames: where the
    /// gate does not check them (it needs the whole request to).
    pub fn route_frames_open(&self) -> bool {
        !self.gate.checks(&guard(ROUTE))
    }

    /// The reply to the route query `flight` from what the registry answered (or why it could
    /// not); a found route is framed from `template` where there is one and the reply is JSON.
    pub fn route_reply(
        &self,
        flight: &Outstanding,
        answer: Result<RouteAnswer<SharedBody>, MailboxError>,
        template: Option<&Rc<ReplyTemplate>>,
    ) -> Reply {
        if flight.oneway {
            return Reply::Nothing;
        }
        let outcome = match answer {
            Ok(RouteAnswer::Found(body)) => match template.filter(|_| self.replies_json(flight.header)) {
                Some(template) => return Reply::Framed(template.clone(), body),
                None => Ok(success().with_body(body.to_bytes())),
            },
            Ok(RouteAnswer::NotFound(topic)) => Ok(topic_not_exist(topic.as_deref().unwrap_or("null"))),
            Ok(RouteAnswer::NotReady) => Err(RequestError::NotReady),
            Err(lost) => Err(lost.into()),
        };
        Reply::Command(self.respond(outcome, flight.code, flight.opaque, flight.header))
    }

    /// Whether the reply to a request whose header was read as `header` is JSON.
    fn replies_json(&self, header: SerializeType) -> bool {
        self.options.stamp.header(header) == SerializeType::Json
    }

    /// `flight` answered at once with `outcome`.
    fn answered(
        &self,
        flight: Outstanding,
        outcome: Result<RemotingCommand, RequestError>,
    ) -> (Outstanding, Admission) {
        let reply = match flight.oneway {
            true => Reply::Nothing,
            false => Reply::Command(self.respond(outcome, flight.code, flight.opaque, flight.header)),
        };
        (flight, Admission::Answered(reply))
    }
}
