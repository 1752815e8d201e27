//! The test broker's loop (see `controller_broker`): one task on the broker's thread, ticking
//! every heartbeat interval, with 1008 pushes read off its own port and handed in.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::BytesMut;
use namesrv::protocol::command::FLAG_ONEWAY;
use namesrv::protocol::controller::body::{ElectMasterResponseBody, SyncStateSet};
use namesrv::protocol::controller::header::*;
use namesrv::protocol::controller::response::{MasterFields, MetadataResponse, NextBrokerIdResponse};
use namesrv::protocol::{RemotingCodec, RemotingCommand};
use namesrv_client::{Conn, ConnectOptions};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio_util::codec::Decoder;

use crate::broker::Broker;
use crate::broker_state::{BrokerConfig, RoleSeen, Shared};

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// How the broker connects to controllers: 1 s timeouts, its credentials and TLS when given.
fn options(config: &BrokerConfig) -> ConnectOptions {
    ConnectOptions {
        timeout: Duration::from_secs(1),
        credentials: config.credentials.clone(),
        tls: config.tls.clone(),
        ..ConnectOptions::default()
    }
}

/// Runs the broker until it is killed.
pub(crate) async fn run(config: BrokerConfig, addr: String, listener: std::net::TcpListener, shared: Arc<Shared>) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("broker listener");
    let (tx, mut notifies) = mpsc::unbounded_channel();
    let accepting = tokio::spawn(accept_notifies(listener, tx));
    let mut tick = tokio::time::interval(config.heartbeat_interval);
    let mut b = Looper { config, addr, shared, leader: None, conns: HashMap::new(), ns: None, opaque: 1 };
    let mut registered = false;
    let mut last_sync = Instant::now();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            Some(cmd) = notifies.recv() => {
                if !b.shared.hung.load(Ordering::Relaxed) {
                    b.on_notify(cmd).await;
                }
            }
        }
        if b.shared.killed.load(Ordering::Relaxed) {
            break;
        }
        if b.shared.hung.load(Ordering::Relaxed) {
            continue;
        }
        if !registered {
            registered = b.register().await;
            continue;
        }
        b.heartbeat().await;
        if last_sync.elapsed() >= b.config.sync_period {
            last_sync = Instant::now();
            b.ns_register().await;
            registered = b.poll().await;
            b.alter().await;
        }
    }
    accepting.abort();
}

/// Reads every frame pushed to the broker's port (the notifier sends one, then closes).
async fn accept_notifies(listener: tokio::net::TcpListener, tx: mpsc::UnboundedSender<RemotingCommand>) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut bytes = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut bytes)).await;
            let mut buf = BytesMut::from(&bytes[..]);
            while let Ok(Some(cmd)) = RemotingCodec::default().decode(&mut buf) {
                let _ = tx.send(cmd);
            }
        });
    }
}

struct Looper {
    config: BrokerConfig,
    addr: String,
    shared: Arc<Shared>,
    /// The leader's address, when known.
    leader: Option<String>,
    /// One connection to each controller, as Java's remoting client keeps one channel per
    /// address: heartbeats and the leader's requests share it.
    conns: HashMap<String, Conn>,
    /// The NameServer connection (registrations live as long as it).
    ns: Option<Conn>,
    opaque: i32,
}

impl Looper {
    fn id(&self) -> i64 {
        self.shared.lock().id.unwrap_or(-1)
    }

    /// The connection to `controller`, made when there is none.
    async fn conn(&mut self, controller: &str) -> Option<&mut Conn> {
        if !self.conns.contains_key(controller) {
            let conn = Conn::connect(controller, &options(&self.config)).await.ok()?;
            self.conns.insert(controller.to_owned(), conn);
        }
        self.conns.get_mut(controller)
    }

    /// 1005 to each controller until one names a leader.
    async fn find_leader(&mut self) -> Option<()> {
        for controller in self.config.controllers.clone() {
            let request = RemotingCommand::request(1005, None);
            self.shared.lock().sent.push(request.clone());
            let Some(conn) = self.conn(&controller).await else { continue };
            let Ok(answer) = conn.call(request).await else {
                self.conns.remove(&controller);
                continue;
            };
            if let Some(leader) = MetadataResponse::read(&answer).controller_leader_address.filter(|a| !a.is_empty()) {
                self.leader = Some(leader);
                return Some(());
            }
        }
        None
    }

    /// A call to the leader; a failure or CONTROLLER_NOT_LEADER forgets it.
    async fn call(
        &mut self,
        code: i32,
        ext: namesrv::protocol::ExtFields,
        body: Option<Vec<u8>>,
    ) -> Option<RemotingCommand> {
        if self.leader.is_none() {
            self.find_leader().await?;
        }
        let mut request = RemotingCommand::request(code, Some(ext));
        if let Some(body) = body {
            request = request.with_body(body);
        }
        self.shared.lock().sent.push(request.clone());
        let leader = self.leader.clone()?;
        let answered = self.conn(&leader).await?.call(request).await;
        match answered {
            Ok(answer) if answer.code == 2007 => {
                self.leader = None;
                None
            }
            Ok(answer) => Some(answer),
            Err(_) => {
                self.leader = None;
                self.conns.remove(&leader);
                None
            }
        }
    }

    /// 1012 → 1013 (first start) → 1003, then 1002 when no master lives.
    async fn register(&mut self) -> bool {
        let (cluster, name) = (self.config.cluster.clone(), self.config.name.clone());
        let known = self.shared.lock().id;
        let id = match known {
            Some(id) => id,
            None => {
                let ask = GetNextBrokerIdHeader { cluster_name: cluster.clone(), broker_name: name.clone() };
                let Some(answer) = self.call(1012, ask.to_ext(), None).await else { return false };
                let Some(next) = NextBrokerIdResponse::read(&answer).next_broker_id else { return false };
                let apply = ApplyBrokerIdHeader {
                    cluster_name: cluster.clone(),
                    broker_name: name.clone(),
                    applied_broker_id: next,
                    register_check_code: format!("{};{}", self.addr, now_ms()),
                };
                match self.call(1013, apply.to_ext(), None).await {
                    Some(answer) if answer.code == 0 => next,
                    _ => return false,
                }
            }
        };
        self.shared.lock().id = Some(id);
        let reg = RegisterToControllerHeader {
            cluster_name: cluster,
            broker_name: name,
            broker_id: id,
            broker_address: self.addr.clone(),
            invoke_time: Some(now_ms()),
        };
        let Some(answer) = self.call(1003, reg.to_ext(), None).await.filter(|a| a.code == 0) else { return false };
        let set = answer.body.as_deref().and_then(|b| SyncStateSet::decode(b).ok()).unwrap_or_default();
        let master = MasterFields::read(&answer);
        match master.master_broker_id {
            Some(m) => self.switch(m, master.master_epoch.unwrap_or(0), set).await,
            None => {
                self.heartbeat().await;
                self.elect().await;
            }
        }
        true
    }

    /// 1002 for itself; SUCCESS or MASTER_STILL_EXIST switch roles.
    async fn elect(&mut self) {
        let elect = ElectMasterHeader {
            cluster_name: self.config.cluster.clone(),
            broker_name: self.config.name.clone(),
            broker_id: self.id(),
            designate_elect: false,
            invoke_time: Some(now_ms()),
        };
        let Some(answer) = self.call(1002, elect.to_ext(), None).await else { return };
        if answer.code != 0 && answer.code != 2011 {
            return;
        }
        let master = MasterFields::read(&answer);
        let body = answer.body.as_deref().and_then(|b| ElectMasterResponseBody::decode(b).ok()).unwrap_or_default();
        let set = SyncStateSet { ids: body.sync_state_set, epoch: master.sync_state_set_epoch.unwrap_or(0) };
        if let Some(m) = master.master_broker_id {
            self.switch(m, master.master_epoch.unwrap_or(0), set).await;
        }
    }

    /// Takes `master` at `epoch` when newer than what it knows; re-registers with the NameServer.
    async fn switch(&mut self, master: i64, epoch: i32, set: SyncStateSet) {
        {
            let mut s = self.shared.lock();
            if epoch < s.epoch || (epoch == s.epoch && s.master == Some(master)) {
                if epoch == s.epoch && set.epoch > s.sync_epoch {
                    (s.sync_set, s.sync_epoch) = (set.ids, set.epoch);
                }
                return;
            }
            let is_master = s.id == Some(master);
            (s.epoch, s.master, s.sync_set, s.sync_epoch) = (epoch, Some(master), set.ids, set.epoch);
            s.roles.push(RoleSeen { epoch, master, is_master });
        }
        self.ns_register().await;
    }

    /// BROKER_HEARTBEAT to every controller.
    async fn heartbeat(&mut self) {
        let epoch = self.shared.lock().epoch;
        let id = self.id();
        let header = ControllerHeartbeatHeader {
            cluster_name: self.config.cluster.clone(),
            broker_addr: self.addr.clone(),
            broker_name: self.config.name.clone(),
            broker_id: Some(id),
            epoch: Some(epoch),
            max_offset: Some(self.shared.max_offset.load(Ordering::Relaxed)),
            confirm_offset: Some(0),
            heartbeat_timeout_mills: Some(self.config.heartbeat_timeout_ms),
            election_priority: Some(self.config.priority),
        };
        for controller in self.config.controllers.clone() {
            self.opaque += 1;
            let mut beat = RemotingCommand::request(904, Some(header.to_ext())).with_opaque(self.opaque);
            beat.flag = FLAG_ONEWAY;
            self.shared.lock().sent.push(beat.clone());
            let sent = match self.conn(&controller).await {
                Some(conn) => conn.send(beat).await.is_ok(),
                None => false,
            };
            if !sent {
                self.conns.remove(&controller);
            }
        }
    }

    /// 1004: a newer master epoch switches roles (no master: 1002); unknown group: 1003 again.
    async fn poll(&mut self) -> bool {
        let ask = GetReplicaInfoHeader { broker_name: self.config.name.clone() };
        let Some(answer) = self.call(1004, ask.to_ext(), None).await else { return true };
        if answer.code == 2008 {
            return false;
        }
        if answer.code != 0 {
            return true;
        }
        let master = MasterFields::read(&answer);
        let set = answer.body.as_deref().and_then(|b| SyncStateSet::decode(b).ok()).unwrap_or_default();
        let epoch = master.master_epoch.unwrap_or(0);
        let known = self.shared.lock().epoch;
        match master.master_broker_id {
            Some(m) => self.switch(m, epoch, set).await,
            None if epoch > known || known < 0 => self.elect().await,
            None => {}
        }
        true
    }

    /// As master, 1001 when the caught-up set differs from the known one.
    async fn alter(&mut self) {
        let (id, epoch, known, sync_epoch, master) = {
            let s = self.shared.lock();
            (s.id, s.epoch, s.sync_set.clone(), s.sync_epoch, s.master)
        };
        let Some(id) = id.filter(|id| master == Some(*id)) else { return };
        let mut wanted = self.shared.in_sync.lock().unwrap().clone();
        wanted.insert(id);
        if wanted == known {
            return;
        }
        let header = AlterSyncStateSetHeader {
            broker_name: self.config.name.clone(),
            master_broker_id: id,
            master_epoch: epoch,
            invoke_time: Some(now_ms()),
        };
        let body = SyncStateSet { ids: wanted, epoch: sync_epoch }.encode();
        let Some(answer) = self.call(1001, header.to_ext(), Some(body)).await.filter(|a| a.code == 0) else { return };
        if let Some(set) = answer.body.as_deref().and_then(|b| SyncStateSet::decode(b).ok()) {
            let mut s = self.shared.lock();
            if set.epoch > s.sync_epoch {
                (s.sync_set, s.sync_epoch) = (set.ids, set.epoch);
            }
        }
    }

    /// A role change pushed by the controller: taken when newer.
    async fn on_notify(&mut self, cmd: RemotingCommand) {
        self.shared.lock().notified.push(cmd.clone());
        let master = MasterFields::read(&cmd);
        let set = cmd.body.as_deref().and_then(|b| SyncStateSet::decode(b).ok()).unwrap_or_default();
        if let Some(m) = master.master_broker_id {
            self.switch(m, master.master_epoch.unwrap_or(0), set).await;
        }
    }

    /// REGISTER_BROKER with the NameServer as the role it believes: brokerId 0 as master,
    /// its own id as slave, `stateVersion` its master epoch.
    async fn ns_register(&mut self) {
        let Some(namesrv) = self.config.namesrv else { return };
        let (id, master, epoch) = {
            let s = self.shared.lock();
            (s.id, s.master, s.epoch)
        };
        let (Some(id), Some(master)) = (id, master) else { return };
        let ns_id = if master == id { 0 } else { id };
        let mut broker = Broker::new(&self.config.cluster, &self.config.name, ns_id, &self.addr).topics(&["T1", "T2"]);
        broker.data_version.state_version = i64::from(epoch);
        if self.ns.is_none() {
            let plain = ConnectOptions { timeout: Duration::from_secs(1), ..ConnectOptions::default() };
            self.ns = Conn::connect(&namesrv.to_string(), &plain).await.ok();
        }
        let Some(conn) = self.ns.as_mut() else { return };
        if conn.call(broker.register_request()).await.is_err() {
            self.ns = None;
        }
    }
}
