//! Controller peers in this process: a cluster of 1, 3 or 5 servers with the controller
//! embedded, each on a pre-bound 127.0.0.1 controller port and an HTTP port, with short Raft timings; peers can
//! be stopped and restarted from their state directories on the same port.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use namesrv::protocol::controller::response::MetadataResponse;
use namesrv::protocol::RemotingCommand;
use namesrv::settings::{ControllerMode, Settings};
use namesrv_client::ConnectOptions;

use crate::client::Client;
use crate::server::{eventually, temp_dir, Topology};
use crate::TestServer;

/// Settings of one test peer: controller embedded, short Raft timings and sweeps.
pub fn peer_settings(dir: &std::path::Path, peers: &str, self_id: &str) -> Settings {
    let mut s = Topology::ONE_THREAD.settings();
    s.state.kv_config_path = dir.join("kvConfig.json").display().to_string();
    s.state.config_store_path = dir.join("namesrv.properties").display().to_string();
    let c = &mut s.controller;
    c.controller_mode = ControllerMode::Embedded;
    c.controller_group = "g1".into();
    c.controller_peers = peers.into();
    c.controller_self_id = self_id.into();
    c.controller_raft_heartbeat_ms = 100;
    c.controller_raft_election_timeout_min_ms = 500;
    c.controller_raft_election_timeout_max_ms = 1000;
    c.controller_leader_lease_ms = 400;
    c.controller_election_warm_up_ms = 1_000;
    c.controller_write_timeout_ms = 2000;
    c.controller_scan_inactive_master_interval_ms = 200;
    s
}

/// A cluster of controller peers (`n0`, `n1`, ...).
pub struct ControllerCluster {
    /// The running peers (`None`: stopped).
    peers: Vec<Option<TestServer>>,
    /// Each peer's controller address.
    addrs: Vec<SocketAddr>,
    /// Each peer's settings (its state directory among them).
    settings: Vec<Settings>,
    /// How the cluster's own clients connect (TLS, credentials).
    client_options: ConnectOptions,
}

impl ControllerCluster {
    /// `n` peers with [`peer_settings`] edited by `edit`.
    pub fn start(n: usize, edit: impl Fn(&mut Settings)) -> Self {
        let listeners: Vec<std::net::TcpListener> =
            (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("bind")).collect();
        let addrs: Vec<SocketAddr> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
        let peers: String = addrs.iter().enumerate().map(|(i, a)| format!("n{i}-{a};")).collect();
        let settings: Vec<Settings> = (0..n)
            .map(|i| {
                let mut s = peer_settings(&temp_dir(), &peers, &format!("n{i}"));
                edit(&mut s);
                s
            })
            .collect();
        let peers = listeners.into_iter().zip(&settings).map(|(l, s)| Some(Self::serve(s.clone(), l))).collect();
        ControllerCluster { peers, addrs, settings, client_options: ConnectOptions::default() }
    }

    /// The cluster whose own clients ([`ControllerCluster::client`], metadata, leader) connect
    /// as `options` say: over TLS, signing with credentials.
    pub fn with_client(self, options: ConnectOptions) -> Self {
        ControllerCluster { client_options: options, ..self }
    }

    fn serve(settings: Settings, controller: std::net::TcpListener) -> TestServer {
        let standalone = settings.controller.controller_mode == ControllerMode::Standalone;
        let namesrv = (!standalone).then(|| std::net::TcpListener::bind("127.0.0.1:0").expect("bind"));
        let http = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        TestServer::start_listeners(settings, namesrv, Some(controller), Some(http))
    }

    /// How many peers the cluster has.
    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    /// Peer `i`'s controller address.
    pub fn addr(&self, i: usize) -> SocketAddr {
        self.addrs[i]
    }

    /// Every controller address, `;`-separated, as brokers' `controllerAddr`.
    pub fn controller_addr(&self) -> String {
        self.addrs.iter().map(SocketAddr::to_string).collect::<Vec<_>>().join(";")
    }

    /// Peer `i`'s server (its NameServer port, its settings), while it runs.
    pub fn server(&self, i: usize) -> &TestServer {
        self.peers[i].as_ref().expect("peer running")
    }

    /// Peer `i`'s HTTP endpoint (`/metrics`, `/api/v1`), while it runs.
    pub fn http(&self, i: usize) -> SocketAddr {
        self.server(i).http_addr.expect("every peer serves HTTP")
    }

    /// Peer `i`'s state directory.
    pub fn state_dir(&self, i: usize) -> PathBuf {
        PathBuf::from(&self.settings[i].state.kv_config_path).parent().unwrap().to_owned()
    }

    /// Stops peer `i` (its connections close, its state stays).
    pub fn stop(&mut self, i: usize) {
        self.peers[i] = None;
    }

    /// Starts peer `i` again from its state directory, on its port.
    pub fn restart(&mut self, i: usize) {
        self.peers[i] = None;
        let listener = std::net::TcpListener::bind(self.addrs[i]).expect("rebind the peer's port");
        self.peers[i] = Some(Self::serve(self.settings[i].clone(), listener));
    }

    /// Whether peer `i` runs.
    pub fn running(&self, i: usize) -> bool {
        self.peers[i].is_some()
    }

    /// CONTROLLER_GET_METADATA_INFO from peer `i`, or `None` when it does not answer.
    pub fn metadata(&self, i: usize) -> Option<MetadataResponse> {
        let mut client = Client::connect_with(self.addrs[i], &self.client_options).ok()?;
        let answer = client.try_call(RemotingCommand::request(1005, None)).ok()?;
        Some(MetadataResponse::read(&answer))
    }

    /// The peer that says it leads (and serves), among the running ones.
    pub fn leader(&self) -> Option<usize> {
        (0..self.len()).filter(|i| self.running(*i)).find(|i| self.metadata(*i).is_some_and(|m| m.is_leader))
    }

    /// Waits up to `within` for a serving leader.
    pub fn wait_leader(&self, within: Duration) -> usize {
        let mut found = None;
        assert!(
            eventually(within, || {
                found = self.leader();
                found.is_some()
            }),
            "no controller leader within {within:?}"
        );
        found.unwrap()
    }

    /// A client connected to peer `i`'s controller port.
    pub fn client(&self, i: usize) -> Client {
        Client::connect_with(self.addrs[i], &self.client_options).expect("connect to a controller peer")
    }
}
