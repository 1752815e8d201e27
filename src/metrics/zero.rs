//! Every known label value of the event counters, exported at 0 from the start: a series that
//! appears with its first event makes `increase()` and `rate()` miss that event, so an alert on
//! the first expiry, refusal or failed handshake after a restart would never fire.

use super::{FileResultLabels, Metrics, ReasonLabel, Removal, ResultLabel};

/// Every `result` of `namesrv_broker_registrations_total`.
pub const REGISTRATION_RESULTS: [&str; 2] = ["accepted", "rejected"];

/// Every `result` of `namesrv_config_updates_total`.
pub const CONFIG_UPDATE_RESULTS: [&str; 2] = ["accepted", "refused"];

/// Every `reason` of `namesrv_acl_refusals_total`: what a refused request lacked
/// (`acl::verify::Denied::reason`), and `bound_elsewhere` for a live broker's name used with
/// another access key.
pub const ACL_REFUSAL_REASONS: [&str; 8] = [
    "missing_access_key",
    "address_not_allowed",
    "unknown_access_key",
    "missing_signature",
    "bad_signature",
    "role_not_allowed",
    "broker_not_allowed",
    "bound_elsewhere",
];

/// Every `result` of `namesrv_tls_connections_total`.
pub const TLS_RESULTS: [&str; 5] = ["tls", "plain", "plain_refused", "handshake_failed", "handshake_timeout"];

/// Every `file` of `namesrv_security_reloads_total`.
pub const SECURITY_RELOAD_FILES: [&str; 2] = ["accounts", "tls"];

/// Every `result` of `namesrv_security_reloads_total`.
pub const SECURITY_RELOAD_RESULTS: [&str; 2] = ["applied", "refused"];

impl Metrics {
    /// Creates every known series of the event counters, at 0.
    pub(super) fn zero_series(&self) {
        for result in REGISTRATION_RESULTS {
            drop(self.registrations.get_or_create(&ResultLabel { result }));
        }
        for reason in [Removal::Expired, Removal::ConnectionClosed, Removal::Unregistered] {
            drop(self.removals.get_or_create(&ReasonLabel { reason: reason.label() }));
        }
        for result in CONFIG_UPDATE_RESULTS {
            drop(self.config_updates.get_or_create(&ResultLabel { result }));
        }
        for reason in ACL_REFUSAL_REASONS {
            drop(self.acl_refusals.get_or_create(&ReasonLabel { reason }));
        }
        for result in TLS_RESULTS {
            drop(self.tls_connections.get_or_create(&ResultLabel { result }));
        }
        for file in SECURITY_RELOAD_FILES {
            for result in SECURITY_RELOAD_RESULTS {
                drop(self.security_reloads.get_or_create(&FileResultLabels { file, result }));
            }
        }
    }
}
