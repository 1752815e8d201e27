//! The settings the registry consults, some of which UPDATE_NAMESRV_CONFIG changes at runtime:
//! the routing group of the settings and the topic limit.

use crate::settings::{RoutingSettings, Settings};

/// What the registry consults: the `routing` settings group as it is (expiry, the Java
/// NamesrvConfig switches, the route cache; readiness only at start) and the one limit on what
/// it stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryOptions {
    /// The routing settings.
    pub routing: RoutingSettings,
    /// Most distinct topics in the tables, all brokers together (`limits.max_topics_total`).
    pub max_topics_total: usize,
    /// Most queue entries in the tables, all brokers together (`limits.max_queue_entries_total`).
    pub max_queue_entries_total: usize,
    /// Most topics one registration may carry (`limits.max_topics_per_broker`; checked again
    /// on what a route snapshot holds).
    pub max_topics_per_broker: usize,
}

impl RegistryOptions {
    /// The default options with `routing` instead (tests change a switch or two this way).
    pub fn routing(routing: RoutingSettings) -> Self {
        Self { routing, ..Self::default() }
    }

    /// Whether a running registry told `other` instead would behave the same: the routing
    /// settings it reads only at start or never (the tick period, warm restart, the readiness
    /// wait, the notifier's limits, the floor of runtime updates) do not count.
    pub fn acts_like(&self, other: &RegistryOptions) -> bool {
        self.consulted() == other.consulted()
    }

    /// These options with what a running registry does not consult set to zero.
    fn consulted(&self) -> RegistryOptions {
        let routing = RoutingSettings {
            scan_interval_ms: 0,
            warm_restart: false,
            warm_restart_max_age_ms: 0,
            runtime_min_broker_timeout_ms: 0,
            need_wait_for_service: false,
            wait_seconds_for_service: 0,
            notify_max_in_flight: 0,
            notify_max_per_second: 0,
            ..self.routing.clone()
        };
        RegistryOptions { routing, ..self.clone() }
    }
}

impl Default for RegistryOptions {
    fn default() -> Self {
        Self::from(&Settings::default())
    }
}

impl From<&Settings> for RegistryOptions {
    fn from(s: &Settings) -> Self {
        Self {
            routing: s.routing.clone(),
            max_topics_total: s.limits.max_topics_total,
            max_queue_entries_total: s.limits.max_queue_entries_total,
            max_topics_per_broker: s.limits.max_topics_per_broker,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_a_running_registry_consults_makes_options_act_differently() {
        let base = RegistryOptions::default();
        let start_only = RoutingSettings { scan_interval_ms: 1, notify_max_in_flight: 1, ..base.routing.clone() };
        assert!(base.acts_like(&RegistryOptions::routing(start_only)));
        let switched =
            RoutingSettings { support_acting_master: !base.routing.support_acting_master, ..base.routing.clone() };
        assert!(!base.acts_like(&RegistryOptions::routing(switched)));
        assert!(!base.acts_like(&RegistryOptions { max_topics_total: 1, ..base.clone() }));
    }
}
