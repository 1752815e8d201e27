//! The accounts file: who may sign requests, with which secret, in which role, from where.
//!
//! ```toml
//! allow = ["10.0.0.0/8"]            # optional: every signed request must come from here
//!
//! [[accounts]]
//! access_key = "ops"
//! secret_key = "a long random secret"
//! role = "admin"                    # admin | broker | client | peer
//!
//! [[accounts]]
//! access_key = "broker-a"
//! secret_key = "another secret"
//! role = "broker"
//! brokers = ["broker-a"]            # the broker names it may register; "*" for any
//! allow = ["10.1.2.0/24"]           # optional, this account only
//! ```
//!
//! Unlike Java's ACL 1.0 white lists, an `allow` list never lets a request in without a
//! signature: it only narrows where a signed request may come from.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ipnet::IpNet;

use crate::settings::addr::parse_net;
use serde::Deserialize;
use thiserror::Error;

use crate::origin::CertFingerprint;
use crate::persist::read_config_file;

/// The largest accounts file read (a FIFO or device is refused outright).
pub const MAX_ACCOUNTS_FILE_BYTES: u64 = 1024 * 1024;

/// What an account may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Every request code.
    Admin,
    /// What a broker sends about itself, for the brokers it lists, and the read-only codes.
    Broker,
    /// The read-only codes.
    Client,
    /// Another controller peer: the Raft codes of the controller port, nothing else.
    Peer,
}

impl Role {
    /// The name used in the accounts file.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Broker => "broker",
            Role::Client => "client",
            Role::Peer => "peer",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One account. Its `Debug` output leaves the secret out.
pub struct Account {
    /// Sent in the clear as `AccessKey`.
    pub access_key: String,
    secret_key: String,
    /// What it may do.
    pub role: Role,
    /// Broker names it may act for; `None`: any (`"*"`).
    brokers: Option<HashSet<String>>,
    /// Where its requests may come from; empty: anywhere the global list allows.
    allow: Vec<IpNet>,
    /// The client certificate its requests must arrive with (over TLS), when pinned: a replay
    /// of its signed requests over any other connection is refused.
    pub tls_identity: Option<CertFingerprint>,
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("access_key", &self.access_key)
            .field("role", &self.role)
            .field("brokers", &self.brokers)
            .field("allow", &self.allow)
            .field("tls_identity", &self.tls_identity)
            .finish_non_exhaustive()
    }
}

impl Account {
    /// The secret that keys its signatures.
    pub fn secret(&self) -> &str {
        &self.secret_key
    }

    /// True when it may act for broker `name`.
    pub fn may_act_for(&self, name: &str) -> bool {
        self.brokers.as_ref().is_none_or(|names| names.contains(name))
    }

    /// True when its requests may come from `ip`.
    pub fn allows(&self, ip: IpAddr) -> bool {
        allowed(&self.allow, ip)
    }
}

/// Every account, by access key, and the global allow list.
#[derive(Debug, Default)]
pub struct Accounts {
    by_key: HashMap<String, Arc<Account>>,
    allow: Vec<IpNet>,
}

impl Accounts {
    /// Reads and checks the accounts file: a regular file (a link to one is followed) of at
    /// most [`MAX_ACCOUNTS_FILE_BYTES`].
    pub fn load(path: &Path) -> Result<Accounts, AccountsError> {
        let read = |error| AccountsError::Read { path: path.into(), error };
        let bytes = read_config_file(path, MAX_ACCOUNTS_FILE_BYTES).map_err(read)?;
        let text =
            String::from_utf8(bytes).map_err(|e| read(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        Self::parse(&text, path)
    }

    /// Parses and checks accounts file text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Accounts, AccountsError> {
        let file: FileText = toml::from_str(text).map_err(|e| syntax(path, text, &e))?;
        let allow = file
            .allow
            .iter()
            .map(|entry| {
                parse_net(entry).ok_or_else(|| AccountsError::GlobalAllow { path: path.into(), entry: entry.clone() })
            })
            .collect::<Result<_, _>>()?;
        let mut by_key: HashMap<String, Arc<Account>> = HashMap::with_capacity(file.accounts.len());
        let mut first_index: HashMap<String, usize> = HashMap::new();
        for (i, text) in file.accounts.into_iter().enumerate() {
            let index = i + 1;
            let access_key = text.access_key.clone();
            let problem =
                |problem| AccountsError::Account { path: path.into(), index, access_key: access_key.clone(), problem };
            if let Some(first) = first_index.get(&access_key) {
                return Err(problem(AccountProblem::Duplicate(*first)));
            }
            let account = text.check().map_err(problem)?;
            first_index.insert(access_key.clone(), index);
            by_key.insert(access_key, Arc::new(account));
        }
        Ok(Accounts { by_key, allow })
    }

    /// The account of `access_key`.
    pub fn get(&self, access_key: &str) -> Option<&Arc<Account>> {
        self.by_key.get(access_key)
    }

    /// How many accounts there are.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// True when there are none (every protected request is then refused).
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// True when signed requests may come from `ip` at all (the global allow list).
    pub fn allows(&self, ip: IpAddr) -> bool {
        allowed(&self.allow, ip)
    }
}

/// An empty list allows every address; IPv4-mapped IPv6 peers (a dual-stack `::` listener)
/// match IPv4 entries.
fn allowed(list: &[IpNet], ip: IpAddr) -> bool {
    let ip = ip.to_canonical();
    list.is_empty() || list.iter().any(|net| net.contains(&ip))
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileText {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    accounts: Vec<AccountText>,
}

/// One `[[accounts]]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountText {
    access_key: String,
    secret_key: String,
    role: String,
    #[serde(default)]
    brokers: Option<Vec<String>>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    tls_identity: Option<String>,
}

impl AccountText {
    fn check(self) -> Result<Account, AccountProblem> {
        if self.access_key.trim().is_empty() {
            return Err(AccountProblem::EmptyAccessKey);
        }
        if self.secret_key.is_empty() {
            return Err(AccountProblem::EmptySecret);
        }
        let role = match self.role.trim().to_ascii_lowercase().as_str() {
            "admin" => Role::Admin,
            "broker" => Role::Broker,
            "client" => Role::Client,
            "peer" => Role::Peer,
            _ => return Err(AccountProblem::UnknownRole(self.role)),
        };
        let brokers = match (role, self.brokers) {
            (Role::Broker, None) => return Err(AccountProblem::NoBrokers),
            (Role::Broker, Some(names)) if names.is_empty() => return Err(AccountProblem::NoBrokers),
            (Role::Broker, Some(names)) if names.iter().any(|n| n == "*") => None,
            (Role::Broker, Some(names)) => Some(names.into_iter().collect()),
            (_, Some(_)) => return Err(AccountProblem::BrokersNotBroker(role)),
            (_, None) => None,
        };
        let allow = self
            .allow
            .iter()
            .map(|entry| parse_net(entry).ok_or_else(|| AccountProblem::BadAllow(entry.clone())))
            .collect::<Result<_, _>>()?;
        let tls_identity = match self.tls_identity {
            None => None,
            Some(text) => Some(CertFingerprint::parse(&text).ok_or(AccountProblem::BadTlsIdentity(text))?),
        };
        Ok(Account { access_key: self.access_key, secret_key: self.secret_key, role, brokers, allow, tls_identity })
    }
}

/// Why an accounts file was not loaded. Never shows a secret.
#[derive(Debug, Error)]
pub enum AccountsError {
    /// The file cannot be read.
    #[error("cannot read accounts file {}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    /// It is not TOML of the expected shape.
    #[error("accounts file {}, line {line}: {message}", path.display())]
    Syntax { path: PathBuf, line: usize, message: String },
    /// The global `allow` list holds something that is no address.
    #[error("accounts file {}: allow entry {entry:?} is not an address or CIDR block", path.display())]
    GlobalAllow { path: PathBuf, entry: String },
    /// One account is wrong.
    #[error("accounts file {}, account {index} (access_key {access_key:?}): {problem}", path.display())]
    Account { path: PathBuf, index: usize, access_key: String, problem: AccountProblem },
}

/// What is wrong with one account.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AccountProblem {
    /// `access_key` is empty.
    #[error("access_key is empty")]
    EmptyAccessKey,
    /// The access key appeared before, as account `0`.
    #[error("duplicate access_key (first defined by account {0})")]
    Duplicate(usize),
    /// `secret_key` is empty (Java's signer refuses an empty key too).
    #[error("secret_key is empty")]
    EmptySecret,
    /// `role` is not admin, broker, client or peer.
    #[error("unknown role {0:?} (admin, broker, client or peer)")]
    UnknownRole(String),
    /// A broker account lists no brokers.
    #[error("a broker account must list its brokers (\"*\" for any)")]
    NoBrokers,
    /// `brokers` on an account of another role.
    #[error("brokers applies to role broker only, not {0}")]
    BrokersNotBroker(Role),
    /// An `allow` entry is no address.
    #[error("allow entry {0:?} is not an address or CIDR block")]
    BadAllow(String),
    /// `tls_identity` is not a certificate fingerprint.
    #[error("tls_identity {0:?} is not \"sha256:\" and a certificate's 64 hex digits (openssl x509 -noout -fingerprint -sha256)")]
    BadTlsIdentity(String),
}

/// A TOML error as the line it is on and its message, without the source snippet that
/// `toml`'s own rendering adds (it could show a secret).
fn syntax(path: &Path, text: &str, error: &toml::de::Error) -> AccountsError {
    let newlines = |end: usize| text.as_bytes()[..end.min(text.len())].iter().filter(|b| **b == b'\n').count();
    let line = error.span().map_or(0, |span| newlines(span.start) + 1);
    AccountsError::Syntax { path: path.into(), line, message: error.message().to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Accounts, AccountsError> {
        Accounts::parse(text, Path::new("/etc/namesrv/accounts.toml"))
    }

    const GOOD: &str = r#"
    allow = ["127.0.0.0/8", "::1"]

    [[accounts]]
    access_key = "ops"
    secret_key = "s3cret-ops"
    role = "admin"

    [[accounts]]
    access_key = "broker-a"
    secret_key = "s3cret-b"
    role = "Broker"
    brokers = ["broker-a", "broker-b"]
    allow = ["10.1.2.0/24"]

    [[accounts]]
    access_key = "any-broker"
    secret_key = "x"
    role = "broker"
    brokers = ["*"]

    [[accounts]]
    access_key = "app"
    secret_key = "y"
    role = "client"
    "#;

    #[test]
    fn a_good_file_loads_every_account_with_its_role_brokers_and_addresses() {
        let accounts = parse(GOOD).unwrap();
        assert_eq!(accounts.len(), 4);
        let ops = accounts.get("ops").unwrap();
        assert_eq!((ops.role, ops.secret()), (Role::Admin, "s3cret-ops"));
        let broker = accounts.get("broker-a").unwrap();
        assert_eq!(broker.role, Role::Broker);
        assert!(broker.may_act_for("broker-b") && !broker.may_act_for("broker-c"));
        assert!(broker.allows("10.1.2.9".parse().unwrap()) && !broker.allows("10.1.3.9".parse().unwrap()));
        assert!(accounts.get("any-broker").unwrap().may_act_for("whatever"));
        assert!(ops.allows("192.0.2.1".parse().unwrap()), "no list of its own: any address");
        assert!(accounts.allows("127.0.0.1".parse().unwrap()) && accounts.allows("::1".parse().unwrap()));
        assert!(accounts.allows("::ffff:127.0.0.5".parse().unwrap()), "IPv4-mapped peers match IPv4 blocks");
        assert!(!accounts.allows("192.0.2.1".parse().unwrap()));
        assert!(accounts.get("nobody").is_none());
        assert!(parse("").unwrap().is_empty(), "an empty file is no accounts");
    }

    #[test]
    fn secrets_never_show_in_debug_output_or_errors() {
        let accounts = parse(GOOD).unwrap();
        let shown = format!("{accounts:?}");
        assert!(shown.contains("broker-a") && !shown.contains("s3cret"), "{shown}");
        let err = parse("[[accounts]]\naccess_key = \"k\"\nsecret_key = \"hunter2\"\nrole = \"admin\"\nbogus = 1\n")
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("line 5") && text.contains("bogus") && !text.contains("hunter2"), "{text}");
        let err = parse("[[accounts]]\naccess_key = \"k\"\nsecret_key = hunter2\n").unwrap_err().to_string();
        assert!(!err.contains("hunter2") && err.contains("line 3"), "{err}");
    }

    #[test]
    fn every_mistake_names_the_file_and_the_account() {
        let account = |body: &str| {
            format!(
                "[[accounts]]\naccess_key = \"first\"\nsecret_key = \"s\"\nrole = \"admin\"\n\n[[accounts]]\n{body}\n"
            )
        };
        let cases = [
            ("access_key = \"first\"\nsecret_key = \"t\"\nrole = \"admin\"", AccountProblem::Duplicate(1)),
            ("access_key = \"k\"\nsecret_key = \"\"\nrole = \"admin\"", AccountProblem::EmptySecret),
            ("access_key = \" \"\nsecret_key = \"s\"\nrole = \"admin\"", AccountProblem::EmptyAccessKey),
            ("access_key = \"k\"\nsecret_key = \"s\"\nrole = \"root\"", AccountProblem::UnknownRole("root".into())),
            ("access_key = \"k\"\nsecret_key = \"s\"\nrole = \"broker\"", AccountProblem::NoBrokers),
            ("access_key = \"k\"\nsecret_key = \"s\"\nrole = \"broker\"\nbrokers = []", AccountProblem::NoBrokers),
            (
                "access_key = \"k\"\nsecret_key = \"s\"\nrole = \"client\"\nbrokers = [\"b\"]",
                AccountProblem::BrokersNotBroker(Role::Client),
            ),
            (
                "access_key = \"k\"\nsecret_key = \"s\"\nrole = \"admin\"\nallow = [\"10.0.0.0/33\"]",
                AccountProblem::BadAllow("10.0.0.0/33".into()),
            ),
        ];
        for (body, expected) in cases {
            match parse(&account(body)) {
                Err(AccountsError::Account { index, problem, ref path, .. }) => {
                    assert_eq!((index, &problem), (2, &expected), "{body}");
                    assert_eq!(path, Path::new("/etc/namesrv/accounts.toml"));
                }
                other => panic!("{body}: expected {expected:?}, got {other:?}"),
            }
        }
        let err = parse(&account("access_key = \"k\"\nsecret_key = \"s\"\nrole = \"root\"")).unwrap_err().to_string();
        assert_eq!(err, "accounts file /etc/namesrv/accounts.toml, account 2 (access_key \"k\"): unknown role \"root\" (admin, broker, client or peer)");
        let err = parse("allow = [\"nonsense\"]\n").unwrap_err().to_string();
        assert!(err.contains("/etc/namesrv/accounts.toml") && err.contains("nonsense"), "{err}");
    }

    #[test]
    fn an_unreadable_file_is_named() {
        let err = Accounts::load(Path::new("/nonexistent/accounts.toml")).unwrap_err().to_string();
        assert!(err.starts_with("cannot read accounts file /nonexistent/accounts.toml"), "{err}");
    }
}
