//! The RocketMQ 5 controller (Java's `controller` module, embedded in the NameServer with
//! `enableControllerInNamesrv=true` or standalone as `mqcontroller`): assigns broker ids, elects
//! broker masters and tracks in-sync replicas, replicated over the controller peers with Raft.
//!
//! The replicated state machine and the liveness table are the pure `namesrv-controller-core`
//! crate; here `raft` replicates its events (openraft: log, state machine, peer links). The
//! [`Controller`] actor runs on a thread of its own with openraft's tasks: it serves requests
//! only as the leader whose first commit of its term is applied (`leader`), one write in
//! flight (`writes`), and elects new masters when a master's connection closes or its
//! heartbeats stop (`elections`). It needs nothing of the NameServer's registry.

pub mod config;
mod elections;
mod figures;
mod leader;
pub mod messages;
pub mod options;
pub mod overview;
pub mod raft;
mod speakers;
#[cfg(test)]
mod timing;
mod writes;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use actix::prelude::*;
use tracing::{error, info};

use crate::clock::Clock;
use crate::logged_handler;
use crate::mailbox::Mailbox;
use crate::metrics::Metrics;
use crate::notifier::NotifierHandle;
use crate::origin::ConnId;
use crate::peers::PeerKey;
use crate::settings::Settings;
use leader::RaftView;
use namesrv_controller_core::liveness::LiveTable;
use namesrv_controller_core::ownership::Owners;
pub use options::ControllerOptions;
use raft::auth::PeerAuth;
use raft::log::{LogStore, StoreError};
use raft::machine::Machine;
use raft::network::{PeerNet, PeerSecurity};
use raft::Raft;
use writes::{Committing, Pending};

/// The controller's address, counting queued messages.
pub type ControllerHandle = Mailbox<Controller>;

/// This peer's Raft handle once it runs: incoming peer frames are served on it directly.
pub type SharedRaft = Arc<OnceLock<Raft>>;

/// What start-up reads from the controller's state directory before anything is bound.
pub struct ControllerStore {
    log: LogStore,
    machine: Machine,
    /// This peer's signing key and the keys it pinned.
    pub auth: Arc<PeerAuth>,
}

impl ControllerStore {
    /// Loads the log, vote and snapshot from `options.store_dir` (a corrupt file stops start-up).
    pub fn open(options: &ControllerOptions) -> Result<ControllerStore, StoreError> {
        let log = LogStore::open(&options.store_dir)?;
        let machine = Machine::open(&options.store_dir, log.io())?;
        check_membership(options, log.last_membership().or_else(|| machine.snapshot_membership()))?;
        let secret = options.peer_secret_file.as_deref().map(raft::auth::read_secret).transpose()?;
        let auth = PeerAuth::open(&options.store_dir, secret.as_deref())?;
        info!(dir = %options.store_dir.display(), entries = log.len(), "controller state loaded");
        Ok(ControllerStore { log, machine, auth })
    }
}

/// Refuses a group on disk whose voters are not the configured peers: membership is static, and
/// initializing openraft with another set would form a second group beside the first.
fn check_membership(options: &ControllerOptions, stored: Option<BTreeMap<u64, raft::Peer>>) -> Result<(), StoreError> {
    let Some(stored) = stored else { return Ok(()) };
    let configured = raft::members(&options.peers);
    if stored.keys().eq(configured.keys()) {
        return Ok(());
    }
    let names = |peers: &BTreeMap<u64, raft::Peer>| {
        let mut names: Vec<String> = peers.values().map(|p| p.to_string()).collect();
        names.sort();
        names.join(";")
    };
    Err(StoreError::Membership {
        dir: options.store_dir.clone(),
        stored: names(&stored),
        configured: names(&configured),
    })
}

/// Why this peer's Raft did not start.
#[derive(Debug, thiserror::Error)]
enum RaftStartError {
    /// The Raft timings do not make a valid configuration.
    #[error("raft configuration: {0}")]
    Config(#[from] openraft::ConfigError),
    /// The Raft core could not start (its storage failed).
    #[error("raft: {0}")]
    Fatal(#[from] openraft::error::Fatal<u64>),
    /// The group could not be formed with the configured peers.
    #[error("raft membership: {0}")]
    Initialize(Box<openraft::error::RaftError<u64, openraft::error::InitializeError<u64, raft::Peer>>>),
}

/// The controller actor of one peer.
pub struct Controller {
    /// The settings this peer runs with (its controller keys change at runtime: `config`).
    settings: Settings,
    /// What the settings give the controller.
    options: ControllerOptions,
    /// The Raft handle, once `started` has made it.
    raft: Option<Raft>,
    /// The same, for the dispatcher's peer frames.
    shared: SharedRaft,
    /// The applied tables (shared with openraft's state machine).
    machine: Machine,
    /// The log, until it is handed to openraft.
    log: Option<LogStore>,
    /// Which brokers are alive, as this node sees it.
    live: LiveTable<ConnId>,
    /// Which connection speaks for which replica, as this node sees it.
    owners: Owners<ConnId>,
    /// How many requests each source has waiting.
    pending_from: HashMap<PeerKey, usize>,
    /// What Raft last said about this node.
    role: RaftView,
    /// The term this node leads and has its first commit applied in: it serves then only.
    ready_term: Option<u64>,
    /// A term whose first commit is being awaited.
    readying: Option<u64>,
    /// Requests and elections waiting for their turn.
    queue: VecDeque<Pending>,
    /// The write being committed.
    in_flight: Option<Committing>,
    /// Groups with a controller-triggered election queued or under way.
    electing: HashSet<String>,
    /// Groups whose master this serving node saw go, why and when (until an election ends).
    lost: HashMap<String, (messages::ElectionCause, Instant)>,
    /// When this node started: no controller-triggered election before it has heard every broker.
    started_at: Instant,
    /// The server stops: nothing is served or elected any more.
    retiring: bool,
    /// Sends NOTIFY_BROKER_ROLE_CHANGED.
    notifier: NotifierHandle,
    /// Its own address, for the continuations of its async work.
    me: Option<Addr<Controller>>,
    /// The timer of the next liveness deadline: when it fires, and its task.
    wake: Option<(Instant, tokio::task::JoinHandle<()>)>,
    /// TLS and credentials of the links to the other peers.
    security: PeerSecurity,
    /// This peer's signing key and the keys it pinned.
    auth: Arc<PeerAuth>,
    /// Where the Raft figures are exported.
    metrics: Arc<Metrics>,
    /// Where it reads the time: every deadline, lease and warm-up is measured on it.
    clock: Arc<dyn Clock>,
}

impl Controller {
    /// Starts the controller on `arbiter` (its own thread: openraft's tasks run there too).
    pub fn start(
        (settings, options): (Settings, ControllerOptions),
        store: ControllerStore,
        notifier: NotifierHandle,
        arbiter: &ArbiterHandle,
        metrics: Arc<Metrics>,
        (security, clock): (PeerSecurity, Arc<dyn Clock>),
    ) -> (ControllerHandle, SharedRaft) {
        let shared = SharedRaft::default();
        let live = LiveTable::new(options.max_live_brokers);
        let controller = Controller {
            settings,
            raft: None,
            shared: shared.clone(),
            machine: store.machine,
            log: Some(store.log),
            live,
            owners: Owners::default(),
            pending_from: HashMap::new(),
            role: RaftView::default(),
            ready_term: None,
            readying: None,
            queue: VecDeque::new(),
            in_flight: None,
            electing: HashSet::new(),
            lost: HashMap::new(),
            started_at: clock.instant(),
            retiring: false,
            notifier,
            me: None,
            wake: None,
            security,
            auth: store.auth,
            metrics: metrics.clone(),
            options,
            clock,
        };
        let addr = Controller::start_in_arbiter(arbiter, |_| controller);
        (Mailbox::new(addr, "controller", metrics), shared)
    }

    /// Makes the Raft node of this peer and joins the configured group.
    fn start_raft(&mut self, ctx: &mut Context<Self>) {
        let Some(log) = self.log.take() else { return };
        let o = &self.options;
        let members = raft::members(&o.peers);
        let links = (self.security.clone(), self.auth.clone());
        let net = PeerNet::new(&o.group, o.self_id(), &o.self_name, members.clone(), links);
        let (config, self_id, machine) = (o.raft_config(), o.self_id(), self.machine.clone());
        let made = async move {
            let config = Arc::new(config.validate()?);
            let raft = Raft::new(self_id, config, net, log, machine).await?;
            match raft.initialize(members).await {
                Ok(()) => {}
                Err(openraft::error::RaftError::APIError(openraft::error::InitializeError::NotAllowed(_))) => {}
                Err(e) => return Err(RaftStartError::Initialize(Box::new(e))),
            }
            Ok(raft)
        };
        ctx.spawn(made.into_actor(self).map(|made: Result<Raft, RaftStartError>, this, ctx| match made {
            Ok(raft) => this.raft_started(raft, ctx),
            Err(error) => {
                error!(%error, "controller raft did not start");
                ctx.stop();
            }
        }));
    }

    fn raft_started(&mut self, raft: Raft, ctx: &mut Context<Self>) {
        info!(peer = %self.options.self_name, id = self.options.self_id(), "controller raft started");
        let _ = self.shared.set(raft.clone());
        let figures = (self.metrics.clone(), raft::members(&self.options.peers));
        leader::watch_metrics(&raft, ctx.address(), figures, self.clock.clone());
        self.raft = Some(raft);
        self.schedule_sweep(ctx);
    }

    /// Now, on the controller's clock.
    fn now(&self) -> Instant {
        self.clock.instant()
    }

    /// The next sweep, one interval from now: the interval is read each time, so that
    /// UPDATE_CONTROLLER_CONFIG's `scanInactiveMasterInterval` applies from the next sweep on.
    fn schedule_sweep(&mut self, ctx: &mut Context<Self>) {
        ctx.run_later(self.options.sweep_interval, |this, ctx| {
            this.sweep();
            this.schedule_sweep(ctx);
        });
    }
}

impl Actor for Controller {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.me = Some(ctx.address());
        self.start_raft(ctx);
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        if let Some((_, timer)) = self.wake.take() {
            timer.abort();
        }
        info!("controller stopped");
    }
}

logged_handler!(Controller);
