//! The configuration reference (`docs/configuration.md`) against the settings' own definitions:
//! every key is listed, under its Java name where it has one, with its default, marked
//! "(runtime)" exactly when a change applies without a restart, and, for the controller's keys,
//! with the range every source is held to. A key added without its row fails here.

use std::collections::BTreeMap;

use namesrv::settings::controller::{Change, CONTROLLER_KEYS};
use namesrv::settings::{java_name, Settings, KEY_ORDER, RUNTIME_KEYS};

/// The rows of the reference's key tables: each key a row names, with the row's cells.
fn rows() -> BTreeMap<String, Vec<String>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<String> = line.trim().trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect();
        for key in cells[0].split(['/', ',']).map(|k| k.trim().trim_matches('`')) {
            rows.insert(key.to_owned(), cells.clone());
        }
    }
    rows
}

/// Whether a row's meaning marks its key as applied at runtime: `(runtime)`, `(runtime, ...)`
/// or `(..., runtime)`.
fn marked_runtime(meaning: &str) -> bool {
    meaning.contains("(runtime") || meaning.contains(", runtime)")
}

#[test]
fn the_configuration_reference_lists_every_key_as_the_settings_define_it() {
    let rows = rows();
    let defaults: BTreeMap<String, String> = Settings::default().values().into_iter().collect();
    let runtime = |key: &str| {
        RUNTIME_KEYS.iter().any(|(k, _)| *k == key)
            || CONTROLLER_KEYS.iter().any(|k| k.key == key && k.change == Change::Runtime)
    };
    for key in KEY_ORDER.iter() {
        let Some(cells) = rows.get(*key) else { panic!("{key} is not in docs/configuration.md") };
        let (java, default, meaning) = (&cells[1], &cells[2], &cells[3]);
        match java_name(key) {
            name if name != *key => assert_eq!(java, &format!("`{name}`"), "{key}'s Java name"),
            _ => assert!(java == "—" || java.starts_with('('), "{key} has no Java name, the reference gives {java}"),
        }
        assert_eq!(marked_runtime(meaning), runtime(key), "{key}: (runtime) in the reference: {meaning}");
        let single = !cells[0].contains(['/', ',']) && !default.contains(['<', '$']);
        if single && default.starts_with('`') {
            assert_eq!(default.trim_matches('`'), defaults[*key], "{key}'s default");
        } else if single && default == "empty" {
            assert_eq!(defaults[*key], "", "{key}'s default");
        }
    }
    for def in CONTROLLER_KEYS {
        if let Some((min, max)) = def.range {
            let meaning = &rows[def.key][3];
            assert!(meaning.contains(&format!("{min} to {max}")), "{}'s range {min} to {max}: {meaning}", def.key);
        }
    }
}
