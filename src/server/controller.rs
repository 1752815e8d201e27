//! The controller beside (or instead of) the NameServer: its state loaded before anything is
//! bound, its listener (this peer's port from `controller_peers`), its actor on a thread of its
//! own, and the service its port serves (behind the same admission gate, with the same framing,
//! budgets and timeouts as the NameServer port).

use std::io;
use std::sync::Arc;

use actix::Arbiter;
use thiserror::Error;
use tokio::net::TcpListener;
use tracing::info;

use crate::acl::accounts::Role;
use crate::controller::raft::network::{PeerCredentials, PeerSecurity};
use crate::settings::TlsMode;

use crate::admission::Gate;
use crate::clock::{Clock, SystemClock};
use crate::controller::messages::Retire;
use crate::controller::raft::log::StoreError;
use crate::controller::{Controller, ControllerHandle, ControllerOptions, ControllerStore, SharedRaft};
use crate::listen;
use crate::metrics::Metrics;
use crate::notifier::NotifierHandle;
use crate::origin::ConnId;
use crate::service::controller::{ControllerService, Front};
use crate::service::Stamp;
use crate::settings::{addr, Settings};

/// Binds this peer's controller address: `controller_bind_address` (else `bind_address`) and
/// the port of this peer in `controller_peers`.
pub fn bind_controller(settings: &Settings) -> io::Result<Option<TcpListener>> {
    let Some(me) = settings.controller.self_peer().filter(|_| settings.controller.enabled()) else {
        return Ok(None);
    };
    let bad =
        |e: String| io::Error::new(io::ErrorKind::InvalidInput, format!("bad controller address {}: {e}", me.addr));
    let (_, port) = addr::split_host_port(&me.addr).map_err(|e| bad(e.to_string()))?;
    let host = match settings.controller.controller_bind_address.trim() {
        "" => settings.listen.bind_address.clone(),
        host => host.to_owned(),
    };
    let shown = addr::join_host_port(&host, port);
    let addrs = addr::resolve(&host, port).map_err(|e| bad(e.to_string()))?;
    Ok(Some(TcpListener::from_std(listen::bind_addrs(&shown, addrs)?)?))
}

/// The controller's state, read before binding.
pub(super) fn load(settings: &Settings) -> Result<Option<(ControllerOptions, ControllerStore)>, StoreError> {
    let Some(options) = ControllerOptions::from_settings(settings) else { return Ok(None) };
    let store = ControllerStore::open(&options)?;
    Ok(Some((options, store)))
}

/// A running controller: its thread, its Raft, and the service its port serves.
pub(super) struct RunningController {
    arbiter: Arbiter,
    raft: SharedRaft,
    /// What the controller port's connections are served by.
    pub(super) service: ControllerService,
    /// The controller actor, for the status API.
    pub(super) handle: ControllerHandle,
}

impl RunningController {
    /// Starts the controller actor on a new thread, and its service behind `gate`.
    pub(super) fn start(
        (options, store): (ControllerOptions, ControllerStore),
        gate: &Arc<Gate>,
        notifier: NotifierHandle,
        settings: &Settings,
        metrics: Arc<Metrics>,
    ) -> Result<RunningController, PeerSecurityError> {
        let security = peer_security(settings, gate, options.peers.len())?;
        let arbiter = Arbiter::new();
        let peer_ips = settings.controller.controller_peer_addresses_only.then(|| options.peer_ips());
        let (group, self_name) = (options.group.clone(), options.self_name.clone());
        let peer_names = options.peers.iter().map(|p| p.name.clone()).filter(|name| *name != self_name).collect();
        let auth = store.auth.clone();
        info!(group = %group, peer = %self_name, peers = %options.peers_text(), "starting the controller");
        let started = (settings.clone(), options);
        let clocked = (security, Arc::new(SystemClock) as Arc<dyn Clock>);
        let (controller, raft) = Controller::start(started, store, notifier, &arbiter.handle(), metrics, clocked);
        let handle = controller.clone();
        let front = Front { controller, raft: raft.clone(), group, self_name, peer_ips, peer_names, auth };
        let service = ControllerService::new(front, gate.clone(), Stamp::of(settings));
        Ok(RunningController { arbiter, raft, service, handle })
    }

    /// Stops serving and electing, then Raft (leadership passes to another peer), before any
    /// connection closes: a stopping peer's own closes are no broker's loss.
    pub(super) async fn retire(&self) {
        if let Ok(Some(raft)) = self.handle.ask(Retire { conn: ConnId::SERVER }).await {
            let _ = raft.shutdown().await;
        }
    }

    /// Stops Raft, then the controller's thread.
    pub(super) async fn stop(self) {
        if let Some(raft) = self.raft.get() {
            let _ = raft.shutdown().await;
        }
        self.arbiter.stop();
        let _ = self.arbiter.join();
    }
}

/// Why the links to the other peers cannot be protected as the settings ask; start-up stops.
#[derive(Debug, Error)]
pub enum PeerSecurityError {
    /// Access control is on and the peer account is missing or not of role `peer`.
    #[error(
        "acl_enabled with {peers} controller peers: controller_peer_access_key must name an account of role peer in \
         the accounts file ({key:?} does not), which the peers sign their Raft frames with"
    )]
    NoPeerAccount { peers: usize, key: String },
    /// TLS is on and the peers' client configuration cannot be built.
    #[error("TLS between controller peers: {0}")]
    Tls(#[from] namesrv_client::tls::TlsConfigError),
    /// TLS is on and no CA file is configured or found.
    #[error("TLS between controller peers: no CA certificates: set controller_peer_tls_ca_file")]
    NoCa,
}

/// TLS when the controller port serves it (trusting `controller_peer_tls_ca_file`, else
/// `tls_client_ca_file`, else the system's CAs; presenting this server's certificate where a
/// peer asks for one), and signing with the peer account when access control is on.
fn peer_security(settings: &Settings, gate: &Gate, peers: usize) -> Result<PeerSecurity, PeerSecurityError> {
    let mut security = PeerSecurity::default();
    if let Some(acl) = gate.acl().filter(|_| peers > 1) {
        let key = settings.controller.controller_peer_access_key.trim().to_owned();
        if key.is_empty() || acl.credentials(&key, Role::Peer).is_none() {
            return Err(PeerSecurityError::NoPeerAccount { peers, key });
        }
        let acl = acl.clone();
        let credentials: PeerCredentials = Arc::new(move || acl.credentials(&key, Role::Peer));
        security.credentials = Some(credentials);
    }
    if settings.tls.tls_mode != TlsMode::Disabled {
        let tls = &settings.tls;
        let configured = [settings.controller.controller_peer_tls_ca_file.trim(), tls.tls_client_ca_file.trim()];
        let ca = match configured.into_iter().find(|p| !p.is_empty()) {
            Some(path) => std::path::PathBuf::from(path),
            None => namesrv_client::tls::system_ca_file().ok_or(PeerSecurityError::NoCa)?,
        };
        let identity = (std::path::Path::new(&tls.tls_cert_file), std::path::Path::new(&tls.tls_key_file));
        security.tls = Some(namesrv_client::tls::client_config(&ca, Some(identity))?);
    }
    Ok(security)
}
