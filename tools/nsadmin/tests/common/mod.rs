//! Harness for nsadmin's tests: the real namesrv on a pre-bound 127.0.0.1:0 listener (in this
//! process, one actix system per server), a blocking client to register brokers with, and a
//! runner for the nsadmin binary.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::BytesMut;
use namesrv::dispatch::body_crc32;
use namesrv::protocol::codec::encode_frame;
use namesrv::protocol::{ExtFields, RemotingCodec, RemotingCommand};
use namesrv::settings::Settings;
use serde_json::{json, Value};
use tokio_util::codec::Decoder;

/// A fresh directory for one server's files.
pub fn temp_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "nsadmin-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A running namesrv; stopped when dropped.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Where its HTTP endpoint listens, when it has one.
    pub http_addr: Option<SocketAddr>,
    /// The connections brokers registered over: kept open, since a closed connection removes
    /// the brokers that registered over it.
    broker_conns: Mutex<Vec<Client>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// A server with loopback test settings edited by `edit`.
    pub fn with(edit: impl FnOnce(&mut Settings)) -> TestServer {
        Self::start_with(edit, None)
    }

    /// A server with its HTTP endpoint on a pre-bound loopback port.
    pub fn with_http() -> TestServer {
        let http = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the HTTP port");
        Self::start_with(|_| {}, Some(http))
    }

    fn start_with(edit: impl FnOnce(&mut Settings), http: Option<std::net::TcpListener>) -> TestServer {
        let dir = temp_dir();
        let mut settings = Settings::default();
        settings.listen.bind_address = "127.0.0.1".into();
        settings.listen.listen_port = 0;
        settings.state.kv_config_path = dir.join("kvConfig.json").display().to_string();
        settings.state.config_store_path = dir.join("namesrv.properties").display().to_string();
        // No HTTP endpoint: tests run many servers at once.
        settings.observe.http_listen = String::new();
        edit(&mut settings);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        listener.set_nonblocking(true).expect("nonblocking");
        let http_addr = http.as_ref().map(|l| l.local_addr().expect("HTTP addr"));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            actix::System::new().block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                let stop = async {
                    let _ = rx.await;
                };
                namesrv::server::serve_with(settings, listener, stop, None, http).await.expect("server runs");
            });
        });
        TestServer { addr, http_addr, broker_conns: Mutex::default(), shutdown: Some(tx), thread: Some(thread) }
    }

    /// A server with default test settings.
    pub fn start() -> TestServer {
        Self::with(|_| {})
    }

    /// `host:port` for `-n`.
    pub fn ns(&self) -> String {
        self.addr.to_string()
    }

    /// A new blocking client.
    pub fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// Registers `broker` over a connection of its own that stays open while the server runs.
    pub fn register(&self, broker: &Broker) {
        let mut conn = self.client();
        conn.register(broker);
        self.broker_conns.lock().expect("lock").push(conn);
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

/// A blocking RocketMQ client over one connection; every read has a 10 s deadline.
pub struct Client {
    stream: TcpStream,
    codec: RemotingCodec,
    buf: BytesMut,
    next_opaque: i32,
}

impl Client {
    /// Connects to `addr`.
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        Client { stream, codec: RemotingCodec::new(1 << 30), buf: BytesMut::new(), next_opaque: 1 }
    }

    /// Sends `cmd` and returns its answer; any other frame fails the test.
    pub fn call(&mut self, mut cmd: RemotingCommand) -> RemotingCommand {
        cmd.opaque = self.next_opaque;
        self.next_opaque += 1;
        let mut out = BytesMut::new();
        encode_frame(&cmd, &mut out).expect("encode");
        self.stream.write_all(&out).expect("write");
        loop {
            if let Some(frame) = self.codec.decode(&mut self.buf).expect("server sent a bad frame") {
                assert_eq!((frame.opaque, frame.is_response()), (cmd.opaque, true), "unexpected frame {frame:?}");
                return frame;
            }
            let mut chunk = [0u8; 64 * 1024];
            let n = self.stream.read(&mut chunk).expect("read within 10 s");
            assert!(n > 0, "server closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Registers `broker`; the answer must be SUCCESS.
    pub fn register(&mut self, broker: &Broker) {
        let answer = self.call(broker.register_request());
        assert_eq!(answer.code, 0, "register {}: {:?}", broker.name, answer.remark);
    }

    /// Sends a request with `fields`; returns the answer.
    pub fn request(&mut self, code: i32, fields: &[(&str, &str)]) -> RemotingCommand {
        self.call(RemotingCommand::request(code, Some(fields.iter().copied().collect::<ExtFields>())))
    }
}

/// A broker and what it registers.
#[derive(Debug, Clone)]
pub struct Broker {
    /// Cluster name.
    pub cluster: String,
    /// Group name.
    pub name: String,
    /// Broker id (0 the master).
    pub id: i64,
    /// `ip:port` it registers.
    pub addr: String,
    /// (topic, queues, perm)
    pub topics: Vec<(String, i32, i32)>,
}

impl Broker {
    /// A broker with no topics.
    pub fn new(cluster: &str, name: &str, id: i64, addr: &str) -> Broker {
        Broker { cluster: cluster.into(), name: name.into(), id, addr: addr.into(), topics: Vec::new() }
    }

    /// Topics with 8 queues, perm RW. A first registration must not carry exactly one topic:
    /// Java's NameServer (and namesrv) refuses it.
    pub fn topics<S: AsRef<str>>(mut self, names: &[S]) -> Broker {
        self.topics = names.iter().map(|n| (n.as_ref().to_owned(), 8, 6)).collect();
        self
    }

    /// REGISTER_BROKER as a 5.x broker sends it (with every field the rocketmq-rust NameServer
    /// requires: `attributes`, `mappingDataVersion`).
    pub fn register_request(&self) -> RemotingCommand {
        let table: serde_json::Map<String, Value> = self
            .topics
            .iter()
            .map(|(t, q, perm)| {
                let config = json!({"attributes":{},"order":false,"perm":perm,"readQueueNums":q,
                    "topicFilterType":"SINGLE_TAG","topicName":t,"topicSysFlag":0,"writeQueueNums":q});
                (t.clone(), config)
            })
            .collect();
        let body = serde_json::to_vec(&json!({
            "filterServerList": [],
            "topicConfigSerializeWrapper": {
                "dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": 1_700_000_000_000i64},
                "mappingDataVersion": {"counter": 0, "stateVersion": 0, "timestamp": 0},
                "topicConfigTable": table,
                "topicQueueMappingDetailMap": {},
                "topicQueueMappingInfoMap": {}
            }
        }))
        .expect("body");
        let ext = ExtFields::new()
            .with("brokerName", &self.name)
            .with("brokerAddr", &self.addr)
            .with("clusterName", &self.cluster)
            .with("haServerAddr", format!("{}-ha", self.addr))
            .with("brokerId", self.id.to_string())
            .with("compressed", "false")
            .with("enableActingMaster", "false")
            .with("bodyCrc32", body_crc32(&body).to_string());
        RemotingCommand::request(103, Some(ext)).with_body(body)
    }
}

/// Runs nsadmin with `args`, credentials and NameServer addresses from the environment removed.
pub fn nsadmin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nsadmin"))
        .args(args)
        .env_remove("NSADMIN_ACCESS_KEY")
        .env_remove("NSADMIN_SECRET_KEY")
        .env_remove("NSADMIN_SECURITY_TOKEN")
        .env_remove("NSADMIN_NAMESRV_ADDR")
        .env_remove("NAMESRV_ADDR")
        .output()
        .expect("run nsadmin")
}

/// stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The exit code, with stdout and stderr in the message when asserting on it fails.
pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// Asserts exit code `expected` and returns stdout.
pub fn expect_exit(out: &Output, expected: i32) -> String {
    assert_eq!(code(out), expected, "stdout:\n{}\nstderr:\n{}", stdout(out), stderr(out));
    stdout(out)
}

/// stdout parsed as one JSON document; the exit code must be 0.
pub fn json_ok(out: &Output) -> Value {
    let text = expect_exit(out, 0);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not json ({e}): {text}"))
}

/// An address nothing listens on (bound, then closed: only ever connected to, never re-bound).
pub fn dead_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    addr.to_string()
}
