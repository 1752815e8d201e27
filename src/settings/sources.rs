//! Where settings come from and how each source is read into a layer: the defaults file, the
//! `-c` file (TOML or Java properties, detected by content), the runtime-updates file, the
//! environment (`NAMESRV_<KEY>` for settings only) and the command line.

use std::fmt;
use std::path::{Path, PathBuf};

use config::{File, FileFormat, Source, Value};
use tracing::{debug, warn};

use super::{canonical_key, properties, ConfigFormat, SettingsError};

/// The defaults file's name inside the config directory.
pub const DEFAULTS_FILE_NAME: &str = "default.toml";

/// The config directory when `--config-dir` is not given.
pub const DEFAULT_CONFIG_DIR: &str = "/etc/namesrv";

/// The environment prefix of settings: `NAMESRV_LISTEN_PORT` sets `listen_port`.
pub const ENV_PREFIX: &str = "NAMESRV";

/// Environment variables under the prefix that are known not to be settings and are ignored
/// without a warning: RocketMQ's clients and brokers read `NAMESRV_ADDR`, and deployments export
/// it everywhere.
pub const ENV_NOT_SETTINGS: &[&str] = &["NAMESRV_ADDR"];

/// The sources of the settings, as the command line names them. Loaded at start-up and again
/// on SIGHUP.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The defaults file (`<config dir>/default.toml`), read when it exists.
    pub defaults_file: Option<PathBuf>,
    /// The `-c` file, which must exist.
    pub config_file: Option<PathBuf>,
    /// How to read the `-c` file.
    pub config_format: ConfigFormat,
    /// The environment prefix (`NAMESRV`).
    pub env_prefix: String,
    /// Command-line flags as (key, value), in order.
    pub overrides: Vec<(String, String)>,
}

/// Where a layer came from, named in every message about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `<config dir>/default.toml`.
    DefaultsFile(PathBuf),
    /// The `-c` file.
    ConfigFile(PathBuf),
    /// `config_store_path`, where UPDATE_NAMESRV_CONFIG persists changes.
    RuntimeUpdates(PathBuf),
    /// `NAMESRV_<KEY>` variables.
    Environment,
    /// `--listen`, `--set` and the other flags.
    CommandLine,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::DefaultsFile(p) => write!(f, "defaults file {}", p.display()),
            Origin::ConfigFile(p) => write!(f, "config file {}", p.display()),
            Origin::RuntimeUpdates(p) => write!(f, "runtime updates file {}", p.display()),
            Origin::Environment => f.write_str("environment"),
            Origin::CommandLine => f.write_str("command line"),
        }
    }
}

/// One source's keys and values, in the source's order (a later duplicate wins).
#[derive(Debug, Clone)]
pub struct Layer {
    /// Where it came from.
    pub origin: Origin,
    /// (key as written, value).
    pub values: Vec<(String, Value)>,
}

impl Layer {
    /// Whether the layer sets `key` (our spelling), under any accepted spelling.
    pub fn sets(&self, key: &str) -> bool {
        self.values.iter().any(|(k, _)| canonical_key(k) == key)
    }
}

/// The format `--config-format auto` picks: `.toml` and `.properties` by name; any other name
/// (`namesrv.conf`) by content, TOML when the text parses as TOML, Java properties otherwise.
pub fn detect_format(path: &Path, text: &str) -> ConfigFormat {
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => ConfigFormat::Toml,
        Some("properties") => ConfigFormat::Properties,
        _ if parse_toml(text).is_ok() => ConfigFormat::Toml,
        _ => ConfigFormat::Properties,
    }
}

fn parse_toml(text: &str) -> Result<Vec<(String, Value)>, config::ConfigError> {
    Ok(File::from_str(text, FileFormat::Toml).collect()?.into_iter().collect())
}

/// Reads a config file into a layer; returns the format it was read as.
pub fn read_file(path: &Path, format: ConfigFormat, origin: Origin) -> Result<(Layer, ConfigFormat), SettingsError> {
    let text = std::fs::read_to_string(path).map_err(|error| SettingsError::Read { path: path.into(), error })?;
    let format = match format {
        ConfigFormat::Auto => detect_format(path, &text),
        given => given,
    };
    debug!(file = %path.display(), format = %format, "reading config file");
    let values = match format {
        ConfigFormat::Properties => properties::parse(&text)
            .map_err(|error| SettingsError::Properties { path: path.into(), error })?
            .into_iter()
            .map(|(k, v)| (k, Value::from(v)))
            .collect(),
        _ => parse_toml(&text).map_err(|error| SettingsError::Toml { path: path.into(), error })?,
    };
    Ok((Layer { origin, values }, format))
}

/// The environment layer: `<PREFIX>_<KEY>` for every `KEY` that is a setting (any case, Java
/// spelling too). Other variables under the prefix are not settings and never stop start-up:
/// they are ignored with one warning naming them (`NAMESRV_ADDR` without one).
pub fn env_layer(prefix: &str, is_setting: impl Fn(&str) -> bool) -> Layer {
    let head = format!("{prefix}_");
    let mut values = Vec::new();
    let mut ignored = Vec::new();
    for (name, value) in std::env::vars_os().filter_map(|(n, v)| Some((n.into_string().ok()?, v))) {
        let Some(rest) = name.strip_prefix(&head) else { continue };
        let key = canonical_key(&rest.to_ascii_lowercase());
        match value.into_string() {
            Ok(value) if is_setting(&key) => values.push((key, Value::from(value))),
            _ if ENV_NOT_SETTINGS.contains(&name.as_str()) => debug!(variable = %name, "not a setting, ignored"),
            _ => ignored.push(name),
        }
    }
    if !ignored.is_empty() {
        ignored.sort();
        warn!(variables = ?ignored, "ignoring environment variables that are not settings");
    }
    Layer { origin: Origin::Environment, values }
}

/// The command-line layer.
pub fn flags_layer(overrides: &[(String, String)]) -> Layer {
    let values = overrides.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
    Layer { origin: Origin::CommandLine, values }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_follows_the_name_then_the_content() {
        let p = |name: &str| PathBuf::from(name);
        assert_eq!(detect_format(&p("a.toml"), "listenPort=1\nbindAddress=1.2.3.4\n"), ConfigFormat::Toml);
        assert_eq!(detect_format(&p("a.properties"), "listen_port = 1\n"), ConfigFormat::Properties);
        assert_eq!(
            detect_format(&p("namesrv.conf"), "listenPort=9876\nrocketmqHome=/opt/mq\n"),
            ConfigFormat::Properties
        );
        assert_eq!(detect_format(&p("namesrv.conf"), "bind_address = \"::\"\n"), ConfigFormat::Toml);
        assert_eq!(detect_format(&p("namesrv"), "listenPort : 9876\n"), ConfigFormat::Properties);
    }
}
