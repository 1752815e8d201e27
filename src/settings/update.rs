//! UPDATE_NAMESRV_CONFIG and UPDATE_CONTROLLER_CONFIG: which keys may change while the server
//! runs, and the checks a change passes, the same for both ports ([`UpdateScope`] says which
//! keys each may change). Only keys that truly apply at runtime may change over the wire;
//! restart-only keys (addresses, limits, paths, the readiness wait, cache sizes, Raft timings)
//! are refused with a remark naming the key, and values are type- and range-checked, so one
//! request cannot turn routing off or leave a configuration no broker can register with after
//! the next restart. The NameServer refuses a key it has no setting for; the controller skips
//! it, as Java's does.

use config::{Map, Value};
use thiserror::Error;

use super::controller::{controller_key, Change};
use super::load::{canonical_key, merge};
use super::{Settings, FIXED_BLACK_LIST};

/// The values `broker_timeout_ms` may take over the wire at most: 1 s to a day, the low end
/// raised by `runtime_min_broker_timeout_ms`.
pub const BROKER_TIMEOUT_RANGE_MS: std::ops::RangeInclusive<u64> = 1_000..=86_400_000;

/// Keys UPDATE_NAMESRV_CONFIG may change, each applied at once (with its widest range, if
/// numeric; see [`Settings::runtime_range`]).
pub const RUNTIME_KEYS: &[(&str, Option<(u64, u64)>)] = &[
    ("broker_timeout_ms", Some((*BROKER_TIMEOUT_RANGE_MS.start(), *BROKER_TIMEOUT_RANGE_MS.end()))),
    ("delete_topic_with_broker_registration", None),
    ("support_acting_master", None),
    ("order_message_enable", None),
    ("return_order_topic_config_to_broker", None),
    ("enable_all_topic_list", None),
    ("enable_topic_list", None),
    ("notify_min_broker_id_changed", None),
];

/// Why UPDATE_NAMESRV_CONFIG refused a change; nothing of the request is applied.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UpdateError {
    /// The key may never change over the wire (Java's black list).
    #[error("Can not update config in black list.")]
    BlackListed(String),
    /// The key is no setting of this server.
    #[error("unknown config key {0}")]
    Unknown(String),
    /// The key applies only at start.
    #[error("{0} applies only at start: change it in the config file and restart")]
    RestartOnly(String),
    /// The key describes how this controller works and has no setting.
    #[error("{0} cannot be changed on this controller")]
    Fixed(String),
    /// A value does not fit its setting.
    #[error("invalid value for {key}: {reason}")]
    Invalid { key: String, reason: String },
}

/// One accepted change, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// The key as the request named it.
    pub key: String,
    /// The value before.
    pub old: String,
    /// The value after.
    pub new: String,
}

/// Which port's configuration an update changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateScope {
    /// UPDATE_NAMESRV_CONFIG: the NameServer's runtime keys ([`RUNTIME_KEYS`]).
    Namesrv,
    /// UPDATE_CONTROLLER_CONFIG: the controller's runtime keys (`CONTROLLER_KEYS`).
    Controller,
}

/// Keys GET_CONTROLLER_CONFIG shows that describe how this controller works and have no
/// setting (each broker expires at its own deadline, not at Java's 5 s scan).
pub const CONTROLLER_FIXED: &[&str] = &["scanNotActiveBrokerInterval"];

/// What an accepted update does.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    /// The settings with the changes applied.
    pub settings: Settings,
    /// Keys whose value changed.
    pub changed: Vec<Changed>,
    /// Keys no setting of the scope has, skipped (the controller's, as Java skips them).
    pub ignored: Vec<String>,
}

/// What an update may do with one key of its scope.
enum Changeable {
    /// Change it now, within this range when it is a number.
    Now(Option<(u64, u64)>),
    /// Skip it (a key the controller has no setting for).
    Skip,
}

impl Settings {
    /// These settings with `changes` (an UPDATE_NAMESRV_CONFIG or UPDATE_CONTROLLER_CONFIG
    /// body) applied, and what changed: all or nothing, a blacklisted key first (NO_PERMISSION,
    /// as Java's `validateBlackListConfigExist` checks before anything), then each key in turn.
    pub fn with_updates(&self, scope: UpdateScope, changes: &[(String, String)]) -> Result<Update, UpdateError> {
        let black_list: Vec<String> = FIXED_BLACK_LIST
            .iter()
            .map(|k| canonical_key(k))
            .chain(
                self.state
                    .config_black_list
                    .split(';')
                    .filter(|k| !k.trim().is_empty())
                    .map(|k| canonical_key(k.trim())),
            )
            .collect();
        if let Some((key, _)) = changes.iter().find(|(k, _)| black_list.contains(&canonical_key(k))) {
            return Err(UpdateError::BlackListed(key.clone()));
        }
        let current = self.json_values();
        let mut layer = Map::new();
        let (mut changed, mut ignored) = (Vec::new(), Vec::new());
        for (key, value) in changes {
            let ours = canonical_key(key.trim());
            let old = current.get(&ours);
            let range = match self.changeable(scope, key.trim(), &ours, old.is_some())? {
                Changeable::Skip => {
                    ignored.push(key.clone());
                    continue;
                }
                Changeable::Now(range) => range,
            };
            let old = old.ok_or_else(|| UpdateError::Unknown(key.clone()))?;
            let value = check_value(key, old, super::properties::java_trim(value), range)?;
            changed.push(Changed { key: key.clone(), old: display(old), new: value.clone() });
            layer.insert(ours, Value::from(value));
        }
        let invalid = |e: super::SettingsError| UpdateError::Invalid { key: "update".into(), reason: e.to_string() };
        let settings = merge(self, vec![layer]).map_err(invalid)?;
        settings.validate().map_err(invalid)?;
        changed.retain(|c| c.old != c.new);
        Ok(Update { settings, changed, ignored })
    }

    /// What an update of `scope` may do with `key` (as sent; `ours` our spelling of it, a
    /// setting when `known`).
    fn changeable(&self, scope: UpdateScope, key: &str, ours: &str, known: bool) -> Result<Changeable, UpdateError> {
        let restart = || UpdateError::RestartOnly(key.to_owned());
        match scope {
            UpdateScope::Namesrv if !known => Err(UpdateError::Unknown(key.to_owned())),
            UpdateScope::Namesrv => self.runtime_range(ours).map(Changeable::Now).ok_or_else(restart),
            UpdateScope::Controller if CONTROLLER_FIXED.contains(&key) => Err(UpdateError::Fixed(key.to_owned())),
            UpdateScope::Controller => match controller_key(ours) {
                None => Ok(Changeable::Skip),
                Some(def) if def.change == Change::Runtime => Ok(Changeable::Now(def.range)),
                Some(_) => Err(restart()),
            },
        }
    }

    /// `None` when `key` (our spelling) is no runtime key, else the range its value must fall in
    /// over the wire (`None` inside: not numeric). A broker timeout below
    /// `runtime_min_broker_timeout_ms` would expire live brokers between their heartbeats.
    pub(super) fn runtime_range(&self, key: &str) -> Option<Option<(u64, u64)>> {
        let range = RUNTIME_KEYS.iter().find(|(k, _)| *k == key)?.1;
        Some(match key {
            "broker_timeout_ms" => range.map(|(min, max)| (min.max(self.routing.runtime_min_broker_timeout_ms), max)),
            _ => range,
        })
    }

    /// Every setting by our key, as JSON values.
    fn json_values(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::to_value(self).ok().and_then(|v| v.as_object().cloned()).unwrap_or_default()
    }
}

/// The text of a value as the config file and GET_NAMESRV_CONFIG show it.
fn display(value: &serde_json::Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), str::to_owned)
}

/// Checks `value` against the type of the current value and the key's range.
fn check_value(
    key: &str,
    current: &serde_json::Value,
    value: &str,
    range: Option<(u64, u64)>,
) -> Result<String, UpdateError> {
    let invalid = |reason: String| UpdateError::Invalid { key: key.to_owned(), reason };
    if current.is_boolean() {
        return match value.to_ascii_lowercase().as_str() {
            v @ ("true" | "false") => Ok(v.to_owned()),
            _ => Err(invalid(format!("{value:?} is not true or false"))),
        };
    }
    if current.is_number() {
        let n: u64 = value.parse().map_err(|_| invalid(format!("{value:?} is not a number")))?;
        if let Some((min, max)) = range.filter(|(min, max)| !(*min..=*max).contains(&n)) {
            return Err(invalid(format!("{n} is outside the runtime range {min}..={max}")));
        }
        return Ok(n.to_string());
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(s: &Settings, pairs: &[(&str, &str)]) -> Result<(Settings, Vec<Changed>), UpdateError> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        s.with_updates(UpdateScope::Namesrv, &pairs).map(|u| (u.settings, u.changed))
    }

    #[test]
    fn blacklisted_unknown_and_restart_only_keys_are_refused_naming_the_key() {
        let s = Settings::default();
        for key in ["configStorePath", "kvConfigPath", "configBlackList", "rocketmqHome", "kv_config_path"] {
            assert_eq!(update(&s, &[(key, "x")]), Err(UpdateError::BlackListed(key.into())));
        }
        assert_eq!(update(&s, &[("{key", "value}")]), Err(UpdateError::Unknown("{key".into())));
        for key in ["listenPort", "max_frame_bytes", "needWaitForService", "waitSecondsForService", "bindAddress"] {
            let err = update(&s, &[(key, "1")]).unwrap_err();
            assert_eq!(err, UpdateError::RestartOnly(key.into()));
            assert!(err.to_string().starts_with(key), "{err}");
        }
    }

    #[test]
    fn access_control_and_tls_keys_never_change_over_the_wire() {
        let s = Settings::default();
        for key in
            ["acl_enabled", "acl_accounts_file", "acl_protect", "acl_admin_requires_tls", "tls_mode", "tls_key_file"]
        {
            assert_eq!(update(&s, &[(key, "x")]), Err(UpdateError::BlackListed(key.into())), "{key}");
        }
        let mixed = update(&s, &[("enableTopicList", "false"), ("tls_client_ca_file", "/tmp/ca.pem")]);
        assert_eq!(mixed, Err(UpdateError::BlackListed("tls_client_ca_file".into())), "nothing of it applies");
    }

    #[test]
    fn runtime_keys_are_type_and_range_checked_and_report_what_changed() {
        let s = Settings::default();
        let (updated, changed) = update(&s, &[("enableTopicList", "FALSE"), ("broker_timeout_ms", "60000")]).unwrap();
        assert!(!updated.routing.enable_topic_list);
        assert_eq!(updated.routing.broker_timeout_ms, 60_000);
        assert_eq!(changed[0], Changed { key: "enableTopicList".into(), old: "true".into(), new: "false".into() });
        assert!(update(&s, &[("enableTopicList", "yes")]).is_err());
        assert!(update(&s, &[("broker_timeout_ms", "5")]).unwrap_err().to_string().contains("outside"));
        let short = update(&s, &[("broker_timeout_ms", "59999")]).unwrap_err().to_string();
        assert_eq!(short, "invalid value for broker_timeout_ms: 59999 is outside the runtime range 60000..=86400000");
        let mut lowered = Settings::default();
        lowered.routing.runtime_min_broker_timeout_ms = 10_000;
        assert_eq!(update(&lowered, &[("broker_timeout_ms", "10000")]).unwrap().0.routing.broker_timeout_ms, 10_000);
        assert!(update(&lowered, &[("runtime_min_broker_timeout_ms", "1000")]).is_err(), "restart only");
        assert!(update(&s, &[("broker_timeout_ms", "soon")]).is_err());
        assert!(update(&s, &[("enableTopicList", "true")]).unwrap().1.is_empty(), "no change, nothing reported");
    }
}
