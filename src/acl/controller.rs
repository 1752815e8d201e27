//! Access control on the controller port, which Java leaves open to anyone who reaches it
//! (apache/rocketmq#10956): which codes each `acl_protect` level covers there and what each role
//! may send. Every account reads (metadata, sync-state data); a broker account sends what a
//! broker sends about its own group, for the groups it lists; only an admin designates a master,
//! cleans a group's data or reads and changes the controller's configuration; only a peer
//! account sends the Raft codes, and a peer account nothing else.

use std::net::IpAddr;
use std::sync::Arc;

use super::accounts::{Account, Accounts, Role};
use super::verify::{authenticate, names_a_listed_broker, shown, Denied};
use crate::protocol::controller::header::ElectMasterHeader;
use crate::protocol::controller::ControllerRequestCode as Code;
use crate::protocol::RemotingCommand;
use crate::settings::AclProtect;

/// What a request on the controller port is, for access control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// CONTROLLER_GET_METADATA_INFO, CONTROLLER_GET_SYNC_STATE_DATA: reads.
    Read,
    /// What a broker sends about its own group: BROKER_HEARTBEAT, the id and registration
    /// codes, replica info, in-sync set changes, an election it asks for.
    Broker,
    /// An election an admin designates, CLEAN_BROKER_DATA, UPDATE/GET_CONTROLLER_CONFIG.
    Admin,
    /// The Raft frames between controller peers.
    Raft,
    /// Anything else (answered REQUEST_CODE_NOT_SUPPORTED).
    Other,
}

/// The class of `req`.
pub fn class(req: &RemotingCommand) -> Class {
    let Some(code) = Code::from_i32(req.code) else { return Class::Other };
    match code {
        Code::GetMetadataInfo | Code::GetSyncStateData => Class::Read,
        Code::ElectMaster if ElectMasterHeader::designates(req) => Class::Admin,
        Code::BrokerHeartbeat
        | Code::AlterSyncStateSet
        | Code::ElectMaster
        | Code::RegisterBroker
        | Code::GetReplicaInfo
        | Code::GetNextBrokerId
        | Code::ApplyBrokerId => Class::Broker,
        Code::UpdateControllerConfig | Code::GetControllerConfig | Code::CleanBrokerData => Class::Admin,
        Code::RaftAppendEntries | Code::RaftVote | Code::RaftInstallSnapshot => Class::Raft,
        Code::GetBrokerEpochCache | Code::NotifyBrokerRoleChanged => Class::Other,
    }
}

/// True when `level` requires credentials for requests of `class`: `admin` covers the admin
/// codes and Raft, `broker` adds what brokers send, `all` everything.
pub fn protects(level: AclProtect, class: Class) -> bool {
    match class {
        Class::Admin | Class::Raft => true,
        Class::Broker => matches!(level, AclProtect::Broker | AclProtect::All),
        Class::Read | Class::Other => level == AclProtect::All,
    }
}

/// True when `role` may send requests of `class` (a broker only for the groups it lists, which
/// [`check`] adds).
pub fn role_allows(role: Role, class: Class) -> bool {
    match (role, class) {
        (Role::Peer, class) => class == Class::Raft,
        (_, Class::Raft) => false,
        (Role::Admin, _) => true,
        (Role::Broker, class) => matches!(class, Class::Read | Class::Broker),
        (Role::Client, class) => class == Class::Read,
    }
}

/// Checks a request on the controller port: signed by an account of `accounts` from `peer`
/// ([`authenticate`]), whose role may send its class, and, for a broker account sending what
/// brokers send, naming a group the account lists. Returns the account.
pub fn check<'a>(accounts: &'a Accounts, peer: IpAddr, req: &RemotingCommand) -> Result<&'a Arc<Account>, Denied> {
    let account = authenticate(accounts, peer, req)?;
    let class = class(req);
    if !role_allows(account.role, class) {
        return Err(Denied::RoleNotAllowed { key: shown(&account.access_key), role: account.role, code: req.code });
    }
    if account.role == Role::Broker && class == Class::Broker {
        names_a_listed_broker(account, req)?;
    }
    Ok(account)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ExtFields;

    fn req(code: i32, fields: &[(&str, &str)]) -> RemotingCommand {
        RemotingCommand::request(code, Some(fields.iter().copied().collect::<ExtFields>()))
    }

    #[test]
    fn an_election_is_an_admin_s_when_it_designates_in_any_case() {
        assert_eq!(class(&req(1002, &[("designateElect", "false")])), Class::Broker);
        assert_eq!(class(&req(1002, &[("designateElect", " TRUE ")])), Class::Admin);
        assert_eq!(class(&req(1002, &[])), Class::Broker, "no field: a header error later, never admin's");
        assert_eq!(class(&req(904, &[])), Class::Broker);
        assert_eq!(class(&req(1901, &[])), Class::Raft);
        assert_eq!(class(&req(105, &[])), Class::Other);
    }

    #[test]
    fn levels_and_roles_cover_the_design_s_table() {
        use AclProtect::*;
        let covered =
            |level| [Class::Read, Class::Broker, Class::Admin, Class::Raft, Class::Other].map(|c| protects(level, c));
        assert_eq!(covered(Admin), [false, false, true, true, false]);
        assert_eq!(covered(Broker), [false, true, true, true, false]);
        assert_eq!(covered(All), [true, true, true, true, true]);
        let allowed = |role| [Class::Read, Class::Broker, Class::Admin, Class::Raft].map(|c| role_allows(role, c));
        assert_eq!(allowed(Role::Admin), [true, true, true, false]);
        assert_eq!(allowed(Role::Broker), [true, true, false, false]);
        assert_eq!(allowed(Role::Client), [true, false, false, false]);
        assert_eq!(allowed(Role::Peer), [false, false, false, true]);
    }
}
