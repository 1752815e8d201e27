//! Access control on the remoting port (off unless `acl_enabled`): the request codes
//! `acl_protect` names must carry RocketMQ session credentials, as Java's `AclClientRPCHook`,
//! mqadmin with an access key and rocketmq-rust's ACL hook send them, made by an account of the
//! accounts file whose role allows the code. Refusals answer NO_PERMISSION (16) with a remark
//! saying what was missing or wrong, and are logged at WARN, rate-limited.
//!
//! `accounts`: the accounts file; `verify`: levels, roles and the signature check. Which codes
//! are protected from which level, and which roles may send them, is each service's to say
//! ([`verify::Access`]); the admission layer (`crate::admission`) asks this gate on every port
//! alike. The table of accounts is swapped whole when the file changes or on SIGHUP (it is not
//! route state: no actor owns it); a file that does not load leaves the previous accounts in
//! force.

pub mod accounts;
pub mod verify;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;
use thiserror::Error;
use tracing::{error, info, warn};

use crate::filewatch::{self, Poke, ReloadCause, Timing};
use crate::limits::shown;
use crate::metrics::Metrics;
use crate::origin::Origin;
use crate::protocol::signature::{SessionCredentials, ACCESS_KEY};
use crate::protocol::RemotingCommand;
use crate::ratelog::RateLimit;
use crate::secret_file::warn_if_open_to_others;
use crate::settings::{AclProtect, Settings};
use accounts::{Account, Accounts, AccountsError, Role};
use verify::{check, presented_its_certificate, Access, Denied, Protection};

/// Who sent a request, as far as access control knows.
#[derive(Debug, Clone)]
pub enum Caller {
    /// The code is not protected (or access control is off): nothing was checked.
    Unchecked,
    /// Signed by this account, which may send the code.
    Verified(Arc<Account>),
}

impl Caller {
    /// The access key a broker registration is bound to: the signer's, when one was checked.
    pub fn binding(&self) -> Option<String> {
        match self {
            Caller::Unchecked => None,
            Caller::Verified(account) => Some(account.access_key.clone()),
        }
    }

    /// The access key an unregistration must match: any but an admin's (admins may remove any
    /// broker).
    pub fn binding_unless_admin(&self) -> Option<String> {
        self.binding().filter(|_| !matches!(self, Caller::Verified(a) if a.role == Role::Admin))
    }

    /// Whether it may act for broker `name` (a broker account lists the brokers it may).
    pub fn may_act_for(&self, name: &str) -> Result<(), Denied> {
        match self {
            Caller::Verified(account) if !account.may_act_for(name) => {
                Err(Denied::BrokerNotListed { key: shown(&account.access_key), broker: shown(name) })
            }
            _ => Ok(()),
        }
    }
}

/// Why access control could not start.
#[derive(Debug, Error)]
pub enum AclError {
    /// The accounts file does not load.
    #[error(transparent)]
    Accounts(#[from] AccountsError),
    /// The thread watching it cannot start.
    #[error("cannot watch the accounts file: {0}")]
    Watch(std::io::Error),
}

/// Access control: the accounts in force, the level `acl_protect` names, and the refusals'
/// log lines and counts.
#[derive(Debug)]
pub struct Acl {
    accounts: Arc<ArcSwap<Accounts>>,
    protect: AclProtect,
    warnings: RateLimit,
    metrics: Arc<Metrics>,
}

impl Acl {
    /// A gate over a fixed table of accounts (no file, no reload).
    pub fn new(accounts: Accounts, protect: AclProtect, metrics: Arc<Metrics>) -> Self {
        let accounts = Arc::new(ArcSwap::from_pointee(accounts));
        Acl { accounts, protect, warnings: RateLimit::for_peers(), metrics }
    }

    /// Loads `acl_accounts_file` (a bad file stops start-up) and watches it: re-read when it
    /// changes (every `security_reload_interval_ms`) and whenever the returned [`Poke`] is poked.
    pub fn start(settings: &Settings, metrics: Arc<Metrics>) -> Result<(Acl, Poke), AclError> {
        let path = PathBuf::from(&settings.acl.acl_accounts_file);
        let acl = Acl::new(Accounts::load(&path)?, settings.acl.acl_protect, metrics);
        warn_if_open_to_others(&path, "accounts file");
        info!(file = %path.display(), accounts = acl.accounts.load().len(), protect = %acl.protect, "access control on");
        let table = acl.accounts.clone();
        let timing = Timing::of(settings);
        let shown_path = path.display().to_string();
        let counted = acl.metrics.clone();
        let watched = vec![path.clone()];
        let reload = move |cause| {
            let loaded = Accounts::load(&path);
            counted.security_reload("accounts", loaded.is_ok());
            match loaded {
                Ok(accounts) => {
                    let requested = cause == ReloadCause::Requested;
                    let count = accounts.len();
                    table.store(Arc::new(accounts));
                    info!(file = %shown_path, accounts = count, requested, "accounts reloaded");
                }
                Err(error) => error!(%error, "accounts file not reloaded: the previous accounts stay in force"),
            }
        };
        let poke = filewatch::spawn("acl-reload", watched, timing, reload).map_err(AclError::Watch)?;
        Ok((acl, poke))
    }

    /// Whether requests protected so must carry credentials at the configured level.
    pub fn protects(&self, protection: Protection) -> bool {
        protection.at(self.protect)
    }

    /// Checks who signed `req` from `origin` and that the account may send it as `access`
    /// describes it ([`check`]), with its client certificate where the account is pinned to one.
    pub fn verify(&self, origin: &Origin, req: &RemotingCommand, access: &Access) -> Result<Arc<Account>, Denied> {
        let accounts = self.accounts.load();
        let account = check(&accounts, origin.peer.ip(), req, access)?;
        presented_its_certificate(account, origin.client_cert)?;
        Ok(account.clone())
    }

    /// The credentials of the account `access_key` as the accounts file holds them now, when it
    /// has role `role`: what a controller peer signs its Raft frames with.
    pub fn credentials(&self, access_key: &str, role: Role) -> Option<SessionCredentials> {
        let accounts = self.accounts.load();
        let account = accounts.get(access_key).filter(|a| a.role == role)?;
        let secret_key = account.secret().to_owned();
        Some(SessionCredentials { access_key: access_key.to_owned(), secret_key, security_token: None })
    }

    /// Counts and logs (rate-limited) a refused request; `why` is its remark.
    pub fn refused(&self, peer: SocketAddr, req: &RemotingCommand, reason: &'static str, why: &dyn std::fmt::Display) {
        self.metrics.acl_refusal(reason);
        if let Some(suppressed) = self.warnings.admit() {
            let access_key = req.ext(ACCESS_KEY).map_or_else(|| "-".to_owned(), shown);
            let (code, oneway) = (req.code, req.is_oneway());
            warn!(%peer, %access_key, code, oneway, reason, suppressed, "request refused by access control: {why}");
        }
    }
}
