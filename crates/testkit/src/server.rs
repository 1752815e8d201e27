//! The real server in this process: settings for tests, start on a pre-bound 127.0.0.1:0
//! listener (one actix system on a thread of its own), stop on drop; fresh directories and waits.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use namesrv::settings::Settings;

use crate::broker::Broker;
use crate::client::Client;
use crate::http;

/// A running server; stopped when dropped.
pub struct TestServer {
    /// Where the remoting port listens.
    pub addr: SocketAddr,
    /// The HTTP endpoint, for servers started with [`TestServer::with_http`].
    pub http_addr: Option<SocketAddr>,
    /// The settings it runs with (its KV and config files live in a fresh temp directory).
    pub settings: Settings,
    /// Connections brokers registered over with [`TestServer::register`], kept open: a closed
    /// connection removes the brokers that registered over it.
    broker_conns: Mutex<Vec<Client>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// A fresh directory for one test's files.
pub fn temp_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "namesrv-test-{}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// How a test server spreads its connections over I/O threads (`io_threads`); tests that must
/// hold in every topology take one as an argument (see [`crate::in_both_topologies`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    /// Connection threads of the servers started in it.
    pub io_threads: usize,
}

impl Topology {
    /// Every connection on the server's one I/O thread (the registry on it too).
    pub const ONE_THREAD: Topology = Topology { io_threads: 1 };
    /// Connections spread over two I/O threads (the registry on a thread of its own).
    pub const TWO_THREADS: Topology = Topology { io_threads: 2 };

    /// Test settings in this topology.
    pub fn settings(self) -> Settings {
        let dir = temp_dir();
        let mut settings = Settings::default();
        settings.listen.bind_address = "127.0.0.1".into();
        settings.listen.listen_port = 0;
        settings.listen.io_threads = self.io_threads;
        settings.state.kv_config_path = dir.join("kvConfig.json").display().to_string();
        settings.state.config_store_path = dir.join("namesrv.properties").display().to_string();
        settings.observe.http_listen = String::new();
        settings
    }

    /// A server with default test settings in this topology.
    pub fn server(self) -> TestServer {
        self.server_with(|_| {})
    }

    /// A server in this topology with test settings edited by `edit`.
    pub fn server_with(self, edit: impl FnOnce(&mut Settings)) -> TestServer {
        let mut settings = self.settings();
        edit(&mut settings);
        TestServer::start_serving(settings, None)
    }

    /// [`Topology::server_with`], serving HTTP on a pre-bound 127.0.0.1 port (`http_addr`).
    pub fn server_with_http(self, edit: impl FnOnce(&mut Settings)) -> TestServer {
        let mut settings = self.settings();
        edit(&mut settings);
        let http = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        http.set_nonblocking(true).unwrap();
        TestServer::start_serving(settings, Some(http))
    }
}

/// Default settings for tests: loopback, files in a fresh temp directory, no HTTP endpoint,
/// and two connection threads whatever the machine's core count.
pub fn test_settings() -> Settings {
    Topology::TWO_THREADS.settings()
}

/// The NameServer, controller and HTTP listeners a server is started on, pre-bound.
type ListenersToBe = (Option<std::net::TcpListener>, Option<std::net::TcpListener>, Option<std::net::TcpListener>);

impl TestServer {
    /// A server with default settings.
    pub fn start() -> Self {
        Self::with(|_| {})
    }

    /// A server with test settings edited by `edit`.
    pub fn with(edit: impl FnOnce(&mut Settings)) -> Self {
        Topology::TWO_THREADS.server_with(edit)
    }

    /// A server with exactly these settings.
    pub fn with_settings(settings: Settings) -> Self {
        Self::start_serving(settings, None)
    }

    /// A server with test settings edited by `edit`, serving HTTP on a pre-bound 127.0.0.1 port
    /// (`http_addr`).
    pub fn with_http(edit: impl FnOnce(&mut Settings)) -> Self {
        Topology::TWO_THREADS.server_with_http(edit)
    }

    fn start_serving(settings: Settings, http: Option<std::net::TcpListener>) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        Self::start_listeners(settings, Some(listener), None, http)
    }

    /// A server with exactly these settings on these pre-bound listeners: the NameServer port
    /// (`None`: a standalone controller, whose `addr` is then the controller port) and the
    /// controller port (`None`: bound from the settings when the controller runs).
    pub fn start_listeners(
        settings: Settings,
        namesrv: Option<std::net::TcpListener>,
        controller: Option<std::net::TcpListener>,
        http: Option<std::net::TcpListener>,
    ) -> Self {
        Self::start_reloading(settings, (namesrv, controller, http), None)
    }

    /// [`TestServer::start_listeners`], reloading the settings from `sources` whenever the
    /// returned sender sends (as SIGHUP does in the binary); `settings` are what `sources` load.
    pub fn start_with_reloads(
        sources: namesrv::settings::Sources,
        controller: Option<std::net::TcpListener>,
        http: Option<std::net::TcpListener>,
    ) -> (Self, tokio::sync::mpsc::Sender<()>) {
        let settings = sources.load().expect("the sources load");
        let (reloads, requests) = tokio::sync::mpsc::channel(4);
        let reload = namesrv::server::Reload { sources, requests };
        let namesrv = (settings.controller.controller_mode != namesrv::settings::ControllerMode::Standalone)
            .then(|| std::net::TcpListener::bind("127.0.0.1:0").expect("bind"));
        (Self::start_reloading(settings, (namesrv, controller, http), Some(reload)), reloads)
    }

    fn start_reloading(
        settings: Settings,
        (namesrv, controller, http): ListenersToBe,
        reload: Option<namesrv::server::Reload>,
    ) -> Self {
        let kept = settings.clone();
        let shown = namesrv.as_ref().or(controller.as_ref()).expect("a listener");
        let addr = shown.local_addr().unwrap();
        let http_addr = http.as_ref().map(|l| l.local_addr().unwrap());
        for l in namesrv.iter().chain(controller.iter()) {
            l.set_nonblocking(true).unwrap();
        }
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let system = actix::System::new();
            system.block_on(async move {
                let tokio_listener = |l: std::net::TcpListener| tokio::net::TcpListener::from_std(l).unwrap();
                let listeners = namesrv::server::Listeners {
                    namesrv: namesrv.map(tokio_listener),
                    controller: controller.map(tokio_listener),
                    http,
                };
                let shutdown = async {
                    let _ = rx.await;
                };
                namesrv::server::serve_on(settings, listeners, shutdown, reload).await.unwrap();
            });
        });
        TestServer {
            addr,
            http_addr,
            settings: kept,
            broker_conns: Mutex::default(),
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// `host:port` of the remoting port, as nsadmin's `-n` takes it.
    pub fn ns(&self) -> String {
        self.addr.to_string()
    }

    /// A new client connection.
    pub fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// Registers `broker` (the answer must be SUCCESS) over a connection of its own that stays
    /// open while the server runs.
    pub fn register(&self, broker: &Broker) {
        let mut conn = self.client();
        let answer = conn.register(broker);
        assert_eq!(answer.code, 0, "register {}: {:?}", broker.name, answer.remark);
        self.broker_conns.lock().expect("lock").push(conn);
    }

    /// Waits until exactly `open` remoting connections are open (`namesrv_connections`, on a
    /// server started [`TestServer::with_http`]): a closed connection is then gone, and the
    /// registry handles its close before any request sent after this returns.
    pub fn wait_for_open_connections(&self, open: u32) {
        let http_addr = self.http_addr.expect("a server started with_http");
        let count = || http::sample(&http::get(http_addr, "/metrics").body, "namesrv_connections");
        let reached = eventually(Duration::from_secs(5), || count() == Some(f64::from(open)));
        assert!(reached, "expected {open} open connections, the server counts {:?}", count());
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Polls `check` every 20 ms until it holds or `timeout` passes.
pub fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if check() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
