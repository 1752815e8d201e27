//! What the NameServer's request codes are, for admission: which need credentials from which
//! `acl_protect` level, which roles may send them, which are a broker's own (scoped to the
//! brokers its account lists, its address held to its peer's), and which change state or reveal
//! the configuration (admin codes, over TLS only where the rules say so).

use crate::acl::verify::{Access, Protection, Roles};
use crate::admission::Guard;

use super::shape;

/// Codes that change state, and 319, which reveals the configuration: protected at every level.
pub const ADMIN_CODES: &[i32] = &[100, 102, 205, 216, 217, 318, 319, 327];
/// What brokers send about themselves: REGISTER_BROKER, UNREGISTER_BROKER, QUERY_DATA_VERSION,
/// BROKER_HEARTBEAT. Protected from level `broker` on; each names its broker in `brokerName`.
pub const BROKER_CODES: &[i32] = &[103, 104, 322, 904];
/// Codes that only read: what a client role may send (KV reads, routes, cluster and topic lists,
/// member groups). GET_NAMESRV_CONFIG (319) is not among them.
pub const READ_ONLY_CODES: &[i32] = &[101, 105, 106, 206, 219, 224, 304, 311, 312, 313, 901];
/// REGISTER_TOPIC_IN_NAMESRV: a broker pushing one topic; its body names the brokers (each
/// checked against the account when the topic is registered).
pub const REGISTER_TOPIC: i32 = 217;

/// How admission sees a request of `code`: an admin code is protected at every level and only
/// an admin's (a broker may push a topic too); a broker code from level `broker`, for admins and
/// for brokers acting for the brokers they list; a read from level `all`, for every reader; any
/// other code from level `all`, for admins only. Every signed request is held to its code's
/// shape.
pub fn guard(code: i32) -> Guard {
    let (protection, roles, broker_scoped) = if ADMIN_CODES.contains(&code) {
        let roles = if code == REGISTER_TOPIC { Roles::BROKERS } else { Roles::ADMIN };
        (Protection::Always, roles, false)
    } else if BROKER_CODES.contains(&code) {
        (Protection::FromBroker, Roles::BROKERS, true)
    } else if READ_ONLY_CODES.contains(&code) {
        (Protection::FromAll, Roles::READERS, false)
    } else {
        (Protection::FromAll, Roles::ADMIN, false)
    };
    Guard {
        access: Access { protection, roles, broker_scoped, shape: Some(shape::check) },
        admin: ADMIN_CODES.contains(&code),
        announced_addr: broker_scoped.then_some("brokerAddr"),
        changes_service: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acl::accounts::Role;
    use crate::settings::AclProtect;

    fn protects(level: AclProtect, code: i32) -> bool {
        guard(code).access.protection.at(level)
    }

    fn role_allows(role: Role, code: i32) -> bool {
        guard(code).access.roles.allows(role)
    }

    #[test]
    fn each_level_protects_what_it_names_and_the_levels_nest() {
        for code in [100, 102, 205, 216, 217, 318, 319, 327] {
            assert!(
                protects(AclProtect::Admin, code)
                    && protects(AclProtect::Broker, code)
                    && protects(AclProtect::All, code)
            );
        }
        for code in [103, 104, 322, 904] {
            assert!(!protects(AclProtect::Admin, code) && protects(AclProtect::Broker, code), "{code}");
        }
        for code in [101, 105, 106, 206, 219, 224, 304, 311, 312, 313, 901, 99999] {
            assert!(!protects(AclProtect::Broker, code) && protects(AclProtect::All, code), "{code}");
        }
    }

    #[test]
    fn roles_admin_everything_broker_its_own_codes_and_reads_client_reads_only() {
        for code in [100, 103, 105, 318, 319, 99999] {
            assert!(role_allows(Role::Admin, code), "{code}");
        }
        for code in [103, 104, 322, 904, 217, 105, 106] {
            assert!(role_allows(Role::Broker, code), "{code}");
        }
        for code in [100, 102, 205, 216, 318, 319, 327] {
            assert!(!role_allows(Role::Broker, code) && !role_allows(Role::Client, code), "{code}");
        }
        for code in READ_ONLY_CODES {
            assert!(role_allows(Role::Client, *code), "{code}");
        }
        for code in [103, 104, 217, 322, 904] {
            assert!(!role_allows(Role::Client, code), "{code}");
        }
        assert!((0..2000).all(|code| !role_allows(Role::Peer, code)), "a controller peer sends nothing here");
    }

    #[test]
    fn the_transport_rules_see_admin_codes_and_broker_addresses() {
        assert!(ADMIN_CODES.iter().all(|code| guard(*code).admin));
        assert!(!guard(103).admin && !guard(105).admin);
        assert_eq!(guard(904).announced_addr, Some("brokerAddr"));
        assert_eq!(guard(217).announced_addr, None);
    }
}
