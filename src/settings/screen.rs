//! Screening a layer before it is merged: Java keys with no setting here are dropped (one
//! summary WARN per layer), `enableControllerInNamesrv=true` becomes `controller_mode`, and a Java
//! properties layer is read as Java's `MixAll.properties2Object` reads it: booleans by
//! `Boolean.parseBoolean`, keys that no setter could match (`rocketmq.namesrv.domain`, JVM system
//! properties) ignored.

use config::Value;
use tracing::warn;

use super::java::{self, JavaKey};
use super::sources::Layer;
use super::{canonical_key, Settings, SettingsError};

/// Drops (with one warning for the layer) Java keys that have no setting here;
/// `enableControllerInNamesrv=true` becomes `controller_mode = "embedded"`. With `properties`
/// (a Java properties file), also applies Java's reading of keys and booleans (see
/// [`java_key_shape`], [`parse_boolean`]).
pub(super) fn screen(mut layer: Layer, properties: bool) -> Result<Layer, SettingsError> {
    let known = Settings::keys();
    let booleans = if properties { boolean_keys() } else { Vec::new() };
    let mut kept = Vec::with_capacity(layer.values.len());
    let mut ignored = Vec::new();
    let mut read_as_false = Vec::new();
    for (key, value) in std::mem::take(&mut layer.values) {
        let text = value.to_string();
        if properties && !java_key_shape(&key) {
            ignored.push(key);
            continue;
        }
        match java::classify(&key, &text, known.contains(&canonical_key(&key))) {
            // Java's enableControllerInNamesrv=true: the controller beside the NameServer.
            JavaKey::EmbeddedController => kept.push(("controller_mode".to_owned(), "embedded".into())),
            JavaKey::Ignored => ignored.push(key),
            JavaKey::NotJava if booleans.contains(&canonical_key(&key)) => {
                let parsed = parse_boolean(&text);
                if !text.eq_ignore_ascii_case(&parsed.to_string()) {
                    read_as_false.push(format!("{key}={text}"));
                }
                kept.push((key, Value::from(parsed)));
            }
            JavaKey::NotJava => kept.push((key, value)),
        }
    }
    if !ignored.is_empty() {
        warn!(
            source = %layer.origin,
            count = ignored.len(),
            keys = ?ignored,
            "ignoring Java settings with no meaning here (keys Java reads into no setting of this server, and \
             dotted keys, which Java's file reading ignores too)"
        );
    }
    if !read_as_false.is_empty() {
        warn!(
            source = %layer.origin,
            keys = ?read_as_false,
            "read as false, as Java's Boolean.parseBoolean reads them: only \"true\" (any case) is true"
        );
    }
    layer.values = kept;
    Ok(layer)
}

/// Java's `Boolean.parseBoolean`: true for `true` in any case, false for anything else (`yes`,
/// `on`, `1`, the empty string), never an error. Applied to trimmed text (`java_trim`), which
/// is kinder than Java for `true ` and documented so.
pub(super) fn parse_boolean(text: &str) -> bool {
    text.eq_ignore_ascii_case("true")
}

/// Whether a properties key could name a setter in Java's `MixAll.properties2Object` (or one of
/// our keys): a letter, then letters, digits, `_` or `-`. Dotted keys (`rocketmq.namesrv.domain`,
/// `com.rocketmq.remoting.socket.sndbuf.size`) are JVM system properties, which Java never reads
/// from the file, and keys with spaces or brackets match nothing there either.
fn java_key_shape(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The settings (our keys) whose values are booleans.
fn boolean_keys() -> Vec<String> {
    let value = serde_json::to_value(Settings::default()).unwrap_or_default();
    let map = value.as_object().cloned().unwrap_or_default();
    map.into_iter().filter(|(_, v)| v.is_boolean()).map(|(k, _)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::super::sources::LayerOrigin;
    use super::*;

    fn layer(pairs: &[(&str, &str)]) -> Layer {
        let values = pairs.iter().map(|(k, v)| ((*k).to_owned(), Value::from(*v))).collect();
        Layer { origin: LayerOrigin::ConfigFile("/n.conf".into()), values }
    }

    fn text(layer: &Layer, key: &str) -> Option<String> {
        layer.values.iter().find(|(k, _)| k == key).map(|(_, v)| v.to_string())
    }

    #[test]
    fn javas_boolean_spellings_follow_parse_boolean() {
        let pairs = [
            ("needWaitForService", "yes"),
            ("enableTopicList", "on"),
            ("enableAllTopicList", "1"),
            ("supportActingMaster", ""),
            ("orderMessageEnable", "TRUE"),
            ("listenPort", "1"),
        ];
        let screened = screen(layer(&pairs), true).unwrap();
        for key in ["needWaitForService", "enableTopicList", "enableAllTopicList", "supportActingMaster"] {
            assert_eq!(text(&screened, key).as_deref(), Some("false"), "{key}");
        }
        assert_eq!(text(&screened, "orderMessageEnable").as_deref(), Some("true"));
        assert_eq!(text(&screened, "listenPort").as_deref(), Some("1"), "numbers are untouched");
        let toml = screen(layer(&[("enableTopicList", "on")]), false).unwrap();
        assert_eq!(text(&toml, "enableTopicList").as_deref(), Some("on"), "other layers keep their parsing");
    }

    #[test]
    fn dotted_keys_and_java_keys_without_a_setting_are_dropped() {
        let pairs = [
            ("rocketmq.namesrv.domain", "x"),
            ("com.rocketmq.remoting.socket.sndbuf.size", "65536"),
            ("odd key", "1"),
            ("serverWorkerThreads", "8"),
            ("listenPort", "0"),
        ];
        let screened = screen(layer(&pairs), true).unwrap();
        let keys: Vec<&str> = screened.values.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["listenPort"]);
        let flags = screen(layer(&[("rocketmq.namesrv.domain", "x")]), false).unwrap();
        assert_eq!(flags.values.len(), 1, "outside a properties file a dotted key still fails by name");
    }
}
