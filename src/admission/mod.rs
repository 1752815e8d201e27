//! The one admission layer in front of every service, whichever port a request came in on. A
//! connection's slot and its share of the frame and reply budgets are taken at accept and as
//! bytes arrive (`crate::listen`, `crate::peers`, the connection's codec and flow); every request
//! then passes the [`Gate`]: access control (`crate::acl`) as the answering service describes the
//! request ([`Guard`]), the transport rules (`rules`: admin requests over TLS, a broker's address
//! on its peer's IP), and the pace of costly requests per source address. A service owns its
//! codes and says what each is; the gate applies the same checks to all.

pub mod rules;

use std::sync::Arc;
use std::time::Instant;

use ipnet::IpNet;

use crate::acl::verify::{Access, Denied};
use crate::acl::{Acl, Caller};
use crate::origin::Origin;
use crate::peers::PeerRates;
use crate::protocol::RemotingCommand;
use crate::settings::addr::parse_nets;
use crate::settings::Settings;
use rules::TransportRules;

/// What a service says of one request, for admission.
#[derive(Debug, Clone, Copy)]
pub struct Guard {
    /// Who may send it, from which protection level, and how a signed one must look.
    pub access: Access,
    /// An admin request (state changes, configuration): over TLS only where the rules say so.
    pub admin: bool,
    /// The field announcing the sender's own broker address, held to the peer's IP where the
    /// rules say so.
    pub announced_addr: Option<&'static str>,
    /// It changes the service's state beyond what brokers send (a configuration change,
    /// cleaning, an election an admin designates): with access control off, taken from
    /// loopback and the admin networks only (protected mode).
    pub changes_service: bool,
}

/// The checks every request passes before a service handles it.
#[derive(Debug)]
pub struct Gate {
    /// Access control, when on.
    acl: Option<Arc<Acl>>,
    /// Where requests that change a service may come from while access control is off,
    /// besides loopback.
    admin_networks: Vec<IpNet>,
    /// How signed requests must arrive.
    rules: TransportRules,
    /// Each source address's pace of costly requests.
    pacing: PeerRates,
}

impl Gate {
    /// A gate with access control `acl` (when on), the rules and pace `settings` give.
    pub fn new(acl: Option<Arc<Acl>>, settings: &Settings) -> Self {
        let per_second = settings.limits.costly_requests_per_second_per_peer;
        // Checked when the settings were validated.
        let admin_networks = parse_nets(&settings.controller.controller_admin_networks).unwrap_or_default();
        Gate {
            acl,
            admin_networks,
            rules: TransportRules::of(settings),
            pacing: PeerRates::new(per_second, per_second.saturating_mul(2)),
        }
    }

    /// A gate that admits everything at once (no access control, no pace): for tests and tools.
    pub fn open() -> Self {
        Gate { acl: None, admin_networks: Vec::new(), rules: TransportRules::default(), pacing: PeerRates::new(0, 0) }
    }

    /// Access control, when on.
    pub fn acl(&self) -> Option<&Arc<Acl>> {
        self.acl.as_ref()
    }

    /// Whether a request `guard` describes is checked at all: where it is not, it may skip the
    /// whole request's decoding (the route lane reads such queries straight off their frames).
    pub fn checks(&self, guard: &Guard) -> bool {
        self.acl.as_ref().is_some_and(|acl| acl.protects(guard.access.protection))
    }

    /// Admits `req` from `origin`, which `guard` describes: who signed it when its code is
    /// protected (unchecked otherwise), and that it arrived as the rules require. A refusal is
    /// counted and logged (rate-limited).
    pub fn admit(&self, origin: &Origin, req: &RemotingCommand, guard: &Guard) -> Result<Caller, Denied> {
        if self.acl.is_none() && guard.changes_service {
            self.protected_mode(origin, req)?;
        }
        let Some(acl) = self.acl.as_ref().filter(|acl| acl.protects(guard.access.protection)) else {
            return Ok(Caller::Unchecked);
        };
        let checked = acl
            .verify(origin, req, &guard.access)
            .and_then(|account| self.rules.check(origin, req, guard).map(|()| account));
        checked.map(Caller::Verified).inspect_err(|denied| acl.refused(origin.peer, req, denied.reason(), denied))
    }

    /// With access control off, a request that changes a service is taken from loopback and the
    /// admin networks only (as Redis's protected mode does): no unauthenticated host elsewhere
    /// turns on unclean elections or cleans a group.
    fn protected_mode(&self, origin: &Origin, req: &RemotingCommand) -> Result<(), Denied> {
        let peer = origin.peer.ip().to_canonical();
        if peer.is_loopback() || self.admin_networks.iter().any(|net| net.contains(&peer)) {
            return Ok(());
        }
        Err(Denied::ProtectedMode { code: req.code, peer })
    }

    /// Waits for this source address's turn at a costly request (its own pace: a peer
    /// pipelining them waits on its own connection, others keep theirs).
    pub async fn pace(&self, origin: &Origin) {
        let wait = self.pacing.take(origin.peer.ip(), Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}
