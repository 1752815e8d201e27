//! The one entrance of every request, and the route lane: a request is admitted first
//! (access control is synchronous), then a GET_ROUTEINFO_BY_TOPIC becomes a [`RouteQuery`] for
//! its thread's batcher and anything else goes to [`Dispatcher::dispatch`]. A route query's
//! answer becomes its reply here too: a found route in JSON is framed from the reply template
//! (no command built, no header encoded), anything else is stamped as every reply is. What a
//! connection keeps of a request meanwhile is one [`Outstanding`], route query or not.

use std::time::Instant;

use actix::MailboxError;
use compact_str::CompactString;

use super::client::{route_query, topic_not_exist};
use super::{success, Dispatcher, RequestError};
use crate::acl::Caller;
use crate::origin::{ConnId, Origin};
use crate::protocol::header::HeaderError;
use crate::protocol::json::JsonStyle;
use crate::protocol::reply::template::ReplyTemplate;
use crate::protocol::{RemotingCommand, RequestCode, SerializeType};
use crate::registry::route_answer::{RouteAnswer, RouteQuery, SharedBody};

/// The code of every route query.
pub const ROUTE: i32 = RequestCode::GetRouteinfoByTopic as i32;

/// A plain GET_ROUTEINFO_BY_TOPIC (two-way, no ext field but the topic and
/// `acceptStandardJsonOnly`) read straight off its frame by the connection's codec: all the
/// route lane needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteFrame {
    /// When its frame was read.
    pub read_at: Instant,
    /// The request's opaque.
    pub opaque: i32,
    /// The topic asked for.
    pub topic: CompactString,
    /// The JSON style the client reads route bodies in.
    pub style: JsonStyle,
}

/// What a connection keeps of a request while it is handled, to reply and account for it.
#[derive(Debug)]
pub struct Outstanding {
    /// The request code.
    pub code: i32,
    /// The request's opaque.
    pub opaque: i32,
    /// Its header serialization (replies use it unless configured otherwise).
    pub header: SerializeType,
    /// A oneway request: never answered.
    pub oneway: bool,
    /// When its frame was read.
    pub begin: Instant,
    /// The registry's mailbox depth then (for the slow-request line).
    pub depth_met: usize,
    /// A route query's topic, kept by its connection only while its debug lines are on.
    pub topic: Option<String>,
}

/// A request whose caller access control has checked, and that is no route query: only
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
    /// Nowhere: answered at once (refused by access control, or a route query without its
    /// topic field).
    Answered(Reply),
}

/// What a connection writes for a handled request.
#[derive(Debug)]
pub enum Reply {
    /// Nothing: a oneway request.
    Nothing,
    /// A found route: framed from [`Dispatcher::route_found_template`] with this body where
    /// the reply is JSON, else [`Dispatcher::found_response`].
    Found(SharedBody),
    /// A whole response.
    Command(RemotingCommand),
}

impl Reply {
    /// The response code it answers with (`None`: oneway).
    pub fn code(&self) -> Option<i32> {
        match self {
            Reply::Nothing => None,
            Reply::Found(_) => Some(0),
            Reply::Command(response) => Some(response.code),
        }
    }
}

impl Dispatcher {
    /// Admits `request`, read at `begin` with the registry `depth_met` deep: access control
    /// first, then where it goes. Returns what to keep of it meanwhile.
    pub fn admit(
        &self,
        origin: Origin,
        mut request: RemotingCommand,
        begin: Instant,
        depth_met: usize,
    ) -> (Outstanding, Admission) {
        let flight = Outstanding {
            code: request.code,
            opaque: request.opaque,
            header: request.serialize_type,
            oneway: request.is_oneway(),
            begin,
            depth_met,
            topic: None,
        };
        let caller = match &self.acl {
            Some(acl) => match match self.controller {
                Some(_) => acl.admit_controller(&origin, &request),
                None => acl.admit(&origin, &request),
            } {
                Ok(caller) => caller,
                Err(denied) => return self.answered(flight, Err(denied.into())),
            },
            None => Caller::Unchecked,
        };
        if request.code != ROUTE || self.controller.is_some() {
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
    /// registry `depth_met` deep (such a query is never refused by access control: the lane is
    /// open to frames only where route queries are unprotected).
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

    /// Whether the codec may read plain route queries straight off their frames: where access
    /// control does not check them (it needs the whole request to).
    pub fn route_frames_open(&self) -> bool {
        self.controller.is_none() && self.acl.as_ref().is_none_or(|acl| !acl.protects(ROUTE))
    }

    /// The reply to the route query `flight` from what the registry answered (or why it could
    /// not).
    pub fn route_reply(&self, flight: &Outstanding, answer: Result<RouteAnswer<SharedBody>, MailboxError>) -> Reply {
        if flight.oneway {
            return Reply::Nothing;
        }
        let outcome = match answer {
            Ok(RouteAnswer::Found(body)) => return Reply::Found(body),
            Ok(RouteAnswer::NotFound(topic)) => Ok(topic_not_exist(topic.as_deref().unwrap_or("null"))),
            Ok(RouteAnswer::NotReady) => Err(RequestError::NotReady),
            Err(lost) => Err(lost.into()),
        };
        Reply::Command(self.respond(outcome, flight.code, flight.opaque, flight.header))
    }

    /// The whole response to the route query `flight` that found `body`, where no template
    /// frames it ([`Dispatcher::route_found_template`]).
    pub fn found_response(&self, flight: &Outstanding, body: &SharedBody) -> RemotingCommand {
        self.respond(Ok(success().with_body(body.to_bytes())), flight.code, flight.opaque, flight.header)
    }

    /// The template of the reply to a route query (its header read as `header`) that found its
    /// route; `None` where that reply is not JSON.
    pub fn route_found_template(&self, header: SerializeType) -> Option<&ReplyTemplate> {
        let json = self.options.response_serialization.unwrap_or(header) == SerializeType::Json;
        self.route_found.as_deref().filter(|_| json)
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
