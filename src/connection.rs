//! The `Connection` actor: one per TCP channel. Decodes frames, hands each request to the
//! dispatcher, writes the answers back (possibly out of order), and closes itself on a bad
//! frame or when idle. A connection that carried a broker registration tells the registry
//! when it closes, so that broker goes at once.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use actix::io::{FramedWrite, WriteHandler};
use actix::prelude::*;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio_util::codec::FramedRead;
use tracing::{debug, warn};

use crate::dispatch::Dispatcher;
use crate::protocol::{CodecError, RemotingCodec, RemotingCommand, RequestCode, ResponseCode};
use crate::registry::messages::{ConnId, ConnectionClosed};
use crate::registry::RegistryHandle;

/// Requests one connection may have in flight; past it requests get SYSTEM_BUSY.
const MAX_IN_FLIGHT: usize = 4096;

/// Java's remark for SYSTEM_BUSY.
const SYSTEM_BUSY_REMARK: &str = "[OVERLOAD]system busy, start flow control for a while";

/// One client or broker connection.
pub struct Connection {
    id: ConnId,
    peer: SocketAddr,
    dispatcher: Dispatcher,
    registry: RegistryHandle,
    writer: FramedWrite<RemotingCommand, OwnedWriteHalf, RemotingCodec>,
    last_activity: Instant,
    idle_timeout: Duration,
    in_flight: usize,
    carried_registration: bool,
}

impl Connection {
    /// Starts the actor for an accepted socket on the current arbiter.
    pub fn start(
        stream: TcpStream,
        peer: SocketAddr,
        id: ConnId,
        dispatcher: Dispatcher,
        registry: RegistryHandle,
        codec: RemotingCodec,
        idle_timeout: Duration,
    ) -> Addr<Connection> {
        let (read, write) = stream.into_split();
        Connection::create(|ctx| {
            ctx.add_stream(FramedRead::new(read, codec.clone()));
            Connection {
                id,
                peer,
                dispatcher,
                registry,
                writer: FramedWrite::new(write, codec, ctx),
                last_activity: Instant::now(),
                idle_timeout,
                in_flight: 0,
                carried_registration: false,
            }
        })
    }

    fn on_request(&mut self, request: RemotingCommand, ctx: &mut Context<Self>) {
        if request.is_response() {
            // The NameServer sends no requests over server connections, so nothing waits for this.
            debug!(
                conn = self.id.0,
                code = request.code,
                opaque = request.opaque,
                "dropping unexpected response frame"
            );
            return;
        }
        if self.in_flight >= MAX_IN_FLIGHT {
            // Java answers SYSTEM_BUSY when its executor queue is full; here the bound is per
            // connection, so one client pipelining without limit cannot take the server's memory.
            if !request.is_oneway() {
                let busy = RemotingCommand::response(ResponseCode::SystemBusy, Some(SYSTEM_BUSY_REMARK.into()));
                self.writer.write(RemotingCommand {
                    opaque: request.opaque,
                    serialize_type: request.serialize_type,
                    ..busy
                });
            }
            warn!(conn = self.id.0, peer = %self.peer, in_flight = self.in_flight, "system busy: request refused");
            return;
        }
        let code = request.code;
        let header = request.serialize_type.name();
        if code == RequestCode::RegisterBroker as i32 {
            self.carried_registration = true;
        }
        self.in_flight += 1;
        let begin = Instant::now();
        let work = self.dispatcher.clone().dispatch(self.id, request);
        ctx.spawn(work.into_actor(self).map(move |response, conn, _| {
            conn.in_flight -= 1;
            debug!(
                actor = "connection",
                msg = RequestCode::from_i32(code).map_or("UNKNOWN", RequestCode::name),
                code,
                header,
                conn = conn.id.0,
                queued = conn.in_flight,
                elapsed_us = begin.elapsed().as_micros() as u64,
                "handled"
            );
            if let Some(response) = response {
                conn.last_activity = Instant::now();
                conn.writer.write(response);
            }
        }));
    }
}

impl Actor for Connection {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        debug!(conn = self.id.0, peer = %self.peer, "connection opened");
        let check_every = (self.idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
        ctx.run_interval(check_every, |conn, ctx| {
            if conn.in_flight == 0 && conn.last_activity.elapsed() >= conn.idle_timeout {
                debug!(conn = conn.id.0, peer = %conn.peer, idle_secs = conn.idle_timeout.as_secs(), "closing idle connection");
                ctx.stop();
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        debug!(conn = self.id.0, peer = %self.peer, "connection closed");
        if self.carried_registration {
            self.registry.tell(ConnectionClosed { conn: self.id });
        }
    }
}

impl StreamHandler<Result<RemotingCommand, CodecError>> for Connection {
    fn handle(&mut self, frame: Result<RemotingCommand, CodecError>, ctx: &mut Context<Self>) {
        self.last_activity = Instant::now();
        match frame {
            Ok(request) => self.on_request(request, ctx),
            Err(error) => {
                // A frame we cannot delimit or parse leaves the stream unusable: close only this one.
                warn!(conn = self.id.0, peer = %self.peer, %error, "closing connection: malformed frame");
                ctx.stop();
            }
        }
    }
}

impl WriteHandler<CodecError> for Connection {
    fn error(&mut self, error: CodecError, _: &mut Context<Self>) -> Running {
        warn!(conn = self.id.0, peer = %self.peer, %error, "closing connection: write failed");
        Running::Stop
    }
}
