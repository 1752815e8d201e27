//! The `Connection` actor: one per TCP channel, plumbing only, for whichever service its listener
//! serves (`crate::service`). It decodes frames (`frames`: admitted against the global budget of
//! partly received frames), hands each request to its session, which admits it and says where it
//! goes — handled by the session's future, down a lane of the service whose replies come back
//! through the finished queue a batch at a time (`lane`), or answered at once —, ends each
//! request the same way (`finish`: counted, logged, its reply queued for the writer, `writer`,
//! possibly out of order), and stops reading while too much is in flight or queued (`flow`). It
//! closes itself on a bad frame, a frame not completed in time, when idle (`closing`), or once
//! drained after the server told it to stop; its session hears of the close. It knows no request
//! code: what it asks of one (its name, whether it claims the broker reserve) its session says.

mod closing;
mod finish;
pub mod flow;
pub mod frames;
mod lane;
pub mod writer;

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{broadcast, mpsc};
use tokio_util::codec::FramedRead;
use tracing::{debug, info_span, warn, Instrument, Span};

use crate::metrics::Metrics;
use crate::origin::Origin;
use crate::peers::Share;
use crate::protocol::{RemotingCodec, RemotingCommand};
use crate::registry::messages::CloseConnection;
use crate::service::{Finished, Opening, Reply, Service, Session, Step};
use flow::{Flow, FlowLimits, ReplyBudget, Throttled};
use frames::{Admitted, AdmittedCodec, FrameBudget, FrameError, FrameReservation};
use writer::{write_frames, Outbox};

/// Initial capacity of a connection's read buffer.
const READ_BUFFER_BYTES: usize = 2048;

/// How the server stops its connections: `stop` tells them to stop reading; each holds a
/// `done` sender, so the server knows all have finished when the channel closes.
#[derive(Debug)]
pub struct Lifecycle {
    /// Fires once when the server shuts down.
    pub stop: broadcast::Receiver<()>,
    /// Dropped with the connection.
    pub done: mpsc::Sender<()>,
    /// What it draws on of the shared budgets, counted among its address's connections.
    pub share: Share,
    /// It took a slot of the broker reserve: its first request must register a broker.
    pub on_reserve: bool,
}

/// What a connection needs besides its socket and its service: the limits, budgets and
/// deadlines every listener's connections share.
#[derive(Clone)]
pub struct ConnectionContext {
    /// Frame limits.
    pub codec: RemotingCodec,
    /// The process-wide budget of large frames received or waiting, shared fairly.
    pub frame_budget: Arc<FrameBudget>,
    /// A frame not complete this long after it started closes its connection.
    pub frame_timeout: Duration,
    /// Connections silent this long are closed.
    pub idle_timeout: Duration,
    /// Connections that send no byte this long after their accept are closed.
    pub first_byte_timeout: Duration,
    /// Connections in the middle of a frame that send no byte this long are closed.
    pub frame_progress_timeout: Duration,
    /// Connections whose waiting replies see no byte written this long are closed.
    pub reply_drain_timeout: Duration,
    /// When reading pauses for back-pressure.
    pub flow_limits: FlowLimits,
    /// The process-wide budget of unwritten replies, shared fairly.
    pub reply_budget: Arc<ReplyBudget>,
    /// Requests, connections and bytes are counted here.
    pub metrics: Arc<Metrics>,
    /// Requests taking longer are logged at WARN.
    pub slow_request: Duration,
}

/// One client or broker connection to the service `S`.
pub struct Connection<S: Service> {
    /// `conn` span (id, peer): entered by every handler, so every line logged carries them.
    span: Span,
    /// Limits and timeouts.
    context: ConnectionContext,
    /// Its side of the service: admits and handles its requests.
    session: S::Session,
    /// Where requests finished elsewhere come back (a lane's replies).
    finished: Rc<Finished>,
    /// Where replies go; `None` once closing (the writer then drains and shuts the socket).
    outbox: Option<Outbox>,
    /// Requests in flight and reply bytes queued, shared with the reader and the writer.
    flow: Rc<Flow>,
    /// The frame stream in; `None` once the server told it to stop reading.
    reading: Option<SpawnHandle>,
    /// When the frame being received started, set by the decoder.
    receiving_since: Rc<Cell<Option<Instant>>>,
    /// When the last byte arrived (`None`: none yet), set by the decoder.
    last_byte: Rc<Cell<Option<Instant>>>,
    /// When the connection was accepted.
    opened_at: Instant,
    /// What it draws on of the shared budgets; a broker's once it registered one.
    share: Rc<Share>,
    /// It took a slot of the broker reserve and has not registered a broker yet: a first
    /// request that claims no reserve closes it.
    on_reserve: bool,
    /// The last complete frame in or reply queued.
    last_activity: Instant,
    /// The server's stop signal, until `started` hands it to the task that watches it.
    stop: Option<broadcast::Receiver<()>>,
    /// That task, ended with the connection.
    stop_watch: Option<tokio::task::JoinHandle<()>>,
    /// Dropped with the actor: how the server counts connections still draining.
    _done: mpsc::Sender<()>,
}

/// The frame decoder of a connection drawing on `share`, noting when a frame began and when
/// its last byte came; it reads plain route queries off their frames where the session does.
fn frame_decoder(
    context: &ConnectionContext,
    share: &Rc<Share>,
    receiving_since: &Rc<Cell<Option<Instant>>>,
    last_byte: &Rc<Cell<Option<Instant>>>,
    route_frames: bool,
) -> AdmittedCodec {
    let received = context.metrics.bytes_received.clone();
    let codec =
        AdmittedCodec::new(context.codec.clone(), context.frame_budget.clone(), receiving_since.clone(), received)
            .watching_bytes(last_byte.clone())
            .drawing_on(share.clone());
    if route_frames {
        codec.with_route_frames()
    } else {
        codec
    }
}

impl<S: Service> Connection<S> {
    /// Starts the actor for an accepted connection's two halves on the current arbiter, whose
    /// part of the service is `thread`.
    pub fn start<R, W>(
        (read, write): (R, W),
        origin: Origin,
        context: ConnectionContext,
        lifecycle: Lifecycle,
        (service, thread): (&S, &Rc<S::Thread>),
    ) -> Addr<Connection<S>>
    where
        R: AsyncRead + Unpin + 'static,
        W: AsyncWrite + Unpin + 'static,
    {
        Connection::create(|ctx| {
            let share = Rc::new(lifecycle.share);
            let flow = Flow::new(context.flow_limits, context.reply_budget.clone(), share.clone());
            let (finished, finishing) = Finished::new();
            let closer = ctx.address().recipient();
            let session = service.open(thread, Opening { origin, closer, finished: finished.clone() });
            let (receiving_since, last_byte) = (Rc::new(Cell::new(None)), Rc::new(Cell::new(None)));
            let codec = frame_decoder(&context, &share, &receiving_since, &last_byte, session.reads_route_frames());
            // Requests are small: a 2 KiB read buffer holds several; it grows for large frames and
            // is let go of after them (`frames`), so idle connections stay cheap.
            let framed = FramedRead::with_capacity(read, codec, READ_BUFFER_BYTES);
            let reading = ctx.add_stream(Throttled::new(framed, flow.clone()));
            ctx.add_stream(finishing);
            let outbox = Self::start_writer(write, &flow, &context.metrics, ctx);
            Connection {
                span: info_span!("conn", id = origin.conn.0, peer = %origin.peer),
                session,
                finished,
                context,
                outbox: Some(outbox),
                flow,
                reading: Some(reading),
                receiving_since,
                last_byte,
                opened_at: Instant::now(),
                share,
                on_reserve: lifecycle.on_reserve,
                last_activity: Instant::now(),
                stop: Some(lifecycle.stop),
                stop_watch: None,
                _done: lifecycle.done,
            }
        })
    }

    /// Starts the writing half: the replies queued on the returned outbox are written in
    /// order; a failed write stops the connection.
    fn start_writer<W: AsyncWrite + Unpin + 'static>(
        write: W,
        flow: &Rc<Flow>,
        metrics: &Metrics,
        ctx: &mut Context<Self>,
    ) -> Outbox {
        metrics.connections.inc();
        metrics.connections_accepted.inc();
        let (outbox, queued) = Outbox::new(flow.clone());
        let writing = write_frames(write, queued, flow.clone(), metrics.bytes_sent.clone());
        ctx.spawn(actix::fut::wrap_future::<_, Self>(writing).map(|written, conn, ctx| {
            if let Err(error) = written {
                let _entered = conn.span.clone().entered();
                warn!(%error, "closing connection: write failed");
            }
            ctx.stop();
        }));
        outbox
    }

    /// Takes one request received at `begin` where its session says. The frame budget its
    /// frame holds (`reservation`) is given back once it has been handled (a lane's request's,
    /// once admitted: its frame is dropped then).
    fn on_request(
        &mut self,
        request: RemotingCommand,
        reservation: Option<FrameReservation>,
        begin: Instant,
        ctx: &mut Context<Self>,
    ) {
        if request.is_response() {
            // The server sends no requests over server connections, so nothing waits for this.
            let _entered = self.span.clone().entered();
            debug!(code = request.code, opaque = request.opaque, "dropping unexpected response frame");
            return;
        }
        if self.on_reserve && !<S::Session as Session>::claims_reserve(request.code) {
            // A slot kept for brokers, taken by something else.
            let _entered = self.span.clone().entered();
            let code = request.code;
            warn!(code, "closing connection: on the broker reserve of max_connections, its first request must register a broker");
            return ctx.stop();
        }
        self.flow.request_started();
        let (flight, admitted, quiet) = match self.session.admit(request, begin) {
            Step::Queued => return,
            Step::Answered(flight, reply) => return self.finish(flight, reply, Instant::now(), None, ctx),
            Step::Handle { outstanding, admitted, quiet } => (outstanding, admitted, quiet),
        };
        // A quiet request logs nothing while it runs: it skips entering the span, which costs
        // more than a cheap request's work.
        let span = if quiet { Span::none() } else { self.span.clone() };
        let work = self.session.handle(admitted).instrument(span);
        ctx.spawn(work.into_actor(self).map(move |reply: Reply, conn, ctx| {
            drop(reservation);
            conn.finish(flight, reply, Instant::now(), None, ctx);
        }));
    }

    /// The server is stopping: read no more requests, answer those in flight, then close.
    fn stop_reading(&mut self, ctx: &mut Context<Self>) {
        if let Some(reading) = self.reading.take() {
            ctx.cancel_future(reading);
            debug!(in_flight = self.flow.in_flight(), "stopped reading");
        }
        self.close_if_drained();
    }

    /// Once it reads no more and every request is answered, lets the writer flush and close
    /// the socket (the writer then stops the actor).
    fn close_if_drained(&mut self) {
        if self.reading.is_none() && self.flow.in_flight() == 0 {
            self.outbox = None;
        }
    }
}

impl<S: Service> Actor for Connection<S> {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let _entered = self.span.clone().entered();
        debug!("connection opened");
        if let Some(mut stop) = self.stop.take() {
            // A task of its own, not a future of the actor's: the context polls each of its
            // futures at every wake-up, which for this one was a lock taken per frame.
            let connection = ctx.address().downgrade();
            self.stop_watch = Some(actix::spawn(async move {
                // Fired, lagged or closed: the server is going either way.
                let _ = stop.recv().await;
                if let Some(connection) = connection.upgrade() {
                    connection.do_send(StopReading);
                }
            }));
        }
        let context = &self.context;
        let shortest = [
            context.idle_timeout,
            context.frame_timeout,
            context.first_byte_timeout,
            context.frame_progress_timeout,
            context.reply_drain_timeout,
        ]
        .into_iter()
        .min()
        .unwrap_or(context.idle_timeout);
        let check_every = (shortest / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
        ctx.run_interval(check_every, |conn, ctx| conn.check_timeouts(ctx));
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        let _entered = self.span.clone().entered();
        if let Some(watch) = self.stop_watch.take() {
            watch.abort();
        }
        debug!("connection closed");
        self.session.closed();
        // After the session is told: whoever sees the gauge drop knows the close is queued
        // ahead of any request they send next.
        self.context.metrics.connections.dec();
    }
}

impl<S: Service> StreamHandler<Result<Admitted, FrameError>> for Connection<S> {
    fn handle(&mut self, frame: Result<Admitted, FrameError>, ctx: &mut Context<Self>) {
        // A request enters the span only where it logs (entering costs more than a route lookup).
        let admitted = match frame {
            Ok(admitted) => admitted,
            Err(error) => return self.on_frame_error(error, ctx),
        };
        match admitted {
            Admitted::Route(route) => {
                self.last_activity = route.read_at;
                self.flow.request_started();
                self.session.route_frame(route);
            }
            Admitted::Request { request, reservation, read_at } => {
                self.last_activity = read_at;
                self.on_request(request, reservation, read_at, ctx);
            }
        }
    }
}

/// The server is stopping (sent by the task watching its stop signal).
#[derive(Message)]
#[rtype(result = "()")]
struct StopReading;

impl<S: Service> Handler<StopReading> for Connection<S> {
    type Result = ();

    fn handle(&mut self, _: StopReading, ctx: &mut Context<Self>) {
        self.stop_reading(ctx);
    }
}

impl<S: Service> Handler<CloseConnection> for Connection<S> {
    type Result = ();

    fn handle(&mut self, msg: CloseConnection, ctx: &mut Context<Self>) {
        let _entered = self.span.clone().entered();
        debug!(reason = msg.reason, "closing connection at the registry's request");
        ctx.stop();
    }
}
