//! Runtime updates against the config files. Beside `config_store_path` a baseline file
//! (`<store>.baseline`, JSON) records, for each runtime-updated key, the config files' value when
//! the update was made; when the config files later give that key another explicit value, the
//! file wins and the runtime update is stale. Writing the store and the baseline is the config
//! store's job; this module only reads and decides.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use config::Value;
use tracing::{info, warn};

use super::sources::Layer;
use super::{canonical_key, java, FIXED_BLACK_LIST, RUNTIME_KEYS};

/// Appended to `config_store_path` to name its baseline file.
pub const BASELINE_SUFFIX: &str = ".baseline";

/// The config files' value of each key (our spelling), as text; the last file setting it wins.
pub type FileValues = BTreeMap<String, String>;

/// Per runtime-updated key (our spelling): the config files' value when it was updated (`None`:
/// no config file set it).
pub type Baseline = BTreeMap<String, Option<String>>;

/// The baseline file of the runtime-updates file at `store`.
pub fn baseline_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(BASELINE_SUFFIX);
    PathBuf::from(name)
}

/// The values the config file layers set, by our key.
pub fn file_values(layers: &[Layer]) -> FileValues {
    let mut out = FileValues::new();
    for layer in layers {
        for (key, value) in &layer.values {
            out.insert(canonical_key(key), value_text(value));
        }
    }
    out
}

fn value_text(value: &Value) -> String {
    value.to_string().trim().to_owned()
}

/// The baseline recorded beside `store`; none when it is missing or unreadable (each key of the
/// store then adopts the config files' value of today: the update keeps winning).
pub fn read_baseline(store: &Path) -> Baseline {
    let path = baseline_path(store);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            warn!(file = %path.display(), %error, "unreadable runtime-updates baseline; taken as empty");
            Baseline::new()
        }),
        Err(_) => Baseline::new(),
    }
}

/// The baseline as the text of its file.
pub fn baseline_text(baseline: &Baseline) -> String {
    serde_json::to_string_pretty(baseline).unwrap_or_default() + "\n"
}

/// Whether the runtime-updates file may set `key` (any spelling): exactly what
/// UPDATE_NAMESRV_CONFIG accepts (`Settings::with_updates`), a runtime key outside the fixed
/// black list and `black_list` (`config_black_list`, `;`-separated). Restart-only keys
/// (`listenPort`, `bindAddress`, limits, paths) never come from that file.
pub(super) fn settable(key: &str, black_list: &str) -> bool {
    let ours = canonical_key(key);
    let mut black = FIXED_BLACK_LIST.iter().copied().chain(black_list.split(';').map(str::trim));
    RUNTIME_KEYS.iter().any(|(k, _)| *k == ours) && !black.any(|k| !k.is_empty() && canonical_key(k) == ours)
}

/// The keys of `keys` a Java NameServer writes into its store and ours never does: Java's
/// `Configuration.persist` writes every field of NamesrvConfig and NettyServerConfig (plus the
/// `-c` file's keys), ours only the runtime keys an update changed. Any of them marks a store a
/// Java NameServer wrote (or an operator's file).
fn java_only_keys(keys: &[String]) -> Vec<String> {
    let java = java::NAMESRV_CONFIG_KEYS.iter().chain(java::NETTY_SERVER_CONFIG_KEYS);
    let java: Vec<&str> = java.copied().filter(|k| !RUNTIME_KEYS.iter().any(|(r, _)| canonical_key(k) == *r)).collect();
    keys.iter().filter(|k| java.contains(&k.as_str())).cloned().collect()
}

/// Why keys of the runtime-updates file are left out.
const IGNORED: &str = "ignoring keys a runtime update cannot set (restart-only or unknown): set them in the -c file";

/// What a runtime-updates file a Java NameServer wrote is taken for.
const JAVA_STORE: &str = "runtime updates file written by a Java NameServer: only its runtime keys apply";

/// One key the runtime-updates file sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// The key as the file spells it.
    pub key: String,
    /// The runtime value.
    pub value: String,
    /// The config files' value now, when one sets it.
    pub file_value: Option<String>,
    /// The config files' value at the update, when recorded.
    pub recorded: Option<Option<String>>,
}

impl Override {
    /// The config files now set the key explicitly, to another value than at the update.
    pub fn is_stale(&self) -> bool {
        match (&self.recorded, &self.file_value) {
            (Some(then), Some(now)) => then.as_deref() != Some(now.as_str()),
            _ => false,
        }
    }
}

/// The runtime-updates file seen against the config files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeOverrides {
    /// `config_store_path`.
    pub store: PathBuf,
    /// Updates still in force over the config files.
    pub active: Vec<Override>,
    /// Updates the config files changed since: dropped.
    pub dropped: Vec<Override>,
    /// Keys the file holds that it may not set (see [`settable`]), as spelled: ignored.
    pub ignored: Vec<String>,
    /// Those of `ignored` only a Java NameServer writes: the file is a Java store.
    pub java_keys: Vec<String>,
}

impl RuntimeOverrides {
    /// Sorts the store's settable `pairs` into active and dropped updates.
    pub fn classify(store: &Path, pairs: Vec<(String, String)>, files: &FileValues, baseline: &Baseline) -> Self {
        let (dropped, active) = pairs
            .into_iter()
            .map(|(key, value)| {
                let ours = canonical_key(&key);
                Override { file_value: files.get(&ours).cloned(), recorded: baseline.get(&ours).cloned(), key, value }
            })
            .partition(Override::is_stale);
        RuntimeOverrides { store: store.to_owned(), active, dropped, ignored: Vec::new(), java_keys: Vec::new() }
    }

    /// With the keys the file holds that it may not set.
    pub fn with_ignored(mut self, ignored: Vec<String>) -> Self {
        self.java_keys = java_only_keys(&ignored);
        self.ignored = ignored;
        self
    }

    /// The baseline to keep: each active key's recorded value, today's config-file value for a
    /// key without one (an update made before baselines were kept).
    pub fn baseline(&self) -> Baseline {
        let recorded = |o: &Override| o.recorded.clone().unwrap_or_else(|| o.file_value.clone());
        self.active.iter().map(|o| (canonical_key(&o.key), recorded(o))).collect()
    }

    /// One WARN line naming the ignored keys, one INFO line when Java wrote the file, one INFO
    /// line per dropped update, one naming the updates still in force.
    pub fn log(&self) {
        if !self.ignored.is_empty() {
            warn!(file = %self.store.display(), keys = ?self.ignored, "{IGNORED}");
        }
        if !self.java_keys.is_empty() {
            let applied: Vec<&str> = self.active.iter().chain(&self.dropped).map(|o| o.key.as_str()).collect();
            info!(file = %self.store.display(), java_keys = self.java_keys.len(), runtime_keys = ?applied, "{JAVA_STORE}");
        }
        for o in &self.dropped {
            info!(
                key = %o.key,
                runtime = %o.value,
                file = %o.file_value.as_deref().unwrap_or_default(),
                source = %self.store.display(),
                "the config file changed a runtime-updated key: its value applies, the runtime update is dropped"
            );
        }
        let keys: Vec<&str> = self.active.iter().map(|o| o.key.as_str()).collect();
        info!(keys = ?keys, source = %self.store.display(), "applying runtime updates over the config files");
    }

    /// Lines for `--check-config`.
    pub fn describe(&self) -> Vec<String> {
        let file = |o: &Override| o.file_value.clone().unwrap_or_else(|| "unset".into());
        let store = self.store.display();
        let mut lines: Vec<String> = self
            .active
            .iter()
            .map(|o| format!("runtime update overrides {}={} (config files: {}) from {store}", o.key, o.value, file(o)))
            .collect();
        lines.extend(
            self.dropped.iter().map(|o| {
                format!("runtime update {}={} is dropped: the config files now set {}", o.key, o.value, file(o))
            }),
        );
        if lines.is_empty() {
            lines.push(format!("no runtime update overrides the config files ({store})"));
        }
        if !self.java_keys.is_empty() {
            lines.push(format!("{store}: {JAVA_STORE} ({} Java keys)", self.java_keys.len()));
        }
        if !self.ignored.is_empty() {
            lines.push(format!("{store}: {IGNORED}: {}", self.ignored.join(", ")));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(store: &[(&str, &str)], files: &[(&str, &str)], baseline: &[(&str, Option<&str>)]) -> RuntimeOverrides {
        let pairs = store.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let files = files.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let baseline = baseline.iter().map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned))).collect();
        RuntimeOverrides::classify(Path::new("/s"), pairs, &files, &baseline)
    }

    fn keys(list: &[Override]) -> Vec<&str> {
        list.iter().map(|o| o.key.as_str()).collect()
    }

    #[test]
    fn a_config_file_value_changed_since_the_update_wins() {
        let o = classify(
            &[("broker_timeout_ms", "1"), ("enableTopicList", "false"), ("orderMessageEnable", "true")],
            &[("broker_timeout_ms", "3"), ("enable_topic_list", "true"), ("order_message_enable", "false")],
            &[("broker_timeout_ms", Some("2")), ("enable_topic_list", Some("true")), ("order_message_enable", None)],
        );
        assert_eq!(keys(&o.dropped), ["broker_timeout_ms", "orderMessageEnable"], "changed, and newly set");
        assert_eq!(keys(&o.active), ["enableTopicList"], "unchanged since the update");
    }

    #[test]
    fn an_update_without_a_baseline_adopts_todays_file_value_and_keeps_winning() {
        let o = classify(&[("enableTopicList", "false")], &[("enable_topic_list", "true")], &[]);
        assert_eq!(keys(&o.active), ["enableTopicList"]);
        assert_eq!(o.baseline(), Baseline::from([("enable_topic_list".to_owned(), Some("true".to_owned()))]));
        let unset = classify(&[("enableTopicList", "false")], &[], &[("enable_topic_list", Some("true"))]);
        assert_eq!(keys(&unset.active), ["enableTopicList"], "a key removed from the file is no explicit value");
    }
}
