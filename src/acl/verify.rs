//! The check itself, with no state: who signed a request (Java's `PlainAccessResource.parse`
//! and `PlainPermissionManager.validate` for the signature), and whether that account may send
//! it as the service answering it describes it ([`Access`]: from which level it is protected,
//! which roles may send it, whether a broker account must list the broker it names, and the
//! shape a signed request of its code must have). Which codes are which is each service's.

use std::net::IpAddr;
use std::sync::Arc;

use thiserror::Error;

use super::accounts::{Account, Accounts, Role};
use crate::limits::shown;
use crate::origin::CertFingerprint;
use crate::protocol::code::version::V4_9_3;
use crate::protocol::signature::{verify, ACCESS_KEY, SIGNATURE};
use crate::protocol::RemotingCommand;
use crate::settings::AclProtect;

/// Java's `MixAll.UNIQUE_MSG_QUERY_FLAG`, left out of the signed content for clients up to 4.9.3.
const UNIQUE_KEY_QUERY: &str = "_UNIQUE_KEY_QUERY";

/// From which `acl_protect` level a request needs credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// At every level (`admin` up): what changes state or reveals the configuration.
    Always,
    /// From `broker` up: what brokers send about themselves.
    FromBroker,
    /// At `all` only: reads.
    FromAll,
}

impl Protection {
    /// Whether `level` requires credentials for requests protected so.
    pub fn at(self, level: AclProtect) -> bool {
        match self {
            Protection::Always => true,
            Protection::FromBroker => matches!(level, AclProtect::Broker | AclProtect::All),
            Protection::FromAll => level == AclProtect::All,
        }
    }
}

/// The roles that may send a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Roles(u8);

impl Roles {
    /// Admins only.
    pub const ADMIN: Roles = Roles(1);
    /// Admins and brokers.
    pub const BROKERS: Roles = Roles(1 | 2);
    /// Admins, brokers and clients: every account but a controller peer's.
    pub const READERS: Roles = Roles(1 | 2 | 4);
    /// Controller peers only.
    pub const PEERS: Roles = Roles(8);

    /// Whether `role` is among them.
    pub fn allows(self, role: Role) -> bool {
        let bit = match role {
            Role::Admin => 1,
            Role::Broker => 2,
            Role::Client => 4,
            Role::Peer => 8,
        };
        self.0 & bit != 0
    }
}

/// The fields a signed request of one code may carry, checked once its signature holds.
pub type Shape = fn(&RemotingCommand) -> Result<(), Malformed>;

/// What access control asks of one request: the answering service's word on its code.
#[derive(Debug, Clone, Copy)]
pub struct Access {
    /// From which level it needs credentials.
    pub protection: Protection,
    /// Who may send it.
    pub roles: Roles,
    /// A broker account may send it only for a broker it lists (named in `brokerName`).
    pub broker_scoped: bool,
    /// The shape a signed request of its code must have, if the service gives one.
    pub shape: Option<Shape>,
}

/// How a signed request departs from its code's shape.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum Malformed {
    /// A field the code's header does not have.
    #[error("request code {code} has no field {field}")]
    Field { code: i32, field: String },
    /// A field with an empty value.
    #[error("field {0} is empty")]
    Empty(String),
    /// A number or boolean not written as Java writes it.
    #[error("field {field} is not written as Java writes a {kind}: {value}")]
    NotCanonical { field: String, kind: &'static str, value: String },
    /// A body where the code takes none, or none where it needs one.
    #[error("request code {code} {}", if *.expected { "needs a body" } else { "takes no body" })]
    Body { code: i32, expected: bool },
}

/// Why a request was refused; the text is the remark of its NO_PERMISSION (16) answer.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum Denied {
    /// No `AccessKey` field.
    #[error("no AccessKey: request code {0} needs credentials (access control is on)")]
    MissingAccessKey(i32),
    /// The peer's address is outside the global allow list.
    #[error("address {0} is not allowed")]
    AddressNotAllowed(IpAddr),
    /// No account has this access key. Its remark is a wrong signature's, word for word, so a
    /// peer without a secret cannot learn which keys exist (the log's `reason` and the metrics
    /// tell the two apart).
    #[error("signature refused for AccessKey {0} (unknown key or wrong secret)")]
    UnknownAccessKey(String),
    /// The account may not be used from this address.
    #[error("AccessKey {0} is not allowed from address {1}")]
    AccountAddressNotAllowed(String, IpAddr),
    /// No `Signature` field.
    #[error("no Signature for AccessKey {0}")]
    MissingSignature(String),
    /// The signature is not the one the account's secret gives.
    #[error("signature refused for AccessKey {0} (unknown key or wrong secret)")]
    BadSignature(String),
    /// The account's role may not send this code.
    #[error("AccessKey {key} (role {role}) may not send request code {code}")]
    RoleNotAllowed { key: String, role: Role, code: i32 },
    /// A broker request without `brokerName`.
    #[error("no brokerName: AccessKey {0} may act only for the brokers it lists")]
    MissingBrokerName(String),
    /// The account does not list this broker.
    #[error("AccessKey {key} may not act for broker {broker}")]
    BrokerNotListed { key: String, broker: String },
    /// A signed broker request that departs from its code's fields.
    #[error("malformed signed request: {0}")]
    Malformed(#[from] Malformed),
    /// The account is pinned to a client certificate the connection did not present.
    #[error("AccessKey {0} is pinned to a TLS client certificate this connection did not present")]
    WrongClientCertificate(String),
    /// An admin code over plain TCP with `acl_admin_requires_tls` on.
    #[error("request code {0} is an admin code: accepted over TLS only (acl_admin_requires_tls)")]
    AdminNeedsTls(i32),
    /// A request that changes the controller from outside loopback and `controller_admin_networks`,
    /// with access control off.
    #[error(
        "request code {code} changes the controller: with access control off it is accepted from loopback only \
         (this connection is from {peer}); list the admin hosts in controller_admin_networks, or turn acl_enabled on"
    )]
    ProtectedMode { code: i32, peer: IpAddr },
    /// A broker code whose `brokerAddr` is not on the peer's IP, with
    /// `acl_broker_addr_matches_peer` on.
    #[error("brokerAddr {addr} is not on this connection's address {peer} (acl_broker_addr_matches_peer)")]
    BrokerAddrNotPeer { addr: String, peer: IpAddr },
}

impl Denied {
    /// A short label for metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Denied::MissingAccessKey(_) => "missing_access_key",
            Denied::AddressNotAllowed(_) | Denied::AccountAddressNotAllowed(..) => "address_not_allowed",
            Denied::UnknownAccessKey(_) => "unknown_access_key",
            Denied::MissingSignature(_) => "missing_signature",
            Denied::BadSignature(_) => "bad_signature",
            Denied::RoleNotAllowed { .. } => "role_not_allowed",
            Denied::MissingBrokerName(_) | Denied::BrokerNotListed { .. } => "broker_not_allowed",
            Denied::Malformed(_) => "malformed_request",
            Denied::WrongClientCertificate(_) => "wrong_client_certificate",
            Denied::AdminNeedsTls(_) => "admin_needs_tls",
            Denied::BrokerAddrNotPeer { .. } => "broker_addr_not_peer",
            Denied::ProtectedMode { .. } => "protected_mode",
        }
    }
}

/// Checks a request's credentials against `accounts`: the account it names, from the address
/// `peer`, with a signature over its fields and body, of a role `access` allows, acting only
/// for the brokers it lists where `access` says so, in its code's shape. Returns the account.
pub fn check<'a>(
    accounts: &'a Accounts,
    peer: IpAddr,
    req: &RemotingCommand,
    access: &Access,
) -> Result<&'a Arc<Account>, Denied> {
    let account = authenticate(accounts, peer, req)?;
    if !access.roles.allows(account.role) {
        return Err(Denied::RoleNotAllowed { key: shown(&account.access_key), role: account.role, code: req.code });
    }
    if account.role == Role::Broker && access.broker_scoped {
        names_a_listed_broker(account, req)?;
    }
    if let Some(shape) = access.shape {
        shape(req)?;
    }
    Ok(account)
}

/// Checks that `account`, when pinned to a client certificate (`tls_identity`), signed a
/// request that arrived over a TLS connection presenting that certificate (`presented`).
pub fn presented_its_certificate(account: &Account, presented: Option<CertFingerprint>) -> Result<(), Denied> {
    match account.tls_identity {
        Some(pinned) if presented != Some(pinned) => Err(Denied::WrongClientCertificate(shown(&account.access_key))),
        _ => Ok(()),
    }
}

/// Checks that broker account `account` may act for the broker `req` names in `brokerName`.
pub fn names_a_listed_broker(account: &Account, req: &RemotingCommand) -> Result<(), Denied> {
    let key = &account.access_key;
    let broker = req.ext("brokerName").ok_or_else(|| Denied::MissingBrokerName(shown(key)))?;
    if !account.may_act_for(broker) {
        return Err(Denied::BrokerNotListed { key: shown(key), broker: shown(broker) });
    }
    Ok(())
}

/// Checks who signed `req`: the account it names, from the address `peer`, with a signature
/// over its fields and body. What the account may send is the caller's to check.
///
/// An unknown key and a wrong signature are answered alike, after the same work (a signature
/// checked against a stand-in secret), and the account's own address list is checked only once
/// the signature holds: without the secret, no answer tells whether a key exists.
pub fn authenticate<'a>(
    accounts: &'a Accounts,
    peer: IpAddr,
    req: &RemotingCommand,
) -> Result<&'a Arc<Account>, Denied> {
    let Some(key) = req.ext(ACCESS_KEY) else {
        return Err(Denied::MissingAccessKey(req.code));
    };
    if !accounts.allows(peer) {
        return Err(Denied::AddressNotAllowed(peer.to_canonical()));
    }
    let signature = req.ext(SIGNATURE).ok_or_else(|| Denied::MissingSignature(shown(key)))?;
    let account = accounts.get(key);
    let secret = account.map_or(STAND_IN_SECRET, |a| a.secret());
    let signed = verify(signed_fields(req), req.body.as_deref(), secret, signature);
    let Some(account) = account else {
        return Err(Denied::UnknownAccessKey(shown(key)));
    };
    if !signed {
        return Err(Denied::BadSignature(shown(key)));
    }
    if !account.allows(peer) {
        return Err(Denied::AccountAddressNotAllowed(shown(key), peer.to_canonical()));
    }
    Ok(account)
}

/// What an unknown key's signature is checked against, so that it costs what a known key's does.
const STAND_IN_SECRET: &str = "namesrv-stand-in-secret-for-unknown-access-keys";

/// The fields the signature covers: all but `Signature` (skipped by the signer itself), and
/// `_UNIQUE_KEY_QUERY` from clients up to 4.9.3, which did not sign it.
fn signed_fields(req: &RemotingCommand) -> impl Iterator<Item = (&str, &str)> {
    let old_client = req.version <= V4_9_3;
    req.ext_fields.iter().flat_map(|f| f.iter()).filter(move |(k, _)| !(old_client && *k == UNIQUE_KEY_QUERY))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::protocol::signature::{sign_command, SessionCredentials};
    use crate::protocol::ExtFields;

    const ACCOUNTS: &str = r#"
    [[accounts]]
    access_key = "ops"
    secret_key = "ops-secret"
    role = "admin"

    [[accounts]]
    access_key = "rocketmq2"
    secret_key = "12345678"
    role = "client"

    [[accounts]]
    access_key = "bk"
    secret_key = "bk-secret"
    role = "broker"
    brokers = ["broker-a"]

    [[accounts]]
    access_key = "lan-only"
    secret_key = "lan-secret"
    role = "admin"
    allow = ["10.0.0.0/8"]
    "#;

    fn accounts() -> Accounts {
        Accounts::parse(ACCOUNTS, Path::new("accounts.toml")).unwrap()
    }

    fn creds(access_key: &str, secret_key: &str) -> SessionCredentials {
        SessionCredentials { access_key: access_key.into(), secret_key: secret_key.into(), security_token: None }
    }

    fn signed(code: i32, fields: &[(&str, &str)], access_key: &str, secret_key: &str) -> RemotingCommand {
        let mut req = RemotingCommand::request(code, Some(fields.iter().copied().collect::<ExtFields>()));
        sign_command(&mut req, &creds(access_key, secret_key));
        req
    }

    const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    /// How these tests' codes are protected: brokers' codes scoped to the brokers an account
    /// lists, route and cluster queries for every reader, anything else for admins only.
    fn access(code: i32) -> Access {
        let (protection, roles, broker_scoped) = match code {
            103 | 104 | 322 | 904 => (Protection::FromBroker, Roles::BROKERS, true),
            105 | 106 => (Protection::FromAll, Roles::READERS, false),
            _ => (Protection::Always, Roles::ADMIN, false),
        };
        Access { protection, roles, broker_scoped, shape: None }
    }

    #[test]
    fn the_levels_nest_and_roles_are_a_set() {
        use AclProtect::*;
        assert!([Admin, Broker, All].into_iter().all(|level| Protection::Always.at(level)));
        assert_eq!([Admin, Broker, All].map(|l| Protection::FromBroker.at(l)), [false, true, true]);
        assert_eq!([Admin, Broker, All].map(|l| Protection::FromAll.at(l)), [false, false, true]);
        let roles = [Role::Admin, Role::Broker, Role::Client, Role::Peer];
        assert_eq!(roles.map(|r| Roles::ADMIN.allows(r)), [true, false, false, false]);
        assert_eq!(roles.map(|r| Roles::BROKERS.allows(r)), [true, true, false, false]);
        assert_eq!(roles.map(|r| Roles::READERS.allows(r)), [true, true, true, false]);
        assert_eq!(roles.map(|r| Roles::PEERS.allows(r)), [false, false, false, true]);
    }

    fn denied(req: &RemotingCommand) -> Denied {
        check(&accounts(), LOCAL, req, &access(req.code)).unwrap_err()
    }

    #[test]
    fn a_correctly_signed_request_passes_and_names_its_account() {
        let req = signed(100, &[("namespace", "ns"), ("key", "k"), ("value", "v")], "ops", "ops-secret");
        assert_eq!(check(&accounts(), LOCAL, &req, &access(req.code)).unwrap().access_key, "ops");
        let with_body = signed(318, &[], "ops", "ops-secret").with_body(&b"x=1"[..]);
        assert!(
            matches!(check(&accounts(), LOCAL, &with_body, &access(with_body.code)), Err(Denied::BadSignature(_))),
            "body added after signing"
        );
        let mut body_first = RemotingCommand::request(318, None).with_body(&b"x=1"[..]);
        sign_command(&mut body_first, &creds("ops", "ops-secret"));
        assert!(check(&accounts(), LOCAL, &body_first, &access(body_first.code)).is_ok(), "the body is signed");
    }

    #[test]
    fn every_failure_says_what_was_missing_or_wrong() {
        let unsigned = RemotingCommand::request(100, Some(ExtFields::new().with("namespace", "n")));
        assert_eq!(denied(&unsigned), Denied::MissingAccessKey(100));
        assert_eq!(denied(&RemotingCommand::request(216, None)), Denied::MissingAccessKey(216), "no extFields at all");
        assert_eq!(denied(&signed(100, &[], "nobody", "x")), Denied::UnknownAccessKey("nobody".into()));
        assert_eq!(denied(&signed(100, &[], "ops", "wrong")), Denied::BadSignature("ops".into()));
        let mut no_signature = signed(100, &[], "ops", "ops-secret");
        no_signature.ext_fields = Some(ExtFields::new().with("AccessKey", "ops"));
        assert_eq!(denied(&no_signature), Denied::MissingSignature("ops".into()));
        let mut garbage = signed(100, &[], "ops", "ops-secret");
        garbage.ext_fields.as_mut().unwrap().insert("Signature", "not base64 at all");
        assert_eq!(denied(&garbage), Denied::BadSignature("ops".into()));
        let client_write = signed(102, &[("namespace", "n"), ("key", "k")], "rocketmq2", "12345678");
        assert_eq!(
            denied(&client_write),
            Denied::RoleNotAllowed { key: "rocketmq2".into(), role: Role::Client, code: 102 }
        );
        assert_eq!(
            denied(&client_write).to_string(),
            "AccessKey rocketmq2 (role client) may not send request code 102"
        );
        let elsewhere = signed(100, &[], "lan-only", "lan-secret");
        assert_eq!(denied(&elsewhere), Denied::AccountAddressNotAllowed("lan-only".into(), LOCAL));
        assert!(check(&accounts(), "10.9.8.7".parse().unwrap(), &elsewhere, &access(elsewhere.code)).is_ok());
    }

    #[test]
    fn without_the_secret_no_remark_tells_whether_a_key_exists() {
        let remark = |key: &str, secret: &str, missing: bool| {
            let mut req = signed(100, &[], key, secret);
            if missing {
                req.ext_fields = Some(ExtFields::new().with("AccessKey", key));
            }
            denied(&req).to_string().replace(key, "KEY")
        };
        for missing_signature in [false, true] {
            let unknown = remark("nobody", "x", missing_signature);
            assert_eq!(remark("ops", "wrong", missing_signature), unknown, "a known key");
            assert_eq!(remark("lan-only", "wrong", missing_signature), unknown, "a known key outside its allow list");
        }
        assert_eq!(denied(&signed(100, &[], "nobody", "x")).reason(), "unknown_access_key", "the metrics still tell");
        assert_eq!(denied(&signed(100, &[], "ops", "x")).reason(), "bad_signature");
    }

    #[test]
    fn a_replayed_request_with_one_field_changed_fails() {
        let original = signed(216, &[("topic", "Orders"), ("clusterName", "c1")], "ops", "ops-secret");
        assert!(check(&accounts(), LOCAL, &original, &access(original.code)).is_ok());
        let mut replay = original.clone();
        replay.ext_fields.as_mut().unwrap().insert("topic", "Payments");
        assert_eq!(denied(&replay), Denied::BadSignature("ops".into()));
        let mut added = original.clone();
        added.ext_fields.as_mut().unwrap().insert("extra", "1");
        assert_eq!(denied(&added), Denied::BadSignature("ops".into()));
        let mut other_key = original;
        other_key.ext_fields.as_mut().unwrap().insert("AccessKey", "rocketmq2");
        assert_eq!(denied(&other_key), Denied::BadSignature("rocketmq2".into()));
    }

    #[test]
    fn a_broker_account_acts_only_for_the_brokers_it_lists() {
        let own = signed(904, &[("brokerName", "broker-a"), ("brokerAddr", "a:1")], "bk", "bk-secret");
        assert!(check(&accounts(), LOCAL, &own, &access(own.code)).is_ok());
        let other = signed(904, &[("brokerName", "broker-b"), ("brokerAddr", "b:1")], "bk", "bk-secret");
        assert_eq!(denied(&other), Denied::BrokerNotListed { key: "bk".into(), broker: "broker-b".into() });
        let nameless = signed(322, &[("brokerAddr", "b:1")], "bk", "bk-secret");
        assert_eq!(denied(&nameless), Denied::MissingBrokerName("bk".into()));
        let admin = signed(104, &[("brokerName", "broker-b")], "ops", "ops-secret");
        assert!(check(&accounts(), LOCAL, &admin, &access(admin.code)).is_ok(), "an admin acts for any broker");
    }

    #[test]
    fn the_notes_vector_with_an_empty_value_verifies_whether_or_not_the_empty_field_arrives() {
        // V2: {AccessKey:rocketmq2, ns:"", topic:TopicTest}, secret 12345678 -> GeeGoP9mRvDhoVp4PD5omX0prgE=
        // A binary header drops the empty value; a JSON one keeps it. Both give the signed content.
        for fields in [vec![("ns", ""), ("topic", "TopicTest")], vec![("topic", "TopicTest")]] {
            let mut ext: ExtFields = fields.iter().copied().collect();
            ext.insert("AccessKey", "rocketmq2");
            ext.insert("Signature", "GeeGoP9mRvDhoVp4PD5omX0prgE=");
            let req = RemotingCommand::request(105, Some(ext));
            assert!(check(&accounts(), LOCAL, &req, &access(req.code)).is_ok(), "{fields:?}");
        }
    }

    #[test]
    fn unique_key_query_is_left_out_for_clients_up_to_4_9_3_only() {
        let fields = [("topic", "T"), ("_UNIQUE_KEY_QUERY", "false")];
        let mut signed_without = RemotingCommand::request(105, Some(ExtFields::new().with("topic", "T")));
        sign_command(&mut signed_without, &creds("rocketmq2", "12345678"));
        let mut req = signed_without.clone();
        req.ext_fields.as_mut().unwrap().insert(fields[1].0, fields[1].1);
        req.version = 399;
        assert!(check(&accounts(), LOCAL, &req, &access(req.code)).is_ok(), "V4_9_3 did not sign it");
        req.version = 401;
        assert!(
            matches!(check(&accounts(), LOCAL, &req, &access(req.code)), Err(Denied::BadSignature(_))),
            "later clients do"
        );
        let both = signed(105, &fields, "rocketmq2", "12345678");
        assert!(check(&accounts(), LOCAL, &both, &access(both.code)).is_ok());
    }
}
