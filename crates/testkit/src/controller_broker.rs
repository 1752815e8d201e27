//! A broker in controller mode, as Java's `ReplicasManager` behaves (1005 → 1012 → 1013 → 1003
//! → 1002, BROKER_HEARTBEAT to every controller each interval, 1004 polling, 1001 from the
//! master, NOTIFY_BROKER_ROLE_CHANGED obeyed when newer), with every interval a parameter. It
//! listens on its own 127.0.0.1 port (its broker address, where 1008 arrives), registers with a
//! NameServer as master (brokerId 0) or slave with `stateVersion` = its master epoch, can hang
//! (everything stops, connections stay open) and be killed (every connection closes), and keeps
//! a log of every role it believed and every request it sent. The loop is in `broker_loop`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::broker_loop;
use crate::broker_state::Shared;
pub use crate::broker_state::{BrokerConfig, BrokerState, RoleSeen};

/// A running test broker; killed when dropped.
pub struct ControllerBroker {
    /// Its broker address (`127.0.0.1:port`), where 1008 arrives.
    pub addr: String,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl ControllerBroker {
    /// Starts a broker on a fresh port.
    pub fn start(config: BrokerConfig) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the broker port");
        Self::start_on(config, listener)
    }

    /// Starts a broker on `listener` (a broker coming back at its old address).
    pub fn start_on(config: BrokerConfig, listener: std::net::TcpListener) -> Self {
        let addr = listener.local_addr().unwrap().to_string();
        listener.set_nonblocking(true).unwrap();
        let shared = Arc::new(Shared::default());
        shared.lock().epoch = -1;
        shared.lock().id = config.id;
        let (run_shared, run_addr) = (shared.clone(), addr.clone());
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            runtime.block_on(broker_loop::run(config, run_addr, listener, run_shared));
        });
        ControllerBroker { addr, shared, thread: Some(thread) }
    }

    /// What it knows now.
    pub fn state(&self) -> std::sync::MutexGuard<'_, BrokerState> {
        self.shared.lock()
    }

    /// Its id, once it has one.
    pub fn id(&self) -> Option<i64> {
        self.state().id
    }

    /// Whether it believes it is the master.
    pub fn is_master(&self) -> bool {
        let s = self.state();
        s.id.is_some() && s.master == s.id
    }

    /// Its master epoch.
    pub fn epoch(&self) -> i32 {
        self.state().epoch
    }

    /// Sets the max offset it reports.
    pub fn set_max_offset(&self, offset: i64) {
        self.shared.max_offset.store(offset, Ordering::Relaxed);
    }

    /// As master: the slaves it counts as caught up (it asks for them in the in-sync set).
    pub fn set_in_sync(&self, slaves: &[i64]) {
        *self.shared.in_sync.lock().unwrap() = slaves.iter().copied().collect();
    }

    /// Stops everything (heartbeats, polls, registrations) with its connections left open.
    pub fn hang(&self) {
        self.shared.hung.store(true, Ordering::Relaxed);
    }

    /// Resumes after [`ControllerBroker::hang`].
    pub fn wake(&self) {
        self.shared.hung.store(false, Ordering::Relaxed);
    }

    /// Closes every connection and stops (as kill -9 does); returns its last state's roles.
    pub fn kill(&mut self) -> Vec<RoleSeen> {
        self.shared.killed.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.state().roles.clone()
    }
}

impl Drop for ControllerBroker {
    fn drop(&mut self) {
        self.kill();
    }
}
