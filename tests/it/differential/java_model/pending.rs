//! Server divergences from Java found by the differential test, recorded while they are fixed.
//! While a switch of [`SERVER`] is `true` the model (or the operation generator) follows the
//! server's behaviour, so the test can keep looking for other divergences. Every switch is
//! `false` now: each divergence found so far is fixed. The switches stay as the record of what
//! was found and so that `scripts/differential.sh` (`DIFF_PENDING_ON`) can re-check an old
//! finding; a new divergence gets a switch here until its fix lands.

use super::Exceptions;

/// One switch per divergence; `false` is Java's (or the specified exception's) behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    /// UNREGISTER_BROKER is ignored when the live entry of (cluster, addr) came over another
    /// connection. Java's `DefaultRequestProcessor.unregisterBroker` never looks at the channel.
    pub unregister_fenced_by_connection: bool,
    /// REGISTER_TOPIC_IN_NAMESRV for a new topic stores the queue data listed before the first
    /// unknown broker. Java's `RouteInfoManager.registerTopic` stores nothing for a new topic then.
    pub register_topic_new_topic_partial: bool,
    /// GET_SYSTEM_TOPIC_LIST_FROM_NS lists the names of `brokerAddrTable`. Java's
    /// `getSystemTopicList` lists the names in `clusterAddrTable`'s sets (dangling ones too).
    pub system_topics_from_groups: bool,
    /// A zone-filtered route keeps the filter servers of kept groups at an address a dropped
    /// group shares. Java's `ZoneRouteRPCHook.filterByZoneName` removes every address of a
    /// dropped group.
    pub zone_filter_keeps_shared_addresses: bool,
    /// Requests without extFields for 101/102/205/216/219/224/327 are not generated, since the
    /// server does not answer them as Java does yet.
    pub no_ext_fields_admin_answers: bool,
    /// NEW, found by this test: REGISTER_BROKER refused ("register broker failed") carries no
    /// extFields. Java attaches `RegisterBrokerResponseHeader` before deciding, so it answers `{}`.
    pub register_failure_without_ext_fields: bool,
    /// NEW, found by this test: UNREGISTER_BROKER (104) and REGISTER_TOPIC_IN_NAMESRV (217)
    /// without extFields answer SYSTEM_ERROR "the custom field <...> is null". Java decodes an
    /// all-null header unchecked when extFields is null (`decodeCommandCustomHeader`) and answers
    /// SUCCESS: 104 is queued (the batch thread then throws on the null key), 217's
    /// `registerTopic` throws on the null topic inside its own catch.
    pub required_fields_checked_without_ext_fields: bool,
    /// NEW, found by this test: a connection close looks the broker up as Java's
    /// `setupUnRegisterRequest` does (a group of the live entry's cluster listing the address)
    /// and, when none is found, only drops the live entry. By `close_removes_all` the broker
    /// whose latest registration came over the connection (its name and id) is unregistered, so
    /// a group created under another cluster that lists the address loses it.
    pub close_finds_group_by_cluster: bool,
    /// NEW, found by this test: a route whose groups share an address lists that address
    /// twice in `filterServerTable` (one key per group). Java's `filterServerMap` is a
    /// `HashMap`: one entry per address. (Checked by the driver, not the model.)
    pub repeated_filter_server_keys: bool,
    /// NEW, found by this test (servers with `close_replaced_connection` only): when the
    /// replaced broker came over the registering connection and the registration leaves no
    /// live entry on it (stateVersion conflict), the server closes that very connection and
    /// the REGISTER_BROKER response is lost.
    pub closes_registering_connection: bool,
    /// NEW, found by this test (servers with `orphan_live_dropped` only): an orphaned live
    /// entry is dropped but its filter servers stay, and show up again in routes once another
    /// broker registers at that address without a filterServerList.
    pub orphan_drop_keeps_filter_servers: bool,
}

impl Pending {
    /// Nothing pending: Java plus the exceptions.
    pub const NONE: Pending = Pending {
        unregister_fenced_by_connection: false,
        register_topic_new_topic_partial: false,
        system_topics_from_groups: false,
        zone_filter_keeps_shared_addresses: false,
        no_ext_fields_admin_answers: false,
        register_failure_without_ext_fields: false,
        required_fields_checked_without_ext_fields: false,
        close_finds_group_by_cluster: false,
        repeated_filter_server_keys: false,
        closes_registering_connection: false,
        orphan_drop_keeps_filter_servers: false,
    };
}

impl Pending {
    /// Sets the switch named `name` (its field name) to `on`; false if there is none.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        let switch = match name {
            "unregister_fenced_by_connection" => &mut self.unregister_fenced_by_connection,
            "register_topic_new_topic_partial" => &mut self.register_topic_new_topic_partial,
            "system_topics_from_groups" => &mut self.system_topics_from_groups,
            "zone_filter_keeps_shared_addresses" => &mut self.zone_filter_keeps_shared_addresses,
            "no_ext_fields_admin_answers" => &mut self.no_ext_fields_admin_answers,
            "register_failure_without_ext_fields" => &mut self.register_failure_without_ext_fields,
            "required_fields_checked_without_ext_fields" => &mut self.required_fields_checked_without_ext_fields,
            "close_finds_group_by_cluster" => &mut self.close_finds_group_by_cluster,
            "repeated_filter_server_keys" => &mut self.repeated_filter_server_keys,
            "closes_registering_connection" => &mut self.closes_registering_connection,
            "orphan_drop_keeps_filter_servers" => &mut self.orphan_drop_keeps_filter_servers,
            _ => return false,
        };
        *switch = on;
        true
    }
}

/// What the server under test still does differently: nothing.
pub const SERVER: Pending = Pending::NONE;

/// The deliberate differences the server implements: all of them.
pub const SERVER_EXCEPTIONS: Exceptions = Exceptions::ALL;
