//! The accept loop of one listener (one `Connection` actor per socket, for the listener's
//! service, behind TLS when it is on) and the open connections it tracks, told to stop reading
//! and waited for at shutdown.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc};

use super::compose::{shares, Services};
use crate::connection::{Connection, ConnectionContext, Lifecycle};
use crate::io_pool::IoPool;
use crate::listen::{self, AcceptGate, Admitted};
use crate::origin::{CertFingerprint, ConnId, Origin};
use crate::peers::Peers;
use crate::service::controller::ControllerService;
use crate::service::namesrv::session::NamesrvService;
use crate::service::Service;
use crate::settings::Settings;
use crate::tls::{Accepted, Tls};

/// Where the controller listener's connection ids start, apart from the NameServer port's.
const CONTROLLER_CONN_IDS: u64 = 1 << 48;

/// The threads each listener's connections run on.
pub(super) struct Pools {
    /// The NameServer port's (`io_threads`).
    pub(super) namesrv: Option<IoPool<Rc<<NamesrvService as Service>::Thread>>>,
    /// The controller port's (one).
    pub(super) controller: Option<IoPool<Rc<<ControllerService as Service>::Thread>>>,
}

impl Pools {
    /// Stops every thread but the current one.
    pub(super) fn stop(self) {
        if let Some(pool) = self.namesrv {
            pool.stop();
        }
        if let Some(pool) = self.controller {
            pool.stop();
        }
    }
}

/// How many descriptors the HTTP endpoint may hold: none when it is off.
fn http_connections(settings: &Settings) -> usize {
    if settings.observe.http_listen.trim().is_empty() {
        0
    } else {
        settings.observe.http_max_connections
    }
}

/// Accepts on the NameServer port and the controller port (each when there) until `shutdown`;
/// their open connections, to drain. One table of source addresses for both listeners: an
/// address's share is of the whole.
pub(super) async fn accept_all(
    settings: &Settings,
    services: &Services,
    (namesrv, controller): (Option<&TcpListener>, Option<&TcpListener>),
    pools: &mut Pools,
    shutdown: impl Future<Output = ()>,
) -> Vec<Connections> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|s| *s).await;
    };
    let peers = Arc::new(Peers::default());
    let limit = listen::connection_limit(settings.limits.max_connections, http_connections(settings));
    let gate = || AcceptGate::new(limit, shares(settings), peers.clone());
    let (context, tls) = (&services.context, &services.tls);
    let namesrv_loop = async {
        let (listener, service, pool) = (namesrv?, &services.namesrv.as_ref()?.service, pools.namesrv.as_mut()?);
        let accept = Accept { service: service.clone(), context: context.clone(), tls: tls.clone(), first_id: 0 };
        Some(accept_until(listener, pool, accept, gate(), until(stopped.clone())).await)
    };
    let controller_loop = async {
        let service = &services.controller.as_ref()?.service;
        let (listener, pool) = (controller?, pools.controller.as_mut()?);
        let first_id = CONTROLLER_CONN_IDS;
        let accept = Accept { service: service.clone(), context: context.clone(), tls: tls.clone(), first_id };
        Some(accept_until(listener, pool, accept, gate(), until(stopped.clone())).await)
    };
    let signal = async {
        shutdown.await;
        let _ = stop.send(true);
    };
    let ((), namesrv_conns, controller_conns) = tokio::join!(signal, namesrv_loop, controller_loop);
    namesrv_conns.into_iter().chain(controller_conns).collect()
}

/// The open connections, as the server sees them at shutdown.
pub(super) struct Connections {
    /// Tells every connection to stop reading.
    stop: broadcast::Sender<()>,
    /// Cloned into every connection.
    done: mpsc::Sender<()>,
    /// Closes when the last connection is gone.
    all_done: mpsc::Receiver<()>,
}

impl Connections {
    fn new() -> Self {
        let (stop, _) = broadcast::channel(1);
        let (done, all_done) = mpsc::channel(1);
        Connections { stop, done, all_done }
    }

    /// How many connections are open (each holds a `done` sender until it ends; a TLS
    /// handshake counts from its accept).
    fn open(&self) -> usize {
        self.done.strong_count().saturating_sub(1)
    }

    /// What a new connection holds, drawing on `admitted`'s share.
    fn lifecycle(&self, admitted: Admitted) -> Lifecycle {
        let Admitted { share, on_reserve } = admitted;
        Lifecycle { stop: self.stop.subscribe(), done: self.done.clone(), share, on_reserve }
    }

    /// Tells every connection to stop reading and waits, at most `timeout`, until each has
    /// answered its requests in flight and closed. Returns whether all did.
    pub(super) async fn drain(mut self, timeout: Duration) -> bool {
        let _ = self.stop.send(());
        drop(self.done);
        tokio::time::timeout(timeout, self.all_done.recv()).await.is_ok()
    }
}

/// What the accept loop hands each socket to.
#[derive(Clone)]
pub(super) struct Accept<S> {
    /// The service the listener's connections are served by.
    pub(super) service: S,
    /// What every connection gets.
    pub(super) context: ConnectionContext,
    /// TLS, when on: it sees each socket first.
    pub(super) tls: Option<Arc<Tls>>,
    /// Connection ids of this listener start after this one.
    pub(super) first_id: u64,
}

impl<S: Service> Accept<S> {
    /// Starts the connection of an accepted socket; with TLS on, once TLS is done with it (in a
    /// task of its own, so a slow handshake holds up nothing else). The lifecycle is taken now,
    /// so a shutdown during the handshake still reaches the connection. `thread` is the part of
    /// the service the thread it runs on keeps.
    fn start(&self, stream: tokio::net::TcpStream, origin: Origin, lifecycle: Lifecycle, thread: &Rc<S::Thread>) {
        let (service, context, thread) = (self.service.clone(), self.context.clone(), thread.clone());
        let Some(tls) = self.tls.clone() else {
            Connection::start(stream.into_split(), origin, context, lifecycle, (&service, &thread));
            return;
        };
        actix::spawn(async move {
            match tls.accept(stream, origin.peer).await {
                Some(Accepted::Plain(stream)) => {
                    Connection::start(stream.into_split(), origin, context, lifecycle, (&service, &thread));
                }
                Some(Accepted::Tls(stream)) => {
                    let presented = stream.get_ref().1.peer_certificates().and_then(|chain| chain.first());
                    let origin = Origin {
                        tls: true,
                        client_cert: presented.map(|cert| CertFingerprint::of_der(cert)),
                        ..origin
                    };
                    Connection::start(tokio::io::split(*stream), origin, context, lifecycle, (&service, &thread));
                }
                None => {}
            }
        });
    }
}

/// The threads the connections of `service` run on, each keeping its part of the service.
pub(super) fn io_threads<S: Service>(threads: usize, service: &S) -> IoPool<Rc<S::Thread>> {
    let service = service.clone();
    IoPool::new(threads, move || Rc::new(service.thread()))
}

/// Accepts connections, one `Connection` actor each on the pool's threads in turn, until
/// `shutdown` completes; `gate` closes those over the connection limit and paces failed accepts.
pub(super) async fn accept_until<S: Service>(
    listener: &TcpListener,
    pool: &mut IoPool<Rc<S::Thread>>,
    accept: Accept<S>,
    mut gate: AcceptGate,
    shutdown: impl Future<Output = ()>,
) -> Connections {
    let connections = Connections::new();
    tokio::pin!(shutdown);
    let mut next_id = accept.first_id;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let Some(admitted) = gate.admit(connections.open(), peer) else {
                        continue;
                    };
                    next_id += 1;
                    let _ = stream.set_nodelay(true);
                    let origin = Origin { conn: ConnId(next_id), peer, tls: false, client_cert: None };
                    let (accept, lifecycle) = (accept.clone(), connections.lifecycle(admitted));
                    pool.start(stream, peer, move |stream, thread| accept.start(stream, origin, lifecycle, thread));
                }
                Err(error) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    let pause = gate.failed(&error);
                    tokio::select! {
                        _ = tokio::time::sleep(pause) => {}
                        _ = &mut shutdown => return connections,
                    }
                }
            },
            _ = &mut shutdown => return connections,
        }
    }
}
