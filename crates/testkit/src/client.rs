//! The test client: a strict, panicking layer over namesrv-client's [`BlockingConn`] — a call
//! fails the test on any frame but its answer — with the raw writes and deadline reads that
//! hostile-input and push tests need, and route helpers.

use std::net::SocketAddr;
use std::time::Duration;

use namesrv::protocol::json::lenient::quote_bare_keys;
use namesrv::protocol::{ExtFields, RemotingCommand};
use namesrv_client::blocking::BlockingConn;
use namesrv_client::{ClientError, ConnectOptions};
use serde_json::Value;

use crate::broker::Broker;

pub use namesrv_client::Incoming;

/// How long a test waits for a frame, a write or a connect.
const WAIT: Duration = Duration::from_secs(5);

/// A blocking RocketMQ client over one connection.
pub struct Client {
    conn: BlockingConn,
    next_opaque: i32,
}

impl Client {
    /// Connects over plain TCP (5 s for the connect, every write and every read).
    pub fn connect(addr: SocketAddr) -> Self {
        Self::with_timeout(addr, WAIT)
    }

    /// Connects over plain TCP with `timeout` for the connect, every write and every read.
    pub fn with_timeout(addr: SocketAddr, timeout: Duration) -> Self {
        Self::connect_with(addr, &ConnectOptions { timeout, ..ConnectOptions::default() }).expect("connect")
    }

    /// Connects over plain TCP from `source` (another loopback address plays another host).
    pub fn connect_from(source: &str, addr: SocketAddr) -> Self {
        let source = Some(source.parse().expect("a source address"));
        Self::connect_with(addr, &ConnectOptions { timeout: WAIT, source, ..ConnectOptions::default() })
            .expect("connect")
    }

    /// Connects as `options` say (TLS, credentials, another timeout).
    pub fn connect_with(addr: SocketAddr, options: &ConnectOptions) -> Result<Self, ClientError> {
        Ok(Client { conn: BlockingConn::connect(&addr.to_string(), options)?, next_opaque: 1 })
    }

    /// This end's address.
    pub fn local_addr(&self) -> SocketAddr {
        self.conn.local_addr()
    }

    /// The leaf certificate the server presented (TLS connections only).
    pub fn server_certificate(&self) -> Vec<u8> {
        self.conn.server_certificates().first().expect("a TLS connection").to_vec()
    }

    /// Writes one command as it is (its own opaque).
    pub fn send(&mut self, cmd: &RemotingCommand) {
        self.conn.send(cmd.clone()).expect("send");
    }

    /// Writes raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.conn.send_raw(bytes).expect("send raw bytes");
    }

    /// Writes raw bytes, reporting a failure (a server that stopped reading or closed).
    pub fn try_send_raw(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        self.conn.send_raw(bytes)
    }

    /// Queues `cmds` with fresh opaques and writes them at once; returns their opaques.
    pub fn send_batch(&mut self, cmds: &[RemotingCommand]) -> Vec<i32> {
        let opaques = cmds.iter().map(|cmd| self.queue(cmd.clone())).collect();
        self.conn.flush().expect("send a batch");
        opaques
    }

    /// Closes the writing half: the server reads end of input.
    pub fn shutdown_write(&mut self) {
        self.conn.shutdown_write().expect("shut down the writing half");
    }

    fn queue(&mut self, mut cmd: RemotingCommand) -> i32 {
        cmd.opaque = self.next_opaque;
        self.next_opaque += 1;
        self.conn.feed_as_is(cmd).expect("encode");
        self.next_opaque - 1
    }

    /// Sends a request with a fresh opaque and reads the next frame, which must be its
    /// response: any other frame (an answer to a oneway request, a stray opaque) fails the test.
    pub fn call(&mut self, cmd: RemotingCommand) -> RemotingCommand {
        let code = cmd.code;
        self.try_call(cmd).unwrap_or_else(|e| panic!("no response to code {code}: {e}"))
    }

    /// [`Client::call`], with a closed connection, a timeout or a broken frame as an error.
    pub fn try_call(&mut self, cmd: RemotingCommand) -> Result<RemotingCommand, ClientError> {
        let code = cmd.code;
        let opaque = self.queue(cmd);
        self.conn.flush()?;
        match self.conn.next_frame_within(WAIT)? {
            Incoming::Frame(frame) => {
                assert_eq!(
                    (frame.opaque, frame.is_response()),
                    (opaque, true),
                    "expected the response to opaque {opaque} (code {code}), got frame {frame:?}"
                );
                Ok(frame)
            }
            Incoming::Closed => Err(ClientError::Closed),
            Incoming::Silent => Err(ClientError::Timeout(WAIT.as_millis())),
        }
    }

    /// Reads the next frame; `None` when the server closed the connection (or on timeout).
    pub fn read_frame(&mut self) -> Option<RemotingCommand> {
        match self.read_frame_within(WAIT) {
            Incoming::Frame(frame) => Some(frame),
            Incoming::Closed | Incoming::Silent => None,
        }
    }

    /// Reads the next frame, waiting at most `within`; a broken frame fails the test.
    pub fn read_frame_within(&mut self, within: Duration) -> Incoming {
        self.conn.next_frame_within(within).expect("server sent a bad frame")
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
        self.conn.next_raw_frame().expect("a whole frame").to_vec()
    }

    /// True when the server closes this connection within `within` (whatever it sends first
    /// is read past; a frame that arrives in time means it did not close).
    pub fn closed_by_server(&mut self, within: Duration) -> bool {
        match self.conn.next_frame_within(within) {
            Ok(Incoming::Closed) => true,
            Ok(Incoming::Frame(_) | Incoming::Silent) => false,
            Err(e) => e.is_closed(),
        }
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

    /// Sends a request with `code` and `fields`; returns the answer.
    pub fn request(&mut self, code: i32, fields: &[(&str, &str)]) -> RemotingCommand {
        self.call(RemotingCommand::request(code, Some(fields.iter().copied().collect::<ExtFields>())))
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
