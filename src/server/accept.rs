//! The accept loop (one `Connection` actor per socket, behind TLS when it is on) and the open
//! connections it tracks, told to stop reading and waited for at shutdown.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc};

use crate::connection::{Connection, ConnectionContext, Lifecycle};
use crate::dispatch::batch::RouteBatcher;
use crate::io_pool::IoPool;
use crate::listen::{AcceptGate, Admitted};
use crate::origin::{CertFingerprint, ConnId, Origin};
use crate::registry::RegistryHandle;
use crate::tls::{Accepted, Tls};

/// The open connections, as the server sees them at shutdown.
pub(crate) struct Connections {
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
pub(super) struct Accept {
    /// What every connection gets.
    pub(super) context: ConnectionContext,
    /// TLS, when on: it sees each socket first.
    pub(super) tls: Option<Arc<Tls>>,
    /// Connection ids of this listener start after this one.
    pub(super) first_id: u64,
}

impl Accept {
    /// Starts the connection of an accepted socket; with TLS on, once TLS is done with it (in a
    /// task of its own, so a slow handshake holds up nothing else). The lifecycle is taken now,
    /// so a shutdown during the handshake still reaches the connection. `routes` is the batcher
    /// of the thread it runs on.
    fn start(&self, stream: tokio::net::TcpStream, origin: Origin, lifecycle: Lifecycle, routes: &Rc<RouteBatcher>) {
        let (context, routes) = (self.context.clone(), routes.clone());
        let Some(tls) = self.tls.clone() else {
            let (read, write) = stream.into_split();
            Connection::start(read, write, origin, context, lifecycle, routes);
            return;
        };
        actix::spawn(async move {
            match tls.accept(stream, origin.peer).await {
                Some(Accepted::Plain(stream)) => {
                    let (read, write) = stream.into_split();
                    Connection::start(read, write, origin, context, lifecycle, routes);
                }
                Some(Accepted::Tls(stream)) => {
                    let presented = stream.get_ref().1.peer_certificates().and_then(|chain| chain.first());
                    let origin = Origin {
                        tls: true,
                        client_cert: presented.map(|cert| CertFingerprint::of_der(cert)),
                        ..origin
                    };
                    let (read, write) = tokio::io::split(*stream);
                    Connection::start(read, write, origin, context, lifecycle, routes);
                }
                None => {}
            }
        });
    }
}

/// The threads connections run on, each batching the route queries of its connections
/// (`dispatch::batch`) to `registry`.
pub(super) fn io_threads(threads: usize, registry: &RegistryHandle) -> IoPool<Rc<RouteBatcher>> {
    let registry = registry.clone();
    IoPool::new(threads, move || RouteBatcher::new(registry.clone()))
}

/// Accepts connections, one `Connection` actor each on the pool's threads in turn, until
/// `shutdown` completes; `gate` closes those over the connection limit and paces failed accepts.
pub(super) async fn accept_until(
    listener: &TcpListener,
    pool: &mut IoPool<Rc<RouteBatcher>>,
    accept: Accept,
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
                    pool.start(stream, peer, move |stream, routes| accept.start(stream, origin, lifecycle, routes));
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
