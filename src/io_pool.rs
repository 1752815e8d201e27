//! The threads connections run on (`io_threads`): connection actors are spread round-robin over
//! a pool of arbiters, so framing, header and body decoding and reply encoding run in parallel,
//! while every connection still talks to the one `RouteRegistry` through its mailbox. The
//! current arbiter (the accept loop's) is the pool's first thread; with one thread, nothing
//! leaves it.

use std::net::SocketAddr;

use actix::{Arbiter, ArbiterHandle};
use tokio::net::TcpStream;
use tracing::warn;

/// The arbiters connection actors are started on.
pub struct IoPool {
    /// The threads besides the current one.
    others: Vec<Arbiter>,
    /// Where the next connection goes (0: the current thread).
    next: usize,
}

impl IoPool {
    /// A pool of `threads` threads: the current one and `threads - 1` new arbiters.
    pub fn new(threads: usize) -> Self {
        let others = (1..threads.max(1)).map(|_| Arbiter::new()).collect();
        IoPool { others, next: 0 }
    }

    /// How many threads run connections.
    pub fn threads(&self) -> usize {
        self.others.len() + 1
    }

    /// Runs `start` with an accepted connection on the next thread in turn (it starts the
    /// connection's actor there).
    pub fn start(&mut self, stream: TcpStream, peer: SocketAddr, start: impl FnOnce(TcpStream) + Send + 'static) {
        let turn = self.next;
        self.next = (self.next + 1) % self.threads();
        let Some(arbiter) = turn.checked_sub(1).map(|i| self.others[i].handle()) else {
            start(stream);
            return;
        };
        // A tokio socket belongs to the runtime that accepted it: hand the thread a std socket.
        match stream.into_std() {
            Ok(stream) => move_to(&arbiter, stream, peer, start),
            Err(error) => warn!(%error, %peer, "cannot hand the connection to an I/O thread"),
        }
    }

    /// Stops every thread but the current one, once their connections are gone.
    pub fn stop(self) {
        for arbiter in self.others {
            arbiter.stop();
            let _ = arbiter.join();
        }
    }
}

fn move_to(
    arbiter: &ArbiterHandle,
    stream: std::net::TcpStream,
    peer: SocketAddr,
    start: impl FnOnce(TcpStream) + Send + 'static,
) {
    let sent = arbiter.spawn_fn(move || match TcpStream::from_std(stream) {
        Ok(stream) => start(stream),
        Err(error) => warn!(%error, %peer, "cannot register the connection on its I/O thread"),
    });
    if !sent {
        warn!(%peer, "I/O thread gone: connection dropped");
    }
}
