//! The services behind the listeners, one per port, composed the same way: a connection frames
//! its requests and hands each to its listener's [`Session`], which admits it through the one
//! admission layer (`crate::admission`) and handles it. The NameServer service (`namesrv`) and
//! the controller service (`controller`) each own their request codes: a connection knows none,
//! only what its session says of them (their names in logs, which one claims the broker
//! reserve). What a connection keeps of a request while it is handled ([`Outstanding`]) and what
//! it writes back ([`Reply`]) are the same for every service.

pub mod controller;
mod finished;
pub mod namesrv;

use std::future::Future;
use std::rc::Rc;
use std::time::Instant;

use actix::Recipient;
use compact_str::CompactString;

pub use finished::{Done, Finished, FinishedStream};

use crate::metrics::Listener;
use crate::origin::Origin;
use crate::protocol::command::FLAG_RESPONSE;
use crate::protocol::json::JsonStyle;
use crate::protocol::reply::template::ReplyTemplate;
use crate::protocol::{LanguageCode, RemotingCommand, SerializeType};
use crate::registry::messages::CloseConnection;
use crate::registry::route_answer::SharedBody;
use crate::settings::{ResponseSerializeType, Settings};

/// The target of the per-request log lines (the connection's: `namesrv::connection`, which
/// operators filter on, e.g. `log_filter = "info,namesrv::connection=debug"`).
pub const REQUEST_LOG_TARGET: &str = "namesrv::connection";

/// A plain GET_ROUTEINFO_BY_TOPIC (two-way, no ext field but the topic and
/// `acceptStandardJsonOnly`) read straight off its frame by the connection's codec, where the
/// session allows it ([`Session::reads_route_frames`]): all the route lane needs of it.
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

/// How every reply is stamped, whichever service made it: the request's opaque, the response
/// flag, Java's language, this server's MQVersion, and the configured header serialization
/// (else the request's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The serialization of response headers; `None` answers in the request's own.
    pub serialization: Option<SerializeType>,
    /// The MQVersion ordinal stamped on responses.
    pub version: i32,
}

impl Stamp {
    /// The stamp `settings` configure.
    pub fn of(settings: &Settings) -> Self {
        let serialization = match settings.listen.response_serialize_type {
            ResponseSerializeType::Request => None,
            ResponseSerializeType::Json => Some(SerializeType::Json),
            ResponseSerializeType::RocketMq => Some(SerializeType::RocketMq),
        };
        Stamp { serialization, version: settings.listen.response_version }
    }

    /// Stamps `response` as the reply to the request `opaque`, whose header was read as `header`.
    pub fn stamp(&self, mut response: RemotingCommand, opaque: i32, header: SerializeType) -> RemotingCommand {
        response.opaque = opaque;
        response.flag |= FLAG_RESPONSE;
        response.language = Some(LanguageCode::Java);
        response.version = self.version;
        response.serialize_type = self.header(header);
        response
    }

    /// The serialization of the reply to a request whose header was read as `header`.
    pub fn header(&self, header: SerializeType) -> SerializeType {
        self.serialization.unwrap_or(header)
    }
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
    /// The mailbox depth of the actor it goes to, then (for the slow-request line).
    pub depth_met: usize,
    /// A route query's topic, kept by its connection only while its debug lines are on.
    pub topic: Option<String>,
}

impl Outstanding {
    /// What is kept of `request`, read at `begin` with the service's actor `depth_met` deep.
    pub fn of(request: &RemotingCommand, begin: Instant, depth_met: usize) -> Self {
        Outstanding {
            code: request.code,
            opaque: request.opaque,
            header: request.serialize_type,
            oneway: request.is_oneway(),
            begin,
            depth_met,
            topic: None,
        }
    }
}

/// What a connection writes for a handled request.
#[derive(Debug)]
pub enum Reply {
    /// Nothing: a oneway request.
    Nothing,
    /// A reply framed from a template, with this opaque and body (a found route in JSON).
    Framed(Rc<ReplyTemplate>, SharedBody),
    /// A whole response.
    Command(RemotingCommand),
}

impl Reply {
    /// The response code it answers with (`None`: oneway).
    pub fn code(&self) -> Option<i32> {
        match self {
            Reply::Nothing => None,
            Reply::Framed(..) => Some(0),
            Reply::Command(response) => Some(response.code),
        }
    }
}

/// Where a request goes once its session has admitted it.
pub enum Step<A> {
    /// Down a lane of the service: it finishes through the connection's [`Finished`] queue.
    Queued,
    /// Nowhere: answered at once (refused, or malformed).
    Answered(Outstanding, Reply),
    /// To [`Session::handle`]; `quiet`: it logs nothing while it runs, so the connection need
    /// not enter its span (which costs more than a cheap request).
    Handle { outstanding: Outstanding, admitted: A, quiet: bool },
}

/// What a new connection's session gets.
pub struct Opening {
    /// Who it is.
    pub origin: Origin,
    /// Closes it (a registry closes the connection of a broker it expired).
    pub closer: Recipient<CloseConnection>,
    /// Where requests finished elsewhere go.
    pub finished: Rc<Finished>,
}

/// A service behind a listener: made once, cloned onto each I/O thread.
pub trait Service: Clone + Send + 'static {
    /// What the connections of one I/O thread share there (made on that thread).
    type Thread: 'static;
    /// One connection's side of the service.
    type Session: Session;

    /// The part of the service an I/O thread keeps, made on that thread.
    fn thread(&self) -> Self::Thread;

    /// The session of a connection opened on the thread that keeps `thread`.
    fn open(&self, thread: &Rc<Self::Thread>, opening: Opening) -> Self::Session;
}

/// One connection's side of the service behind its listener.
pub trait Session: Unpin + 'static {
    /// A request the session admitted, for [`Session::handle`].
    type Admitted: 'static;

    /// The listener its requests are counted under.
    const LISTENER: Listener;

    /// The name of request `code` in log lines (its Java constant name).
    fn code_name(code: i32) -> &'static str;

    /// Whether a request of `code` answered SUCCESS makes its connection a broker's: the
    /// reserve of every budget is open to it from then on, and a connection that took a
    /// reserved slot must send one first.
    fn claims_reserve(code: i32) -> bool;

    /// Whether the codec may read plain route queries straight off their frames (no service
    /// but the NameServer's has a route lane).
    fn reads_route_frames(&self) -> bool {
        false
    }

    /// A route query the codec read off its frame: it finishes through the connection's
    /// [`Finished`] queue. Only a session that [`Self::reads_route_frames`] is ever given one.
    fn route_frame(&mut self, frame: RouteFrame) {
        let _ = frame;
    }

    /// Admits `request`, read at `begin`: where it goes.
    fn admit(&mut self, request: RemotingCommand, begin: Instant) -> Step<Self::Admitted>;

    /// Handles an admitted request: what to write back.
    fn handle(&self, admitted: Self::Admitted) -> impl Future<Output = Reply> + 'static;

    /// The connection closed.
    fn closed(&mut self);
}
