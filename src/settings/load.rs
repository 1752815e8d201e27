//! Layering the sources into `Settings` (Java keys screened, every error naming its source) and
//! applying UPDATE_NAMESRV_CONFIG changes to settings.

use std::path::Path;

use config::{Config, ConfigError, Map, Value};

use super::screen::screen;
use super::sources::{closest, env_layer, flags_layer, read_file, Layer, LayerOrigin, Sources};
use super::store::drop_own_store_key;
use super::{addr, credentials, java_names, ConfigFormat, Settings, SettingsError, KEY_ORDER};

impl Settings {
    /// Loads every layer. `overrides` are the command-line flags, as (key, value) pairs.
    pub fn load(
        default_file: Option<&Path>,
        config_file: Option<&Path>,
        env_prefix: &str,
        overrides: &[(String, String)],
    ) -> Result<Settings, SettingsError> {
        Sources {
            defaults_file: default_file.map(Path::to_owned),
            config_file: config_file.map(Path::to_owned),
            config_format: ConfigFormat::Auto,
            env_prefix: env_prefix.to_owned(),
            overrides: overrides.to_vec(),
        }
        .load()
    }

    /// The changes that name a setting, as (our key, value); the others are dropped.
    pub fn known_changes(&self, changes: &[(String, String)]) -> Vec<(String, String)> {
        let known = Settings::keys();
        changes.iter().map(|(k, v)| (canonical_key(k), v.clone())).filter(|(k, _)| known.contains(k)).collect()
    }

    /// These settings with `values` (our keys or Java's) set, unchecked by `validate`.
    pub fn with_values(&self, values: &[(String, String)]) -> Result<Settings, SettingsError> {
        let layer = values.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
        merge(self, vec![layer])
    }
}

impl Sources {
    /// Loads every layer: built-in defaults < defaults file < `-c` file < runtime updates
    /// (`config_store_path`) < environment < flags. Java keys with no setting here warn and are
    /// ignored; unknown keys stop it, naming the source.
    pub fn load(&self) -> Result<Settings, SettingsError> {
        let mut layers = Vec::new();
        if let Some(path) = self.defaults_file.as_deref().filter(|p| p.exists()) {
            layers.push(read_file(path, ConfigFormat::Toml, LayerOrigin::DefaultsFile(path.into()))?.0);
        }
        let mut config_is_properties = false;
        if let Some(path) = &self.config_file {
            if !path.exists() {
                return Err(SettingsError::Missing(path.clone()));
            }
            let (layer, format) = read_file(path, self.config_format, LayerOrigin::ConfigFile(path.clone()))?;
            config_is_properties = format == ConfigFormat::Properties;
            layers.push(layer);
        }
        let after_files = layers.len();
        let keys = Settings::keys();
        layers.push(env_layer(&self.env_prefix, &keys)?);
        layers.push(flags_layer(&self.overrides));
        let java_file = |l: &Layer| config_is_properties && matches!(l.origin, LayerOrigin::ConfigFile(_));
        let mut layers = layers
            .into_iter()
            .map(|l| {
                let properties = java_file(&l);
                screen(l, properties)
            })
            .collect::<Result<Vec<_>, _>>()?;
        // As in Java's NamesrvStartup, a properties file given with -c is the config store
        // (`setConfigStorePath(file)`), whatever its own configStorePath says.
        let java_conf = self.config_file.as_deref().filter(|_| config_is_properties);
        if let Some(path) = java_conf {
            drop_own_store_key(&mut layers[after_files - 1], path);
        }
        let mut settings = merge_layers(&layers)?;
        if let Some(updates) = self.store_layer(&mut settings, &layers, after_files, java_conf)? {
            layers.insert(after_files, updates);
            settings = merge_layers(&layers)?;
        }
        if !layers.iter().any(|l| l.sets("http_listen")) {
            settings.observe.http_listen = follow_remoting_listener(&settings)?;
        }
        settings.expand_credentials(std::env::var(credentials::VARIABLE).ok().as_deref())?;
        resolve_relative_paths(&mut settings, &layers);
        settings.validate().map_err(|error| blame(&layers, error))?;
        Ok(settings)
    }
}

/// Makes the relative file paths absolute, so that they do not depend on the directory namesrv
/// was started in (`/` under systemd): a path from a config file (the defaults file or `-c`) is
/// relative to that file's directory, one from the environment or a flag to the working
/// directory. (Java resolves them against its working directory; a Java file's relative paths
/// are rare, and this is what a file moved with its state expects.) Empty values stay empty.
fn resolve_relative_paths(settings: &mut Settings, layers: &[Layer]) {
    let s = settings;
    let paths = [
        ("kv_config_path", &mut s.state.kv_config_path),
        ("config_store_path", &mut s.state.config_store_path),
        ("acl_accounts_file", &mut s.acl.acl_accounts_file),
        ("tls_cert_file", &mut s.tls.tls_cert_file),
        ("tls_key_file", &mut s.tls.tls_key_file),
        ("tls_client_ca_file", &mut s.tls.tls_client_ca_file),
    ];
    for (key, value) in paths {
        let relative = !value.trim().is_empty() && Path::new(value.as_str()).is_relative();
        let Some(layer) = layers.iter().rev().find(|l| l.sets(key)).filter(|_| relative) else { continue };
        let base = match &layer.origin {
            LayerOrigin::DefaultsFile(file) | LayerOrigin::ConfigFile(file) => {
                std::path::absolute(file).ok().and_then(|f| f.parent().map(Path::to_owned))
            }
            _ => std::env::current_dir().ok(),
        };
        if let Some(base) = base {
            *value = base.join(value.as_str()).display().to_string();
        }
    }
}

/// `http_listen` when no layer sets it: the remoting listener's host, four ports up, so that
/// `--listen 127.0.0.1:P` keeps HTTP on loopback too and two servers on one host do not share it.
fn follow_remoting_listener(settings: &Settings) -> Result<String, SettingsError> {
    addr::default_http_listen(&settings.listen.bind_address, settings.listen.listen_port).ok_or_else(|| {
        SettingsError::Invalid {
            key: "http_listen",
            reason: format!(
                "listen_port {} leaves no port for it ({} above it is past 65535): set it, or empty to turn it off",
                settings.listen.listen_port,
                addr::HTTP_PORT_OFFSET
            ),
        }
    })
}

/// Every layer over the built-in defaults; a layer that does not fit is named in the error.
fn merge_layers(layers: &[Layer]) -> Result<Settings, SettingsError> {
    let defaults = Settings::default();
    let maps: Vec<Map<String, Value>> = layers.iter().map(|l| l.values.iter().cloned().collect()).collect();
    for (layer, map) in layers.iter().zip(&maps) {
        if let Err(error) = merge(&defaults, vec![map.clone()]) {
            let origin = layer.origin.clone();
            return Err(
                bad_value(layer, &defaults).unwrap_or(SettingsError::InLayer { origin, error: Box::new(error) })
            );
        }
    }
    merge(&defaults, maps)
}

/// The first value of `layer` of the wrong type for its setting, named as the layer spells it
/// (`listenPort=99999`, `NAMESRV_LISTEN_PORT=abc`).
fn bad_value(layer: &Layer, defaults: &Settings) -> Option<SettingsError> {
    layer.values.iter().find_map(|(key, value)| {
        let mut error = merge(defaults, vec![Map::from([(key.clone(), value.clone())])]).err()?;
        let expected = loop {
            match error {
                SettingsError::Load(ConfigError::Type { expected, .. }) => break expected,
                SettingsError::Load(ConfigError::At { error: inner, .. }) => error = SettingsError::Load(*inner),
                _ => return None,
            }
        };
        let (key, value) = (layer.spelling(key), value.to_string());
        Some(SettingsError::BadValue { origin: layer.origin.clone(), key, value, expected })
    })
}

/// Names the last layer that set the key a validation error is about, and the key as it spells
/// it when that is not our spelling.
fn blame(layers: &[Layer], error: SettingsError) -> SettingsError {
    let SettingsError::Invalid { key, .. } = &error else { return error };
    let Some(layer) = layers.iter().rev().find(|l| l.sets(key)) else { return error };
    let origin = layer.origin.clone();
    match layer.spelling_of(key).filter(|spelled| spelled != key) {
        Some(spelled) => SettingsError::Spelled { origin, spelled, error: Box::new(error) },
        None => SettingsError::InLayer { origin, error: Box::new(error) },
    }
}

/// `base` with each layer's keys (canonicalized) set over it, in order.
pub(super) fn merge(base: &Settings, layers: Vec<Map<String, Value>>) -> Result<Settings, SettingsError> {
    let mut builder = Config::builder().add_source(Config::try_from(base)?);
    for layer in layers {
        for (key, value) in layer {
            builder = builder.set_override(canonical_key(&key), value)?;
        }
    }
    from_config(builder.build()?)
}

/// The settings in `config`, group by group; a key no group has stops it, named with the setting
/// it most likely meant (flattened groups cannot deny unknown keys themselves).
fn from_config(config: Config) -> Result<Settings, SettingsError> {
    let mut keys = config.clone().try_deserialize::<Map<String, Value>>()?.into_keys();
    if let Some(key) = keys.find(|key| !KEY_ORDER.contains(&key.as_str())) {
        let suggestion = closest(&key, &Settings::keys()).map(str::to_owned);
        return Err(SettingsError::UnknownKey { key, suggestion });
    }
    Ok(Settings {
        listen: config.clone().try_deserialize()?,
        routing: config.clone().try_deserialize()?,
        state: config.clone().try_deserialize()?,
        limits: config.clone().try_deserialize()?,
        observe: config.clone().try_deserialize()?,
        acl: config.clone().try_deserialize()?,
        tls: config.clone().try_deserialize()?,
        controller: config.try_deserialize()?,
    })
}

/// Maps a Java spelling (any case) to our key; other keys pass unchanged, to fail by name.
pub fn canonical_key(key: &str) -> String {
    let folded =
        |s: &str| s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect::<String>();
    let key_folded = folded(key);
    java_names()
        .find(|(java, ours)| folded(java) == key_folded || folded(ours) == key_folded)
        .map(|(_, ours)| ours.to_owned())
        .unwrap_or_else(|| key.to_owned())
}

/// The Java name of one of our keys, or the key itself when Java has none.
pub fn java_name(key: &str) -> &str {
    java_names().find(|(_, ours)| *ours == key).map_or(key, |(java, _)| java)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(dir: &Path, config: &str, overrides: &[(&str, &str)]) -> Sources {
        let file = dir.join("namesrv.toml");
        std::fs::write(&file, config).unwrap();
        let store = dir.join("store.properties").display().to_string();
        let mut all = vec![("config_store_path".to_owned(), store)];
        all.extend(overrides.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        Sources {
            defaults_file: None,
            config_file: Some(file),
            config_format: ConfigFormat::Auto,
            env_prefix: "NAMESRV_TEST_LOAD".into(),
            overrides: all,
        }
    }

    fn dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("namesrv-load-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn runtime_updates_sit_between_the_config_file_and_the_flags() {
        let dir = dir("order");
        let store = "enableTopicList=false\nscanNotActiveBrokerInterval=700\nkvConfigPath=/elsewhere.json\nfoo=1\nacl_enabled=false\n";
        std::fs::write(dir.join("store.properties"), store).unwrap();
        let config =
            "enable_topic_list = true\nscan_interval_ms = 500\nacl_enabled = true\nacl_accounts_file = \"/a\"\n";
        let s = sources(&dir, config, &[("scan_interval_ms", "900")]);
        let settings = s.load().unwrap();
        assert!(settings.acl.acl_enabled, "the runtime-updates file cannot turn access control off");
        assert!(!settings.routing.enable_topic_list, "the update wins over the -c file");
        assert_eq!(settings.routing.scan_interval_ms, 900, "a flag wins over the update");
        assert_ne!(settings.state.kv_config_path, "/elsewhere.json", "runtime updates never move the state");
    }

    #[test]
    fn the_runtime_updates_file_sets_runtime_keys_only() {
        let dir = dir("restart-only");
        let store = "listenPort=1234\nbindAddress=10.0.0.1\nmax_frame_bytes=100000\nneedWaitForService=true\n\
                     kvConfigPath=/x.json\nserverWorkerThreads=8\nenableTopicList=false\n";
        std::fs::write(dir.join("store.properties"), store).unwrap();
        let settings = sources(&dir, "", &[]).load().unwrap();
        let defaults = Settings::default();
        assert_eq!(settings.listen, defaults.listen, "the listener is restart-only: {:?}", settings.listen);
        assert_eq!(settings.limits.max_frame_bytes, defaults.limits.max_frame_bytes);
        assert!(!settings.routing.need_wait_for_service, "the readiness wait is restart-only");
        assert!(!settings.routing.enable_topic_list, "a runtime key still applies");
    }

    fn load_properties(name: &str, bytes: &[u8]) -> Result<Settings, SettingsError> {
        let dir = dir(name);
        let file = dir.join("namesrv.properties");
        std::fs::write(&file, bytes).unwrap();
        let store = ("config_store_path".to_owned(), dir.join("store.properties").display().to_string());
        let format = ConfigFormat::Auto;
        let env_prefix = "NAMESRV_TEST_LOAD".to_owned();
        Sources {
            defaults_file: None,
            config_file: Some(file),
            config_format: format,
            env_prefix,
            overrides: vec![store],
        }
        .load()
    }

    #[test]
    fn java_files_with_a_byte_order_mark_latin1_text_or_trailing_spaces_load() {
        let bom = load_properties("bom", b"\xef\xbb\xbflistenPort=9877\n").unwrap();
        assert_eq!(bom.listen.listen_port, 9877);
        let latin1 = load_properties("latin1", b"rocketmqHome=/opt/caf\xe9\nlistenPort=9878\n").unwrap();
        assert_eq!((latin1.state.rocketmq_home.as_str(), latin1.listen.listen_port), ("/opt/caf\u{e9}", 9878));
        let spaces = load_properties("spaces", b"listenPort=9879  \nenableTopicList=false \t\nrocketmqHome= /x \n");
        let spaces = spaces.unwrap();
        assert_eq!((spaces.listen.listen_port, spaces.routing.enable_topic_list), (9879, false));
        assert_eq!(spaces.state.rocketmq_home, "/x", "properties2Object trims strings too");
    }

    #[test]
    fn java_booleans_and_dotted_keys_load_as_java_reads_them() {
        let text = b"needWaitForService=yes\nenableTopicList=on\nsupportActingMaster=\norderMessageEnable=TRUE\n\
                     rocketmq.namesrv.domain=x\ncom.rocketmq.remoting.socket.sndbuf.size=65536\nlistenPort=9875\n";
        let s = load_properties("bools", text).unwrap();
        let r = &s.routing;
        assert_eq!((r.need_wait_for_service, r.enable_topic_list, r.support_acting_master), (false, false, false));
        assert!(r.order_message_enable);
        assert_eq!(s.listen.listen_port, 9875);
    }

    #[test]
    fn a_bad_value_is_named_as_the_file_spells_it() {
        let err = load_properties("range", b"listenPort=99999\n").unwrap_err().to_string();
        assert!(err.contains("listenPort=99999") && err.ends_with("expected an unsigned 16 bit integer"), "{err}");
        let err = load_properties("zero", b"scanNotActiveBrokerInterval=0\n").unwrap_err().to_string();
        assert!(err.contains(": scanNotActiveBrokerInterval: invalid setting scan_interval_ms"), "{err}");
    }

    #[test]
    fn the_config_store_cannot_be_the_toml_config_file() {
        let dir = dir("same");
        let file = dir.join("namesrv.toml").display().to_string();
        let err = sources(&dir, "", &[("config_store_path", &file)]).load().unwrap_err().to_string();
        assert!(err.contains("config_store_path") && err.contains("which is TOML"), "{err}");
    }
}
