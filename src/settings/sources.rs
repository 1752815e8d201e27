//! Where settings come from and how each source is read into a layer: the defaults file, the
//! `-c` file (TOML or Java properties, detected by content), the runtime-updates file, the
//! environment (`NAMESRV_<KEY>` for settings only) and the command line.

use std::fmt;
use std::path::{Path, PathBuf};

use config::{File, FileFormat, Source, Value};
use tracing::{debug, info};

use super::{canonical_key, java_names, properties, ConfigFormat, SettingsError};

/// The defaults file's name inside the config directory.
pub const DEFAULTS_FILE_NAME: &str = "default.toml";

/// The config directory when `--config-dir` is not given.
pub const DEFAULT_CONFIG_DIR: &str = "/etc/namesrv";

/// The environment prefix of settings: `NAMESRV_LISTEN_PORT` sets `listen_port`.
pub const ENV_PREFIX: &str = "NAMESRV";

/// Environment variables under the prefix that are known not to be settings and are ignored:
/// RocketMQ's clients, brokers and `mqadmin` read `NAMESRV_ADDR` (the name-server list), and
/// deployments export it everywhere, this server's own environment included.
pub const ENV_NOT_SETTINGS: &[&str] = &["NAMESRV_ADDR"];

/// A `NAMESRV_*` variable that names no setting, with the setting it most likely meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVariable {
    /// The variable as set.
    pub name: String,
    /// `<PREFIX>_<KEY>` of the closest setting, when one is close.
    pub suggestion: Option<String>,
}

impl fmt::Display for UnknownVariable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.suggestion {
            Some(s) => write!(f, "{} (did you mean {s}?)", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// `a (did you mean b?), c`: the unknown variables of one error, for its message.
pub fn describe_unknown(unknown: &[UnknownVariable]) -> String {
    let names: Vec<String> = unknown.iter().map(ToString::to_string).collect();
    format!("not a setting: {}", names.join(", "))
}

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
pub enum LayerOrigin {
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

impl fmt::Display for LayerOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayerOrigin::DefaultsFile(p) => write!(f, "defaults file {}", p.display()),
            LayerOrigin::ConfigFile(p) => write!(f, "config file {}", p.display()),
            LayerOrigin::RuntimeUpdates(p) => write!(f, "runtime updates file {}", p.display()),
            LayerOrigin::Environment => f.write_str("environment"),
            LayerOrigin::CommandLine => f.write_str("command line"),
        }
    }
}

/// One source's keys and values, in the source's order (a later duplicate wins).
#[derive(Debug, Clone)]
pub struct Layer {
    /// Where it came from.
    pub origin: LayerOrigin,
    /// (key as written, value).
    pub values: Vec<(String, Value)>,
}

impl Layer {
    /// Whether the layer sets `key` (our spelling), under any accepted spelling.
    pub fn sets(&self, key: &str) -> bool {
        self.values.iter().any(|(k, _)| canonical_key(k) == key)
    }

    /// How the operator wrote `key` (as this layer holds it): the key of a file or flag, the
    /// variable of the environment (`NAMESRV_LISTEN_PORT`).
    pub fn spelling(&self, key: &str) -> String {
        match self.origin {
            LayerOrigin::Environment => format!("{ENV_PREFIX}_{}", key.to_ascii_uppercase()),
            _ => key.to_owned(),
        }
    }

    /// The key (as this layer spells it) that sets `key` (our spelling), the last one.
    pub fn spelling_of(&self, key: &str) -> Option<String> {
        self.values.iter().rev().find(|(k, _)| canonical_key(k) == key).map(|(k, _)| self.spelling(k))
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
pub fn read_file(
    path: &Path,
    format: ConfigFormat,
    origin: LayerOrigin,
) -> Result<(Layer, ConfigFormat), SettingsError> {
    let bytes = super::file::read_config(path).map_err(|error| SettingsError::Read { path: path.into(), error })?;
    let text = properties::decode(&bytes);
    let format = match format {
        ConfigFormat::Auto => detect_format(path, &text),
        given => given,
    };
    debug!(file = %path.display(), format = %format, "reading config file");
    let values = match format {
        ConfigFormat::Properties => properties::parse(&java_properties_text(path, &text))
            .map_err(|error| SettingsError::Properties { path: path.into(), error })?
            .into_iter()
            .map(|(k, v)| {
                let value = Value::from(properties::java_trim(&v));
                (k, value)
            })
            .collect(),
        _ => parse_toml(&text).map_err(|error| SettingsError::Toml { path: path.into(), error })?,
    };
    Ok((Layer { origin, values }, format))
}

/// A properties file's text, its log prefixes dropped when it is a saved `mqnamesrv -p` output
/// (see [`properties::strip_java_console`]), with an INFO line saying so.
fn java_properties_text<'a>(path: &Path, text: &'a str) -> std::borrow::Cow<'a, str> {
    let text = properties::strip_java_console(text);
    if matches!(text, std::borrow::Cow::Owned(_)) {
        info!(file = %path.display(), "read as a saved mqnamesrv -p output: its log prefixes are dropped");
    }
    text
}

/// The environment layer: `<PREFIX>_<KEY>` for every `KEY` that is a setting (any case, Java
/// spelling too). Any other variable under the prefix stops start-up, as an unknown key in a
/// file does (a mistyped `NAMESRV_LISTEN_PROT` must not start a server on the default port),
/// except the ones known to be meant for others: [`ENV_NOT_SETTINGS`] and the service links
/// Kubernetes injects for a Service named `namesrv` (see [`is_kubernetes_service_link`]).
pub fn env_layer(prefix: &str, keys: &[String]) -> Result<Layer, SettingsError> {
    let head = format!("{prefix}_");
    let mut values = Vec::new();
    let mut unknown = Vec::new();
    for (name, value) in std::env::vars_os().filter_map(|(n, v)| Some((n.into_string().ok()?, v))) {
        let Some(rest) = name.strip_prefix(&head) else { continue };
        let key = canonical_key(&rest.to_ascii_lowercase());
        let text = value.to_string_lossy();
        if keys.contains(&key) {
            let value = value.into_string().map_err(|_| SettingsError::NotUnicode { variable: name.clone() })?;
            // Kept as spelled (lower case) so that an error names the variable (see `Layer::spelling`).
            values.push((rest.to_ascii_lowercase(), Value::from(value)));
        } else if ENV_NOT_SETTINGS.contains(&name.as_str()) || is_kubernetes_service_link(rest, &text) {
            debug!(variable = %name, "not a setting, ignored");
        } else {
            unknown.push(UnknownVariable {
                suggestion: closest(rest, keys).map(|k| format!("{head}{}", k.to_ascii_uppercase())),
                name,
            });
        }
    }
    if !unknown.is_empty() {
        unknown.sort_by(|a, b| a.name.cmp(&b.name));
        let error = Box::new(SettingsError::UnknownVariables(unknown));
        return Err(SettingsError::InLayer { origin: LayerOrigin::Environment, error });
    }
    Ok(Layer { origin: LayerOrigin::Environment, values })
}

/// Whether `<PREFIX>_<rest>` is one of the variables Kubernetes sets in every pod of a namespace
/// for a Service named `namesrv` or `namesrv-*` (unless the pod says `enableServiceLinks:
/// false`): `..._SERVICE_HOST`, `..._SERVICE_PORT[_NAME]`, `..._PORT=tcp://IP:PORT`,
/// `..._PORT_9876_TCP[_PROTO|_PORT|_ADDR]`.
pub fn is_kubernetes_service_link(rest: &str, value: &str) -> bool {
    let docker_link = |tail: &str| {
        let (port, proto) = tail.split_once('_').unwrap_or((tail, ""));
        let proto = proto
            .strip_suffix("_PROTO")
            .or(proto.strip_suffix("_PORT"))
            .or(proto.strip_suffix("_ADDR"))
            .unwrap_or(proto);
        !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && matches!(proto, "TCP" | "UDP" | "SCTP")
    };
    let scheme = ["tcp://", "udp://", "sctp://"].iter().any(|s| value.starts_with(s));
    rest.ends_with("SERVICE_HOST")
        || rest.starts_with("SERVICE_PORT")
        || rest.contains("_SERVICE_PORT")
        || ((rest == "PORT" || rest.ends_with("_PORT")) && scheme)
        || rest
            .split_once("PORT_")
            .is_some_and(|(before, tail)| (before.is_empty() || before.ends_with('_')) && docker_link(tail))
}

/// The setting closest to a mistyped `rest` (our spelling or Java's, case and underscores
/// ignored), when it is close enough to be the one meant.
pub(super) fn closest<'a>(rest: &str, keys: &'a [String]) -> Option<&'a str> {
    let fold = |s: &str| s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect::<Vec<_>>();
    let typed = fold(rest);
    if typed.is_empty() || typed.len() > 64 {
        return None;
    }
    let java = java_names();
    let spellings =
        keys.iter().map(|k| (k.as_str(), k.as_str())).chain(java.map(|(java, ours)| (java as &str, ours as &str)));
    let (distance, key) = spellings
        .filter_map(|(spelling, ours)| {
            Some((edit_distance(&typed, &fold(spelling)), keys.iter().find(|k| *k == ours)?))
        })
        .min_by_key(|(d, _)| *d)?;
    (distance <= (typed.len() / 4).max(2)).then_some(key.as_str())
}

/// Levenshtein distance (insertions, deletions, substitutions).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// The command-line layer.
pub fn flags_layer(overrides: &[(String, String)]) -> Layer {
    let values = overrides.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
    Layer { origin: LayerOrigin::CommandLine, values }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mistyped_variable_is_matched_to_the_setting_it_meant() {
        let keys: Vec<String> = crate::settings::Settings::keys();
        assert_eq!(closest("LISTEN_PROT", &keys), Some("listen_port"));
        assert_eq!(closest("LISTENPROT", &keys), Some("listen_port"));
        assert_eq!(closest("SCANNOTACTIVEBROKERINTERVL", &keys), Some("scan_interval_ms"));
        assert_eq!(closest("KV_CONFIG_PAHT", &keys), Some("kv_config_path"));
        assert_eq!(closest("HEAP_OPTS", &keys), None);
        assert_eq!(edit_distance(&['a', 'b'], &['b', 'a']), 2);
    }

    #[test]
    fn kubernetes_service_links_are_recognised_and_typos_are_not() {
        assert!(is_kubernetes_service_link("SERVICE_HOST", "10.0.0.1"));
        assert!(is_kubernetes_service_link("SERVICE_PORT", "9876"));
        assert!(is_kubernetes_service_link("SERVICE_PORT_REMOTING", "9876"));
        assert!(is_kubernetes_service_link("PORT", "tcp://10.0.0.1:9876"));
        assert!(is_kubernetes_service_link("PORT_9876_TCP", "tcp://10.0.0.1:9876"));
        assert!(is_kubernetes_service_link("PORT_9876_TCP_ADDR", "10.0.0.1"));
        assert!(is_kubernetes_service_link("CLIENT_SERVICE_HOST", "10.0.0.2"));
        assert!(is_kubernetes_service_link("CLIENT_PORT_9876_TCP_PROTO", "tcp"));
        assert!(!is_kubernetes_service_link("LISTEN_PROT", "1"));
        assert!(!is_kubernetes_service_link("LISTN_PORT", "9877"));
        assert!(!is_kubernetes_service_link("PORT", "9877"));
    }

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
