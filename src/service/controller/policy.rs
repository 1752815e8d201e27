//! What the controller port's request codes are, for admission (Java's controller port is open
//! to anyone who reaches it, apache/rocketmq#10956). Every account reads (metadata, sync-state
//! data); a broker account sends what a broker sends about its own group, for the groups it
//! lists; only an admin designates a master, cleans a group's data or reads and changes the
//! controller's configuration (admin requests, over TLS only where the rules say so); only a
//! peer account sends the Raft codes, and a peer account nothing else.

use crate::acl::verify::{Access, Protection, Roles};
use crate::admission::Guard;
use crate::protocol::controller::header::ElectMasterHeader;
use crate::protocol::controller::ControllerRequestCode as Code;
use crate::protocol::RemotingCommand;

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

/// How admission sees `req`: admin requests, Raft frames and what brokers send are protected at
/// every level (with access control on, a broker speaks for its group only with an account that
/// lists it, whatever `acl_protect` says), reads and anything else at `all`. A heartbeat and a
/// registration announce the broker's own address (`brokerAddr`, `brokerAddress`). The admin
/// requests that change the controller are, with access control off, taken from loopback and
/// `controller_admin_networks` only.
pub fn guard(req: &RemotingCommand) -> Guard {
    let class = class(req);
    let (protection, roles) = match class {
        Class::Read => (Protection::FromAll, Roles::READERS),
        Class::Broker => (Protection::Always, Roles::BROKERS),
        Class::Admin => (Protection::Always, Roles::ADMIN),
        Class::Raft => (Protection::Always, Roles::PEERS),
        Class::Other => (Protection::FromAll, Roles::ADMIN),
    };
    let announced_addr = match Code::from_i32(req.code) {
        Some(Code::BrokerHeartbeat) => Some("brokerAddr"),
        Some(Code::RegisterBroker) => Some("brokerAddress"),
        _ => None,
    };
    let changes_service = class == Class::Admin && req.code != Code::GetControllerConfig as i32;
    Guard {
        access: Access { protection, roles, broker_scoped: class == Class::Broker, shape: None },
        admin: class == Class::Admin,
        announced_addr,
        changes_service,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acl::accounts::Role;
    use crate::protocol::ExtFields;
    use crate::settings::AclProtect;

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
        let sample = [1005, 904, 1011, 1901, 105];
        let covered = |level| sample.map(|code| guard(&req(code, &[])).access.protection.at(level));
        assert_eq!(covered(Admin), [false, true, true, true, false], "broker codes need an account at every level");
        assert_eq!(covered(Broker), [false, true, true, true, false]);
        assert_eq!(covered(All), [true, true, true, true, true]);
        let allowed = |role| [1005, 904, 1011, 1901].map(|code| guard(&req(code, &[])).access.roles.allows(role));
        assert_eq!(allowed(Role::Admin), [true, true, true, false]);
        assert_eq!(allowed(Role::Broker), [true, true, false, false]);
        assert_eq!(allowed(Role::Client), [true, false, false, false]);
        assert_eq!(allowed(Role::Peer), [false, false, false, true]);
    }

    #[test]
    fn the_transport_rules_see_admin_requests_and_announced_addresses() {
        assert!(guard(&req(1009, &[])).admin && guard(&req(1002, &[("designateElect", "true")])).admin);
        assert!(!guard(&req(1002, &[("designateElect", "false")])).admin);
        assert_eq!(guard(&req(904, &[])).announced_addr, Some("brokerAddr"));
        assert_eq!(guard(&req(1003, &[])).announced_addr, Some("brokerAddress"));
        assert!(guard(&req(1003, &[])).access.broker_scoped);
        let changes = |code, fields: &[(&str, &str)]| guard(&req(code, fields)).changes_service;
        assert!(changes(1009, &[]) && changes(1011, &[]) && changes(1002, &[("designateElect", "true")]));
        assert!(!changes(1010, &[]) && !changes(1002, &[("designateElect", "false")]) && !changes(904, &[]));
    }
}
