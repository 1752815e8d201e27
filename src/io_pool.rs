//! The threads connections run on (`io_threads`): connection actors are spread round-robin over
//! a pool of arbiters, so framing, header and body decoding and reply encoding run in parallel,
//! while every connection still talks to the one `RouteRegistry` through its mailbox. The
//! current arbiter (the accept loop's) is the pool's first thread; with one thread, nothing
//! leaves it. Each thread keeps a home value of the server's (its route batcher) that the
//! connections started on it share: made on that thread, owned by the pool, never global.

use std::net::SocketAddr;

use actix::Arbiter;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tracing::warn;

/// A connection to start on a thread, given that thread's home value.
type Job<T> = Box<dyn FnOnce(&T) + Send>;

/// The arbiters connection actors are started on, each with its home value `T`.
pub struct IoPool<T> {
    /// The current thread's home value.
    home: T,
    /// The threads besides the current one.
    others: Vec<Worker<T>>,
    /// Where the next connection goes (0: the current thread).
    next: usize,
}

/// A thread of the pool besides the current one: a task on it owns its home value and starts
/// the connections sent to it. The queue is bounded by the accept gate (one job per admitted
/// connection) and emptied as fast as the thread can start actors.
struct Worker<T> {
    arbiter: Arbiter,
    jobs: mpsc::UnboundedSender<Job<T>>,
}

impl<T: 'static> IoPool<T> {
    /// A pool of `threads` threads: the current one and `threads - 1` new arbiters, each with
    /// a home value `make_home` makes on that thread.
    pub fn new<F>(threads: usize, make_home: F) -> Self
    where
        F: Fn() -> T + Clone + Send + 'static,
    {
        let others = (1..threads.max(1)).map(|_| Worker::start(make_home.clone())).collect();
        IoPool { home: make_home(), others, next: 0 }
    }

    /// How many threads run connections.
    pub fn threads(&self) -> usize {
        self.others.len() + 1
    }

    /// Runs `start` with an accepted connection and the home value of the next thread in turn,
    /// on that thread (it starts the connection's actor there).
    pub fn start(&mut self, stream: TcpStream, peer: SocketAddr, start: impl FnOnce(TcpStream, &T) + Send + 'static) {
        let turn = self.next;
        self.next = (self.next + 1) % self.threads();
        let Some(worker) = turn.checked_sub(1).map(|i| &self.others[i]) else {
            start(stream, &self.home);
            return;
        };
        // A tokio socket belongs to the runtime that accepted it: hand the thread a std socket.
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(error) => {
                warn!(%error, %peer, "cannot hand the connection to an I/O thread");
                return;
            }
        };
        let job: Job<T> = Box::new(move |home| match TcpStream::from_std(stream) {
            Ok(stream) => start(stream, home),
            Err(error) => warn!(%error, %peer, "cannot register the connection on its I/O thread"),
        });
        if worker.jobs.send(job).is_err() {
            warn!(%peer, "I/O thread gone: connection dropped");
        }
    }

    /// Stops every thread but the current one, once their connections are gone.
    pub fn stop(self) {
        for Worker { arbiter, jobs } in self.others {
            drop(jobs);
            arbiter.stop();
            let _ = arbiter.join();
        }
    }
}

impl<T: 'static> Worker<T> {
    /// A new arbiter whose home task makes its home value and starts the connections sent.
    fn start<F>(make_home: F) -> Self
    where
        F: FnOnce() -> T + Send + 'static,
    {
        let arbiter = Arbiter::new();
        let (jobs, mut queued) = mpsc::unbounded_channel::<Job<T>>();
        let started = arbiter.spawn_fn(move || {
            actix::spawn(async move {
                let home = make_home();
                while let Some(job) = queued.recv().await {
                    job(&home);
                }
            });
        });
        if !started {
            warn!("I/O thread did not start");
        }
        Worker { arbiter, jobs }
    }
}
