//! Test harness: the real server on a pre-bound 127.0.0.1:0 listener, a blocking client, and
//! builders for broker registrations.
#![allow(dead_code)]

use std::cell::Cell;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use namesrv::dispatch::body_crc32;
use namesrv::model::DataVersion;
use namesrv::protocol::codec::encode_frame;
use namesrv::protocol::lenient::quote_bare_keys;
use namesrv::protocol::{ExtFields, RemotingCodec, RemotingCommand};
use namesrv::settings::Settings;
use serde_json::{json, Value};
use tokio_util::codec::Decoder;

pub mod checks;
pub mod http;
pub mod kv_config;
pub mod process;
pub mod requests;
pub mod routeinfo;
pub mod security;

/// A running server; stopped when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    /// The HTTP endpoint, for servers started with [`TestServer::with_http`].
    pub http_addr: Option<SocketAddr>,
    /// The settings it runs with (its KV and config files live in a fresh temp directory).
    pub settings: Settings,
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

thread_local! {
    /// `io_threads` of the servers this test thread starts (see [`with_io_threads`]).
    static IO_THREADS: Cell<usize> = const { Cell::new(2) };
}

/// Runs `test` with every server it starts on this thread using `threads` connection threads
/// (`io_threads`); without it, tests run with 2, whatever the machine's core count.
pub fn with_io_threads(threads: usize, test: impl FnOnce()) {
    IO_THREADS.set(threads);
    test();
}

/// Defines each listed test function and runs it in both connection topologies: every
/// connection on the server's one I/O thread (`<test>::one_io_thread`) and connections spread
/// over two (`<test>::two_io_threads`).
#[allow(unused_macros)]
macro_rules! in_both_topologies {
    ($($(#[$meta:meta])* fn $name:ident() $body:block)*) => {$(
        $(#[$meta])*
        fn $name() $body

        mod $name {
            #[test]
            fn one_io_thread() {
                crate::common::with_io_threads(1, super::$name);
            }

            #[test]
            fn two_io_threads() {
                crate::common::with_io_threads(2, super::$name);
            }
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use in_both_topologies;

/// Default settings for tests: loopback, files in a fresh temp directory, and a fixed number of
/// connection threads (2 unless [`with_io_threads`] says otherwise).
pub fn test_settings() -> Settings {
    let dir = temp_dir();
    let mut settings = Settings::default();
    settings.listen.bind_address = "127.0.0.1".into();
    settings.listen.listen_port = 0;
    settings.listen.io_threads = IO_THREADS.get();
    settings.state.kv_config_path = dir.join("kvConfig.json").display().to_string();
    settings.state.config_store_path = dir.join("namesrv.properties").display().to_string();
    settings.observe.http_listen = String::new();
    settings
}

impl TestServer {
    /// A server with default settings.
    pub fn start() -> Self {
        Self::with(|_| {})
    }

    /// A server with test settings edited by `edit`.
    pub fn with(edit: impl FnOnce(&mut Settings)) -> Self {
        let mut settings = test_settings();
        edit(&mut settings);
        Self::with_settings(settings)
    }

    /// A server with exactly these settings.
    pub fn with_settings(settings: Settings) -> Self {
        Self::start_serving(settings, None)
    }

    /// A server with test settings edited by `edit`, serving HTTP on a pre-bound 127.0.0.1 port
    /// (`http_addr`).
    pub fn with_http(edit: impl FnOnce(&mut Settings)) -> Self {
        let mut settings = test_settings();
        edit(&mut settings);
        let http = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        http.set_nonblocking(true).unwrap();
        Self::start_serving(settings, Some(http))
    }

    fn start_serving(settings: Settings, http: Option<std::net::TcpListener>) -> Self {
        let kept = settings.clone();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let http_addr = http.as_ref().map(|l| l.local_addr().unwrap());
        listener.set_nonblocking(true).unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let system = actix::System::new();
            system.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let shutdown = async {
                    let _ = rx.await;
                };
                namesrv::server::serve_with(settings, listener, shutdown, None, http).await.unwrap();
            });
        });
        TestServer { addr, http_addr, settings: kept, shutdown: Some(tx), thread: Some(thread) }
    }

    /// A new client connection.
    pub fn client(&self) -> Client {
        Client::connect(self.addr)
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

/// What a read with a deadline found.
#[derive(Debug)]
pub enum Incoming {
    /// A complete frame.
    Frame(RemotingCommand),
    /// The server closed the connection.
    Closed,
    /// Nothing within the deadline.
    Silent,
}

/// A blocking RocketMQ client over one TCP connection.
pub struct Client {
    pub stream: TcpStream,
    codec: RemotingCodec,
    buf: BytesMut,
    next_opaque: i32,
}

impl Client {
    /// Connects with a 5 s read timeout.
    pub fn connect(addr: SocketAddr) -> Self {
        Self::from_stream(TcpStream::connect(addr).expect("connect"))
    }

    /// A client over an already connected stream (5 s read timeout).
    pub fn from_stream(stream: TcpStream) -> Self {
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.set_nodelay(true).unwrap();
        Client { stream, codec: RemotingCodec::new(1 << 30), buf: BytesMut::new(), next_opaque: 1 }
    }

    /// Writes one command as it is.
    pub fn send(&mut self, cmd: &RemotingCommand) {
        let mut out = BytesMut::new();
        encode_frame(cmd, &mut out).unwrap();
        self.stream.write_all(&out).unwrap();
    }

    /// Writes raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// Sends a request with a fresh opaque and reads the next frame, which must be its
    /// response: any other frame (an answer to a oneway request, a stray opaque) fails the test.
    pub fn call(&mut self, mut cmd: RemotingCommand) -> RemotingCommand {
        cmd.opaque = self.next_opaque;
        self.next_opaque += 1;
        self.send(&cmd);
        let frame = self.read_frame().expect("connection closed while waiting for a response");
        assert_eq!(
            (frame.opaque, frame.is_response()),
            (cmd.opaque, true),
            "expected the response to opaque {} (code {}), got frame {frame:?}",
            cmd.opaque,
            cmd.code
        );
        frame
    }

    /// Reads the next frame; `None` when the server closed the connection (or on timeout).
    pub fn read_frame(&mut self) -> Option<RemotingCommand> {
        match self.read_frame_within(Duration::from_secs(5)) {
            Incoming::Frame(frame) => Some(frame),
            Incoming::Closed | Incoming::Silent => None,
        }
    }

    /// Reads the next frame, waiting at most `within`.
    pub fn read_frame_within(&mut self, within: Duration) -> Incoming {
        let deadline = Instant::now() + within;
        loop {
            if let Some(frame) = self.codec.decode(&mut self.buf).expect("server sent a bad frame") {
                return Incoming::Frame(frame);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Incoming::Silent;
            }
            self.stream.set_read_timeout(Some(left)).unwrap();
            let mut chunk = [0u8; 64 * 1024];
            let read = self.stream.read(&mut chunk);
            self.stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            match read {
                Ok(0) => return Incoming::Closed,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    return Incoming::Silent
                }
                Err(_) => return Incoming::Closed,
            }
        }
    }

    /// Asserts that the server sends nothing for `within` and keeps the connection open.
    pub fn expect_silence(&mut self, within: Duration) {
        match self.read_frame_within(within) {
            Incoming::Silent => {}
            Incoming::Frame(frame) => panic!("expected no frame, got {frame:?}"),
            Incoming::Closed => panic!("expected no frame, but the server closed the connection"),
        }
    }

    /// Reads the raw bytes of the next frame (length prefix included).
    pub fn read_raw_frame(&mut self) -> Vec<u8> {
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).unwrap();
        let mut rest = vec![0u8; u32::from_be_bytes(len) as usize];
        self.stream.read_exact(&mut rest).unwrap();
        [len.to_vec(), rest].concat()
    }

    /// True when the server closes this connection within `within`.
    pub fn closed_by_server(&mut self, within: Duration) -> bool {
        self.stream.set_read_timeout(Some(within)).unwrap();
        let mut byte = [0u8; 1];
        // One read: after a reset has been reported once, a second read would see end of file.
        let closed = match self.stream.read(&mut byte) {
            Ok(n) => n == 0,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        };
        self.stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        closed
    }

    /// GET_ROUTEINFO_BY_TOPIC as a 5.x client (standard JSON); the parsed body or the code.
    pub fn route(&mut self, topic: &str) -> Result<Value, i32> {
        let resp = self.call(route_request(topic, 479));
        if resp.code != 0 {
            return Err(resp.code);
        }
        Ok(serde_json::from_slice(resp.body.as_deref().expect("route body")).expect("standard json route"))
    }

    /// GET_BROKER_CLUSTER_INFO, parsed leniently (it has bare numeric keys).
    pub fn cluster_info(&mut self) -> Value {
        let resp = self.call(RemotingCommand::request(106, None));
        assert_eq!(resp.code, 0);
        parse_lenient(resp.body.as_deref().unwrap())
    }

    /// Registers `broker` and returns the response.
    pub fn register(&mut self, broker: &Broker) -> RemotingCommand {
        self.call(broker.register_request())
    }

    /// Unregisters `broker` and returns the response.
    pub fn unregister(&mut self, broker: &Broker) -> RemotingCommand {
        self.call(broker.identity_request(104))
    }
}

/// Parses JSON that may have bare numeric keys.
pub fn parse_lenient(body: &[u8]) -> Value {
    serde_json::from_slice(&quote_bare_keys(body)).expect("lenient json")
}

/// A GET_ROUTEINFO_BY_TOPIC request with the given client version.
pub fn route_request(topic: &str, version: i32) -> RemotingCommand {
    let mut cmd = RemotingCommand::request(105, Some(ExtFields::new().with("topic", topic)));
    cmd.version = version;
    cmd
}

/// One broker instance and what it registers.
#[derive(Debug, Clone)]
pub struct Broker {
    pub cluster: String,
    pub name: String,
    pub id: i64,
    pub addr: String,
    pub ha_addr: String,
    /// (topic, perm, queues)
    pub topics: Vec<(String, i32, i32)>,
    pub data_version: DataVersion,
    pub enable_acting_master: Option<bool>,
    pub heartbeat_timeout_ms: Option<u64>,
    pub zone: Option<String>,
    pub version: i32,
}

impl Broker {
    /// A 5.x broker (enableActingMaster=false) with no topics.
    pub fn new(cluster: &str, name: &str, id: i64, addr: &str) -> Self {
        Broker {
            cluster: cluster.into(),
            name: name.into(),
            id,
            addr: addr.into(),
            ha_addr: format!("{addr}-ha"),
            topics: Vec::new(),
            data_version: DataVersion { counter: 1, state_version: 0, timestamp: 1_700_000_000_000 },
            enable_acting_master: Some(false),
            heartbeat_timeout_ms: None,
            zone: None,
            version: 479,
        }
    }

    /// Sets the topics (perm 6, 8 queues each).
    pub fn topics(mut self, names: &[&str]) -> Self {
        self.topics = names.iter().map(|n| (n.to_string(), 6, 8)).collect();
        self
    }

    /// Bumps the data version counter (a topic-config change).
    pub fn bump(mut self) -> Self {
        self.data_version.counter += 1;
        self
    }

    /// The RegisterBrokerBody JSON.
    pub fn body_json(&self) -> Vec<u8> {
        let table: serde_json::Map<String, Value> = self
            .topics
            .iter()
            .map(|(t, perm, q)| {
                (t.clone(), json!({"attributes":{},"order":false,"perm":perm,"readQueueNums":q,"topicFilterType":"SINGLE_TAG","topicName":t,"topicSysFlag":0,"writeQueueNums":q}))
            })
            .collect();
        let dv = &self.data_version;
        let body = json!({
            "filterServerList": [],
            "topicConfigSerializeWrapper": {
                "dataVersion": {"counter": dv.counter, "stateVersion": dv.state_version, "timestamp": dv.timestamp},
                "topicConfigTable": table,
                "topicQueueMappingDetailMap": {},
                "topicQueueMappingInfoMap": {}
            }
        });
        serde_json::to_vec(&body).unwrap()
    }

    /// REGISTER_BROKER as a 5.x broker sends it (with bodyCrc32).
    pub fn register_request(&self) -> RemotingCommand {
        let body = self.body_json();
        let mut ext = ExtFields::new()
            .with("brokerName", &self.name)
            .with("brokerAddr", &self.addr)
            .with("clusterName", &self.cluster)
            .with("haServerAddr", &self.ha_addr)
            .with("brokerId", self.id.to_string())
            .with("compressed", "false")
            .with("bodyCrc32", body_crc32(&body).to_string());
        if let Some(eam) = self.enable_acting_master {
            ext.insert("enableActingMaster", eam.to_string());
        }
        if let Some(ms) = self.heartbeat_timeout_ms {
            ext.insert("heartbeatTimeoutMillis", ms.to_string());
        }
        if let Some(zone) = &self.zone {
            ext.insert("__ZONE_NAME", zone);
        }
        let mut cmd = RemotingCommand::request(103, Some(ext)).with_body(body);
        cmd.version = self.version;
        cmd
    }

    /// A request with the identity fields (UNREGISTER_BROKER, QUERY_DATA_VERSION, ...).
    pub fn identity_request(&self, code: i32) -> RemotingCommand {
        let ext = ExtFields::new()
            .with("brokerName", &self.name)
            .with("brokerAddr", &self.addr)
            .with("clusterName", &self.cluster)
            .with("brokerId", self.id.to_string());
        RemotingCommand::request(code, Some(ext))
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

/// The address map of the BrokerData named `name` in a parsed route.
pub fn route_addrs(route: &Value, name: &str) -> Value {
    route["brokerDatas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["brokerName"] == name)
        .map(|b| b["brokerAddrs"].clone())
        .unwrap_or(Value::Null)
}

/// The QueueData of broker `name` in a parsed route.
pub fn route_queue(route: &Value, name: &str) -> Value {
    route["queueDatas"].as_array().unwrap().iter().find(|q| q["brokerName"] == name).cloned().unwrap_or(Value::Null)
}
