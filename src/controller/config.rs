//! GET_CONTROLLER_CONFIG and UPDATE_CONTROLLER_CONFIG (Java's `ControllerRequestProcessor`
//! over the `Configuration` that holds its `ControllerConfig`): this node's controller settings
//! under Java's key names, and the changes an admin makes to them while it runs. As in Java they
//! are settings of one node, never replicated, and every node answers, leader or not.
//!
//! Java's `Configuration.update` sets whatever has a setter and skips the rest silently: unknown
//! keys are ignored here too, but a value that does not parse, or a key that only applies at
//! start, refuses the whole request (Java would keep the old value, or change a field nothing
//! reads again, and answer SUCCESS either way).

use std::net::SocketAddr;
use std::time::Duration;

use thiserror::Error;
use tracing::{info, warn};

use super::{Controller, ControllerOptions};
use crate::mailbox::Apply;
use crate::origin::ConnId;
use crate::request;
use crate::settings::{canonical_key, properties, Changed};

/// Keys UPDATE_CONTROLLER_CONFIG refuses whatever `configBlackList` says (Java's
/// `ControllerConfig.configBlackList` default, and `rocketmqHome`, as CVE-2023-33246's fix does
/// for the NameServer).
pub const FIXED_BLACK_LIST: &[&str] = &["configBlackList", "configStorePath", "rocketmqHome"];

/// The runtime range of `scanInactiveMasterInterval`, in ms: 100 ms to an hour.
const SWEEP_RANGE_MS: (u64, u64) = (100, 3_600_000);

/// The runtime range of `electMasterMaxRetryCount`.
const RETRY_RANGE: (u64, u64) = (1, 100);

/// Why UPDATE_CONTROLLER_CONFIG refused a change; nothing of the request is applied.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ConfigUpdateError {
    /// The key is on the black list (NO_PERMISSION, Java's remark).
    #[error("Can not update config in black list.")]
    BlackListed(String),
    /// The key is read at start only.
    #[error("{0} applies only at start: change it in the config file and restart")]
    RestartOnly(String),
    /// The key describes how this controller works and has no setting.
    #[error("{0} cannot be changed on this controller")]
    Fixed(String),
    /// The value does not fit the key.
    #[error("invalid value for {key}: {reason}")]
    Invalid {
        /// The key as the request named it.
        key: String,
        /// What is wrong with the value.
        reason: String,
    },
}

/// How a key of the view may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Applied at once.
    Runtime,
    /// Read at start.
    RestartOnly,
    /// No setting behind it.
    Fixed,
}

/// Every key GET_CONTROLLER_CONFIG reports, its value, and how it may change.
fn entries(o: &ControllerOptions) -> Vec<(&'static str, String, Kind)> {
    use Kind::*;
    let peers: Vec<String> = o.peers.iter().map(|p| format!("{}-{}", p.name, p.addr)).collect();
    vec![
        ("configBlackList", o.config_black_list.clone(), RestartOnly),
        ("configStorePath", o.config_store_path.clone(), RestartOnly),
        ("rocketmqHome", o.rocketmq_home.clone(), RestartOnly),
        ("controllerDLegerGroup", o.group.clone(), RestartOnly),
        ("controllerDLegerPeers", peers.join(";"), RestartOnly),
        ("controllerDLegerSelfId", o.self_name.clone(), RestartOnly),
        ("controllerStorePath", o.store_dir.display().to_string(), RestartOnly),
        ("controllerRequestThreadPoolQueueCapacity", o.max_pending_writes.to_string(), RestartOnly),
        // Java scans for expired heartbeats every 5 s; here each broker expires at its own deadline.
        ("scanNotActiveBrokerInterval", "0".into(), Fixed),
        ("scanInactiveMasterInterval", o.sweep_interval.as_millis().to_string(), Runtime),
        ("electMasterMaxRetryCount", o.elect_max_retries.to_string(), Runtime),
        ("enableElectUncleanMaster", o.elect_unclean_master.to_string(), Runtime),
        ("notifyBrokerRoleChanged", o.notify_broker_role_changed.to_string(), Runtime),
        ("controller_raft_heartbeat_ms", o.raft_heartbeat.as_millis().to_string(), RestartOnly),
        ("controller_raft_election_timeout_min_ms", o.raft_election_min.as_millis().to_string(), RestartOnly),
        ("controller_raft_election_timeout_max_ms", o.raft_election_max.as_millis().to_string(), RestartOnly),
        ("controller_snapshot_every_entries", o.snapshot_every_entries.to_string(), RestartOnly),
        ("controller_write_timeout_ms", o.write_timeout.as_millis().to_string(), RestartOnly),
        ("controller_leader_lease_ms", o.leader_lease.as_millis().to_string(), RestartOnly),
        ("controller_max_live_brokers", o.max_live_brokers.to_string(), RestartOnly),
    ]
}

/// GET_CONTROLLER_CONFIG's answer: every key and value, as sorted properties lines.
pub fn view(options: &ControllerOptions) -> String {
    let pairs: Vec<(String, String)> = entries(options).into_iter().map(|(k, v, _)| (k.to_owned(), v)).collect();
    properties::write(&pairs)
}

/// What an accepted update did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Updated {
    /// Keys whose value changed.
    pub changed: Vec<Changed>,
    /// Keys no setting of the controller has, skipped as Java skips them.
    pub ignored: Vec<String>,
}

/// `options` with `changes` applied, all or nothing: a blacklisted key first (NO_PERMISSION,
/// as Java's `validateBlackListConfigExist` checks before anything), then each key in turn.
pub fn update(
    options: &ControllerOptions,
    changes: &[(String, String)],
) -> Result<(ControllerOptions, Updated), ConfigUpdateError> {
    let configured = options.config_black_list.split(';').map(str::trim).filter(|k| !k.is_empty());
    let black: Vec<String> = FIXED_BLACK_LIST.iter().copied().chain(configured).map(canonical_key).collect();
    if let Some((key, _)) = changes.iter().find(|(k, _)| black.contains(&canonical_key(k.trim()))) {
        return Err(ConfigUpdateError::BlackListed(key.clone()));
    }
    let current = entries(options);
    let mut next = options.clone();
    let mut done = Updated::default();
    for (key, value) in changes {
        let ours = canonical_key(key.trim());
        let Some((name, old, kind)) = current.iter().find(|(k, _, _)| canonical_key(k) == ours) else {
            done.ignored.push(key.clone());
            continue;
        };
        match kind {
            Kind::RestartOnly => return Err(ConfigUpdateError::RestartOnly(key.clone())),
            Kind::Fixed => return Err(ConfigUpdateError::Fixed(key.clone())),
            Kind::Runtime => {}
        }
        let new = set(&mut next, name, key, properties::java_trim(value))?;
        if *old != new {
            done.changed.push(Changed { key: key.clone(), old: old.clone(), new });
        }
    }
    Ok((next, done))
}

/// Sets runtime key `name` (spelled `key` in the request) to `value`; the value as now reported.
fn set(o: &mut ControllerOptions, name: &str, key: &str, value: &str) -> Result<String, ConfigUpdateError> {
    let invalid = |reason: String| ConfigUpdateError::Invalid { key: key.to_owned(), reason };
    let number = |(min, max): (u64, u64)| -> Result<u64, ConfigUpdateError> {
        let n: u64 = value.parse().map_err(|_| invalid(format!("{value:?} is not a number")))?;
        if !(min..=max).contains(&n) {
            return Err(invalid(format!("{n} is outside {min}..={max}")));
        }
        Ok(n)
    };
    let flag = || match value.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(format!("{value:?} is not true or false"))),
    };
    match name {
        "scanInactiveMasterInterval" => o.sweep_interval = Duration::from_millis(number(SWEEP_RANGE_MS)?),
        "electMasterMaxRetryCount" => o.elect_max_retries = number(RETRY_RANGE)? as u32,
        "enableElectUncleanMaster" => o.elect_unclean_master = flag()?,
        "notifyBrokerRoleChanged" => o.notify_broker_role_changed = flag()?,
        _ => return Err(ConfigUpdateError::RestartOnly(key.to_owned())),
    }
    let reported = entries(o).into_iter().find(|(k, _, _)| *k == name).map(|(_, v, _)| v);
    Ok(reported.unwrap_or_default())
}

/// GET_CONTROLLER_CONFIG.
#[derive(Debug)]
pub struct GetControllerConfig {
    pub conn: ConnId,
}
request!(GetControllerConfig, String, query);

impl Apply<Controller> for GetControllerConfig {
    fn apply(self, controller: &mut Controller) -> String {
        view(&controller.options)
    }
}

/// UPDATE_CONTROLLER_CONFIG with its parsed properties, from `peer`.
#[derive(Debug)]
pub struct UpdateControllerConfig {
    pub conn: ConnId,
    pub peer: SocketAddr,
    pub changes: Vec<(String, String)>,
}
request!(UpdateControllerConfig, Result<(), ConfigUpdateError>);

impl Apply<Controller> for UpdateControllerConfig {
    fn apply(self, controller: &mut Controller) -> Result<(), ConfigUpdateError> {
        let peer = self.peer;
        match update(&controller.options, &self.changes) {
            Ok((next, done)) => {
                for c in &done.changed {
                    info!(%peer, key = %c.key, old = %c.old, new = %c.new, "controller config updated");
                }
                if !done.ignored.is_empty() {
                    warn!(%peer, keys = ?done.ignored, "controller config update: unknown keys ignored");
                }
                controller.options = next;
                Ok(())
            }
            Err(error) => {
                warn!(%peer, %error, "controller config update refused");
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;

    fn options() -> ControllerOptions {
        let mut s = Settings::default();
        s.controller.controller_mode = crate::settings::ControllerMode::Embedded;
        s.controller.controller_peers = "n0-127.0.0.1:9878;n1-127.0.0.1:9879".into();
        s.controller.controller_self_id = "n0".into();
        ControllerOptions::from_settings(&s).unwrap()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn the_view_names_java_keys_and_the_peers_as_java_writes_them() {
        let text = view(&options());
        let got = properties::parse(&text).unwrap();
        let value = |k: &str| got.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(value("controllerDLegerPeers"), Some("n0-127.0.0.1:9878;n1-127.0.0.1:9879"));
        assert_eq!(value("controllerDLegerSelfId"), Some("n0"));
        assert_eq!(value("notifyBrokerRoleChanged"), Some("true"));
        assert_eq!(value("scanInactiveMasterInterval"), Some("5000"));
    }

    #[test]
    fn blacklisted_keys_refuse_everything_and_unknown_keys_are_skipped() {
        let o = options();
        for key in ["configBlackList", "configStorePath", "rocketmqHome", "kvConfigPath", "config_store_path"] {
            let err = update(&o, &pairs(&[("notifyBrokerRoleChanged", "false"), (key, "/tmp")])).unwrap_err();
            assert_eq!(err, ConfigUpdateError::BlackListed(key.into()));
        }
        let (next, done) = update(&o, &pairs(&[("noSuchKey", "1"), ("enableElectUncleanMaster", "TRUE")])).unwrap();
        assert!(next.elect_unclean_master);
        assert_eq!(done.ignored, vec!["noSuchKey".to_owned()]);
        assert_eq!(done.changed[0].new, "true");
    }

    #[test]
    fn bad_values_and_restart_only_keys_change_nothing() {
        let o = options();
        let bad = |p: &[(&str, &str)]| update(&o, &pairs(p)).unwrap_err();
        assert!(matches!(bad(&[("electMasterMaxRetryCount", "many")]), ConfigUpdateError::Invalid { .. }));
        assert!(matches!(bad(&[("scanInactiveMasterInterval", "5")]), ConfigUpdateError::Invalid { .. }));
        assert!(matches!(bad(&[("notifyBrokerRoleChanged", "yes")]), ConfigUpdateError::Invalid { .. }));
        assert_eq!(
            bad(&[("controllerDLegerPeers", "n0-a:1")]),
            ConfigUpdateError::RestartOnly("controllerDLegerPeers".into())
        );
        assert_eq!(
            bad(&[("scanNotActiveBrokerInterval", "1000")]),
            ConfigUpdateError::Fixed("scanNotActiveBrokerInterval".into())
        );
        let (next, _) =
            update(&o, &pairs(&[("scanInactiveMasterInterval", "1000"), ("electMasterMaxRetryCount", "5")])).unwrap();
        assert_eq!((next.sweep_interval, next.elect_max_retries), (Duration::from_millis(1000), 5));
    }
}
