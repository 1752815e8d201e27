//! The NameServer service as its connections see it: made once ([`NamesrvService`]), kept by
//! each I/O thread ([`NamesrvThread`]: one dispatcher its connections share, and the thread's
//! route batcher), opened per connection ([`NamesrvSession`]). A connection that registers a
//! broker is attached to the registry first, so the registry can close it when that broker
//! expires, and its close removes that broker at once.

use std::future::Future;
use std::rc::Rc;
use std::time::Instant;

use actix::Recipient;

use super::batch::{Replier, RouteBatcher};
use super::route::{Admission, Checked};
use super::Dispatcher;
use crate::metrics::Listener;
use crate::origin::Origin;
use crate::protocol::{RemotingCommand, RequestCode};
use crate::registry::messages::{AttachConnection, CloseConnection, ConnectionClosed};
use crate::registry::route_answer::RouteQuery;
use crate::registry::RegistryHandle;
use crate::service::{Finished, Opening, Outstanding, Reply, RouteFrame, Service, Session, Step, REQUEST_LOG_TARGET};

/// The NameServer service: the dispatcher and the registry its connections tell of brokers.
#[derive(Clone)]
pub struct NamesrvService {
    dispatcher: Dispatcher,
    registry: RegistryHandle,
}

impl NamesrvService {
    /// The service of `dispatcher`, whose connections tell `registry` which brokers they carry.
    pub fn new(dispatcher: Dispatcher, registry: RegistryHandle) -> Self {
        NamesrvService { dispatcher, registry }
    }
}

/// What one I/O thread keeps of the NameServer service.
pub struct NamesrvThread {
    /// The dispatcher every connection of the thread shares.
    dispatcher: Rc<Dispatcher>,
    /// The thread's route batcher.
    routes: Rc<RouteBatcher>,
    /// Route queries may be read straight off their frames (the gate does not check them).
    route_frames: bool,
    /// Told of the brokers connections carry.
    registry: RegistryHandle,
}

impl Service for NamesrvService {
    type Thread = NamesrvThread;
    type Session = NamesrvSession;

    fn thread(&self) -> NamesrvThread {
        let dispatcher = Rc::new(self.dispatcher.clone());
        let template = dispatcher.route_found_template().map(Rc::new);
        let replying = dispatcher.clone();
        let replier: Replier = Rc::new(move |flight, answer| replying.route_reply(flight, answer, template.as_ref()));
        NamesrvThread {
            routes: RouteBatcher::new(self.registry.clone(), replier),
            route_frames: dispatcher.route_frames_open(),
            dispatcher,
            registry: self.registry.clone(),
        }
    }

    fn open(&self, thread: &Rc<NamesrvThread>, opening: Opening) -> NamesrvSession {
        let Opening { origin, closer, finished } = opening;
        NamesrvSession { thread: thread.clone(), origin, closer, finished, carried_registration: false }
    }
}

/// One connection's side of the NameServer service.
pub struct NamesrvSession {
    thread: Rc<NamesrvThread>,
    origin: Origin,
    /// Given to the registry with the first registration.
    closer: Recipient<CloseConnection>,
    /// Where route replies go.
    finished: Rc<Finished>,
    /// It carried a REGISTER_BROKER: its close removes that broker.
    carried_registration: bool,
}

impl NamesrvSession {
    /// Sends a route query down the route lane, its topic noted for the debug line while that
    /// line is enabled.
    fn route(&self, query: RouteQuery, mut flight: Outstanding) {
        if tracing::enabled!(target: REQUEST_LOG_TARGET, tracing::Level::DEBUG) {
            flight.topic = query.topic.as_deref().map(str::to_owned);
        }
        self.thread.routes.enqueue(query, flight, &self.finished);
    }
}

impl Session for NamesrvSession {
    type Admitted = Checked;

    const LISTENER: Listener = Listener::Namesrv;

    fn code_name(code: i32) -> &'static str {
        RequestCode::from_i32(code).map_or("UNKNOWN", RequestCode::name)
    }

    fn claims_reserve(code: i32) -> bool {
        code == RequestCode::RegisterBroker as i32
    }

    fn reads_route_frames(&self) -> bool {
        self.thread.route_frames
    }

    fn route_frame(&mut self, frame: RouteFrame) {
        let depth_met = self.thread.registry.depth();
        let (flight, query) = self.thread.dispatcher.route_frame(self.origin.conn, frame, depth_met);
        self.route(query, flight);
    }

    fn admit(&mut self, request: RemotingCommand, begin: Instant) -> Step<Checked> {
        let code = request.code;
        if code == RequestCode::RegisterBroker as i32 && !self.carried_registration {
            // Before its first registration, so the registry can close it when that broker expires.
            self.carried_registration = true;
            self.thread.registry.tell(AttachConnection { conn: self.origin.conn, closer: self.closer.clone() });
        }
        let depth_met = self.thread.registry.depth();
        match self.thread.dispatcher.admit(self.origin, request, begin, depth_met) {
            (flight, Admission::Route(query)) => {
                self.route(query, flight);
                Step::Queued
            }
            (flight, Admission::Answered(reply)) => Step::Answered(flight, reply),
            // Cluster queries log nothing while they run.
            (outstanding, Admission::Dispatch(admitted)) => {
                Step::Handle { outstanding, admitted, quiet: code == RequestCode::GetBrokerClusterInfo as i32 }
            }
        }
    }

    fn handle(&self, admitted: Checked) -> impl Future<Output = Reply> + 'static {
        let work = self.thread.dispatcher.clone().dispatch(self.origin, admitted);
        async move { work.await.map_or(Reply::Nothing, Reply::Command) }
    }

    fn closed(&mut self) {
        if self.carried_registration {
            self.thread.registry.tell(ConnectionClosed { conn: self.origin.conn });
        }
    }
}
