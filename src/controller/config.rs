//! GET_CONTROLLER_CONFIG and UPDATE_CONTROLLER_CONFIG (Java's `ControllerRequestProcessor`
//! over the `Configuration` that holds its `ControllerConfig`): this node's controller settings
//! under Java's key names, and the changes an admin makes to them while it runs. As in Java they
//! are settings of one node, never replicated, and every node answers, leader or not. A change,
//! and SIGHUP's reload, go through the settings' own update ([`Settings::with_updates`]): the
//! keys, Java names, ranges and what may change at runtime are the one definition in
//! `CONTROLLER_KEYS`.
//!
//! Java's `Configuration.update` sets whatever has a setter and skips the rest silently: unknown
//! keys are skipped here too, but a value that does not parse, or a key that only applies at
//! start, refuses the whole request (Java would keep the old value, or change a field nothing
//! reads again, and answer SUCCESS either way).

use std::net::SocketAddr;
use std::path::Path;

use tracing::{info, warn};

use super::{Controller, ControllerOptions};
use crate::mailbox::Apply;
use crate::origin::ConnId;
use crate::request;
use crate::settings::controller::{Change, CONTROLLER_KEYS};
use crate::settings::{java_name, properties, Settings, UpdateError, UpdateScope, CONTROLLER_FIXED};

/// Every key GET_CONTROLLER_CONFIG reports with its value: each controller setting (under its
/// Java name where it has one), the peers as Java writes them, the store directory as used, and
/// the keys of Java's `ControllerConfig` that describe this controller without a setting.
fn entries(settings: &Settings, options: &ControllerOptions) -> Vec<(String, String)> {
    let values = settings.values();
    let value = |key: &str| values.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).unwrap_or_default();
    let mut pairs: Vec<(String, String)> = CONTROLLER_KEYS
        .iter()
        .map(|k| {
            let shown = match k.key {
                "controller_peers" => settings.controller.peers_text(),
                "controller_store_path" => options.store_dir.display().to_string(),
                key => value(key),
            };
            (java_name(k.key).to_owned(), shown)
        })
        .collect();
    let home = match settings.state.rocketmq_home.trim() {
        // As GET_NAMESRV_CONFIG: the state directory when unset.
        "" => Path::new(&settings.state.kv_config_path).parent().map(|d| d.display().to_string()).unwrap_or_default(),
        home => home.to_owned(),
    };
    pairs.push(("configBlackList".into(), settings.state.config_black_list.clone()));
    pairs.push(("configStorePath".into(), settings.state.config_store_path.clone()));
    pairs.push(("rocketmqHome".into(), home));
    // Java scans for expired heartbeats every 5 s; here each broker expires at its own deadline.
    pairs.extend(CONTROLLER_FIXED.iter().map(|key| ((*key).to_owned(), "0".to_owned())));
    pairs
}

/// GET_CONTROLLER_CONFIG's answer: every key and value, as sorted properties lines.
pub fn view(settings: &Settings, options: &ControllerOptions) -> String {
    properties::write(&entries(settings, options))
}

/// GET_CONTROLLER_CONFIG.
#[derive(Debug)]
pub struct GetControllerConfig {
    pub conn: ConnId,
}
request!(GetControllerConfig, String, query);

impl Apply<Controller> for GetControllerConfig {
    fn apply(self, controller: &mut Controller) -> String {
        view(&controller.settings, &controller.options)
    }
}

/// UPDATE_CONTROLLER_CONFIG with its parsed properties, from `peer`.
#[derive(Debug)]
pub struct UpdateControllerConfig {
    pub conn: ConnId,
    pub peer: SocketAddr,
    pub changes: Vec<(String, String)>,
}
request!(UpdateControllerConfig, Result<(), UpdateError>);

impl Apply<Controller> for UpdateControllerConfig {
    fn apply(self, controller: &mut Controller) -> Result<(), UpdateError> {
        let peer = self.peer;
        let update = controller.settings.with_updates(UpdateScope::Controller, &self.changes);
        let update = update.inspect_err(|error| warn!(%peer, %error, "controller config update refused"))?;
        for c in &update.changed {
            info!(%peer, key = %c.key, old = %c.old, new = %c.new, "controller config updated");
        }
        if !update.ignored.is_empty() {
            warn!(%peer, keys = ?update.ignored, "controller config update: unknown keys ignored");
        }
        controller.settle(update.settings);
        Ok(())
    }
}

/// SIGHUP: the settings as the config sources now say; the controller's runtime keys that
/// changed apply at once, the others are logged as waiting for a restart.
#[derive(Debug)]
pub struct ReloadControllerSettings {
    pub conn: ConnId,
    pub loaded: Box<Settings>,
}
request!(ReloadControllerSettings, ());

impl Apply<Controller> for ReloadControllerSettings {
    fn apply(self, controller: &mut Controller) {
        let before = controller.settings.values();
        let mut changes = Vec::new();
        for (key, value) in self.loaded.values() {
            let Some(def) = CONTROLLER_KEYS.iter().find(|k| k.key == key) else { continue };
            let Some((_, old)) = before.iter().find(|(k, v)| *k == key && *v != value) else { continue };
            match def.change {
                Change::Runtime => changes.push((key, value)),
                Change::Restart => {
                    warn!(key = %key, old = %old, new = %value, "changed controller setting needs a restart")
                }
            }
        }
        match controller.settings.with_updates(UpdateScope::Controller, &changes) {
            Ok(update) => {
                for c in &update.changed {
                    info!(key = %c.key, old = %c.old, new = %c.new, "controller setting reloaded");
                }
                controller.settle(update.settings);
            }
            Err(error) => warn!(%error, "controller settings not reloaded"),
        }
    }
}

impl Controller {
    /// Takes `settings` as this peer's controller settings, and the options they give.
    fn settle(&mut self, settings: Settings) {
        if let Some(options) = ControllerOptions::from_settings(&settings) {
            self.options = options;
        }
        self.settings = settings;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ControllerMode;

    fn settings() -> Settings {
        let mut s = Settings::default();
        s.controller.controller_mode = ControllerMode::Embedded;
        s.controller.controller_peers = "n0-127.0.0.1:9878;n1-127.0.0.1:9879".into();
        s.controller.controller_self_id = "n0".into();
        s
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    fn update(s: &Settings, p: &[(&str, &str)]) -> Result<crate::settings::Update, UpdateError> {
        s.with_updates(UpdateScope::Controller, &pairs(p))
    }

    #[test]
    fn the_view_names_java_keys_and_the_peers_as_java_writes_them() {
        let s = settings();
        let text = view(&s, &ControllerOptions::from_settings(&s).unwrap());
        let got = properties::parse(&text).unwrap();
        let value = |k: &str| got.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(value("controllerDLegerPeers"), Some("n0-127.0.0.1:9878;n1-127.0.0.1:9879"));
        assert_eq!(value("controllerDLegerSelfId"), Some("n0"));
        assert_eq!(value("notifyBrokerRoleChanged"), Some("true"));
        assert_eq!(value("scanInactiveMasterInterval"), Some("5000"));
        assert_eq!(value("controllerRequestThreadPoolQueueCapacity"), Some("1024"));
        assert_eq!(value("controller_raft_heartbeat_ms"), Some("100"));
        assert_eq!(value("scanNotActiveBrokerInterval"), Some("0"));
    }

    #[test]
    fn blacklisted_keys_refuse_everything_and_unknown_keys_are_skipped() {
        let s = settings();
        for key in ["configBlackList", "configStorePath", "rocketmqHome", "kvConfigPath", "config_store_path"] {
            let err = update(&s, &[("notifyBrokerRoleChanged", "false"), (key, "/tmp")]).unwrap_err();
            assert_eq!(err, UpdateError::BlackListed(key.into()));
        }
        let done = update(&s, &[("noSuchKey", "1"), ("enableElectUncleanMaster", "TRUE")]).unwrap();
        assert!(done.settings.controller.controller_enable_elect_unclean_master);
        assert_eq!(done.ignored, vec!["noSuchKey".to_owned()]);
        assert_eq!(done.changed[0].new, "true");
    }

    #[test]
    fn bad_values_and_restart_only_keys_change_nothing() {
        let s = settings();
        let bad = |p: &[(&str, &str)]| update(&s, p).unwrap_err();
        assert!(matches!(bad(&[("electMasterMaxRetryCount", "many")]), UpdateError::Invalid { .. }));
        assert!(matches!(bad(&[("scanInactiveMasterInterval", "5")]), UpdateError::Invalid { .. }));
        assert!(matches!(bad(&[("notifyBrokerRoleChanged", "yes")]), UpdateError::Invalid { .. }));
        assert_eq!(
            bad(&[("controllerDLegerPeers", "n0-a:1")]),
            UpdateError::RestartOnly("controllerDLegerPeers".into())
        );
        assert_eq!(
            bad(&[("controller_raft_heartbeat_ms", "50")]),
            UpdateError::RestartOnly("controller_raft_heartbeat_ms".into())
        );
        assert_eq!(
            bad(&[("scanNotActiveBrokerInterval", "1000")]),
            UpdateError::Fixed("scanNotActiveBrokerInterval".into())
        );
        let done = update(&s, &[("scanInactiveMasterInterval", "1000"), ("electMasterMaxRetryCount", "5")]).unwrap();
        let options = ControllerOptions::from_settings(&done.settings).unwrap();
        assert_eq!((options.sweep_interval, options.elect_max_retries), (std::time::Duration::from_millis(1000), 5));
    }

    #[test]
    fn a_file_and_the_wire_hold_the_sweep_to_one_range() {
        let mut s = settings();
        s.controller.controller_scan_inactive_master_interval_ms = 1;
        assert!(s.validate().unwrap_err().to_string().contains("controller_scan_inactive_master_interval_ms"));
        let wire = update(&settings(), &[("scanInactiveMasterInterval", "1")]).unwrap_err();
        assert!(wire.to_string().contains("100..=3600000"), "{wire}");
    }
}
