//! Links to the other controller peers (openraft's `RaftNetwork`): one remoting connection per
//! link (openraft makes one link per replication stream and per vote round, and calls each in
//! turn), made lazily with the one remoting client, dropped after any failure (a cancelled call
//! may leave half a frame) and made again on the next call. Addresses come from the configured
//! peers, not from the membership, so moving a peer is a configuration change. Every frame is
//! signed with this peer's key and every answer checked against the callee's ([`PeerAuth`]);
//! links use TLS when the controller port does, and sign every frame with the peer account's
//! credentials when access control is on ([`PeerSecurity`]).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::protocol::signature::SessionCredentials;
use namesrv_client::{ClientError, Conn, ConnectOptions};
use openraft::error::{
    Fatal, NetworkError, RPCError, RaftError, RemoteError, ReplicationClosed, StreamingError, Timeout, Unreachable,
};
use openraft::network::{RPCOption, RPCTypes, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse};
use openraft::storage::Snapshot;
use openraft::{OptionalSend, Vote};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::auth::PeerAuth;
use super::wire::{PeerHeader, SnapshotRequest};
use super::{Peer, RaftTypes};
use crate::protocol::controller::ControllerRequestCode as Code;
use crate::protocol::RemotingCommand;

/// The credentials peer frames are signed with, looked up at each connect (the accounts file
/// they come from may be reloaded); `None` from it: unsigned.
pub type PeerCredentials = Arc<dyn Fn() -> Option<SessionCredentials> + Send + Sync>;

/// How links to the other peers protect themselves.
#[derive(Clone, Default)]
pub struct PeerSecurity {
    /// TLS with this client configuration (the controller port serves TLS).
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Sign every frame (access control is on).
    pub credentials: Option<PeerCredentials>,
}

impl std::fmt::Debug for PeerSecurity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerSecurity")
            .field("tls", &self.tls.is_some())
            .field("signed", &self.credentials.is_some())
            .finish()
    }
}

/// What every link shares: the group, this peer's id, the peers' addresses, their security.
#[derive(Debug, Clone)]
pub struct PeerNet {
    group: String,
    self_id: u64,
    self_name: String,
    peers: Arc<BTreeMap<u64, Peer>>,
    security: PeerSecurity,
    auth: Arc<PeerAuth>,
}

impl PeerNet {
    /// Links from `self_name` (node `self_id`) of `group` to `peers`, protected as `security`
    /// says, their frames signed by `auth`.
    pub fn new(
        group: &str,
        self_id: u64,
        self_name: &str,
        peers: BTreeMap<u64, Peer>,
        (security, auth): (PeerSecurity, Arc<PeerAuth>),
    ) -> Self {
        let (group, self_name, peers) = (group.to_owned(), self_name.to_owned(), Arc::new(peers));
        PeerNet { group, self_id, self_name, peers, security, auth }
    }
}

impl RaftNetworkFactory<RaftTypes> for PeerNet {
    type Network = PeerLink;

    async fn new_client(&mut self, target: u64, node: &Peer) -> PeerLink {
        let peer = self.peers.get(&target).cloned().unwrap_or_else(|| node.clone());
        let header = PeerHeader { group: self.group.clone(), from: self.self_name.clone(), to: peer.name.clone() };
        let (security, auth) = (self.security.clone(), self.auth.clone());
        PeerLink { self_id: self.self_id, target, addr: peer.addr, header, security, auth, conn: None }
    }
}

/// One link to one peer.
pub struct PeerLink {
    self_id: u64,
    target: u64,
    addr: String,
    header: PeerHeader,
    security: PeerSecurity,
    auth: Arc<PeerAuth>,
    conn: Option<Conn>,
}

/// Why a call did not get the callee's answer.
enum CallError {
    Unreachable(ClientError),
    Timeout,
    Network(String),
}

impl PeerLink {
    /// Sends `rpc` as `code` and reads the callee's `Result<T, E>`, all within `wait`.
    async fn call<Q: Serialize, T: DeserializeOwned, E: DeserializeOwned>(
        &mut self,
        code: Code,
        rpc: &Q,
        wait: Duration,
    ) -> Result<Result<T, E>, CallError> {
        let body = serde_json::to_vec(rpc).map_err(|e| CallError::Network(e.to_string()))?;
        let mut ext = self.header.to_ext();
        let frame_sig = self.auth.sign_frame(&mut ext, self.header.route(code), &body, super::auth::wall_ms());
        let request = RemotingCommand::request(code as i32, Some(ext)).with_body(body);
        let outcome = tokio::time::timeout(wait, self.exchange(request, wait)).await;
        let answer = match outcome {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => {
                self.conn = None;
                return Err(e);
            }
            Err(_) => {
                self.conn = None;
                return Err(CallError::Timeout);
            }
        };
        if answer.code != 0 {
            self.conn = None;
            return Err(CallError::Network(format!("peer answered code {}: {:?}", answer.code, answer.remark)));
        }
        let (callee, me) = (self.header.to.as_str(), self.header.from.as_str());
        if let Err(e) = self.auth.check_answer(&answer, (callee, me), &frame_sig) {
            self.conn = None;
            return Err(CallError::Network(e.to_string()));
        }
        serde_json::from_slice(answer.body.as_deref().unwrap_or_default())
            .map_err(|e| CallError::Network(e.to_string()))
    }

    async fn exchange(&mut self, request: RemotingCommand, wait: Duration) -> Result<RemotingCommand, CallError> {
        if self.conn.is_none() {
            let credentials = self.security.credentials.as_ref().and_then(|get| get());
            let tls = self.security.tls.clone();
            let options = ConnectOptions { timeout: wait, credentials, tls, ..ConnectOptions::default() };
            self.conn = Some(Conn::connect(&self.addr, &options).await.map_err(CallError::Unreachable)?);
        }
        let Some(conn) = self.conn.as_mut() else { return Err(CallError::Timeout) };
        conn.call(request).await.map_err(|e| CallError::Network(e.to_string()))
    }

    fn rpc_error<E: std::error::Error>(
        &self,
        e: CallError,
        action: RPCTypes,
        wait: Duration,
    ) -> RPCError<u64, Peer, E> {
        match e {
            CallError::Unreachable(e) => RPCError::Unreachable(Unreachable::new(&e)),
            CallError::Timeout => {
                RPCError::Timeout(Timeout { action, id: self.self_id, target: self.target, timeout: wait })
            }
            CallError::Network(e) => RPCError::Network(NetworkError::new(&std::io::Error::other(e))),
        }
    }
}

impl RaftNetwork<RaftTypes> for PeerLink {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<RaftTypes>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<u64>, RPCError<u64, Peer, RaftError<u64>>> {
        let wait = option.soft_ttl();
        match self.call(Code::RaftAppendEntries, &rpc, wait).await {
            Ok(answer) => answer.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e))),
            Err(e) => Err(self.rpc_error(e, RPCTypes::AppendEntries, wait)),
        }
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<u64>,
        option: RPCOption,
    ) -> Result<VoteResponse<u64>, RPCError<u64, Peer, RaftError<u64>>> {
        let wait = option.soft_ttl();
        match self.call(Code::RaftVote, &rpc, wait).await {
            Ok(answer) => answer.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e))),
            Err(e) => Err(self.rpc_error(e, RPCTypes::Vote, wait)),
        }
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote<u64>,
        snapshot: Snapshot<RaftTypes>,
        _cancel: impl Future<Output = ReplicationClosed> + OptionalSend + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<u64>, StreamingError<RaftTypes, Fatal<u64>>> {
        let wait = option.hard_ttl();
        let rpc = SnapshotRequest { vote, meta: snapshot.meta, data: *snapshot.snapshot };
        match self.call::<_, SnapshotResponse<u64>, Fatal<u64>>(Code::RaftInstallSnapshot, &rpc, wait).await {
            Ok(answer) => answer.map_err(|e| StreamingError::RemoteError(RemoteError::new(self.target, e))),
            Err(CallError::Unreachable(e)) => Err(StreamingError::Unreachable(Unreachable::new(&e))),
            Err(CallError::Timeout) => Err(StreamingError::Timeout(Timeout {
                action: RPCTypes::InstallSnapshot,
                id: self.self_id,
                target: self.target,
                timeout: wait,
            })),
            Err(CallError::Network(e)) => Err(StreamingError::Network(NetworkError::new(&std::io::Error::other(e)))),
        }
    }
}
