//! Loading, validating and printing settings.

use super::*;
use std::io::Write;
use std::path::Path;

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("namesrv-settings-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path).unwrap().write_all(text.as_bytes()).unwrap();
    path
}

/// A runtime-updates file that does not exist, so a developer's own cannot leak in.
fn no_store(name: &str) -> (Vec<(String, String)>, Settings) {
    let path = std::env::temp_dir().join(format!("namesrv-settings-{}-{name}-none", std::process::id()));
    let path = path.display().to_string();
    let mut settings = Settings::default();
    settings.state.config_store_path = path.clone();
    (vec![("config_store_path".into(), path)], settings)
}

#[test]
fn no_layers_gives_the_built_in_defaults() {
    let (flags, expected) = no_store("none");
    let s = Settings::load(None, None, "NAMESRV_TEST_NONE", &flags).unwrap();
    assert_eq!(s, expected);
}

#[test]
fn later_layers_win_and_java_names_are_accepted() {
    let base = temp_file("base.toml", "scan_interval_ms = 1000\nlisten_port = 1\n");
    let user = temp_file("user.toml", "scanNotActiveBrokerInterval = 2000\nbindAddress = \"127.0.0.1\"\n");
    let flags = vec![("listen_port".to_owned(), "3".to_owned())];
    let s = Settings::load(Some(&base), Some(&user), "NAMESRV_TEST_LAYERS", &flags).unwrap();
    assert_eq!(
        (s.routing.scan_interval_ms, s.listen.listen_port, s.listen.bind_address.as_str()),
        (2000, 3, "127.0.0.1")
    );
}

#[test]
fn unknown_keys_fail_naming_the_key() {
    let user = temp_file("typo.toml", "scan_intervl_ms = 5\n");
    let err = Settings::load(None, Some(&user), "NAMESRV_TEST_TYPO", &[]).unwrap_err().to_string();
    assert!(err.contains("unknown key scan_intervl_ms (did you mean scan_interval_ms?)"), "{err}");
    let far = temp_file("far.toml", "heap_opts = 5\n");
    let err = Settings::load(None, Some(&far), "NAMESRV_TEST_TYPO", &[]).unwrap_err().to_string();
    assert!(err.contains("unknown key heap_opts (namesrv -p lists every key"), "{err}");
}

#[test]
fn bad_values_fail_start_up() {
    let flags = vec![("scan_interval_ms".to_owned(), "0".to_owned())];
    assert!(Settings::load(None, None, "NAMESRV_TEST_BAD", &flags).is_err());
    let flags = vec![("response_serialize_type".to_owned(), "xml".to_owned())];
    assert!(Settings::load(None, None, "NAMESRV_TEST_BAD2", &flags).is_err());
    assert!(Settings::load(None, Some(Path::new("/nonexistent/x.toml")), "NAMESRV_TEST_BAD3", &[]).is_err());
}

#[test]
fn the_shipped_default_file_parses_and_matches_the_built_in_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_CONFIG_FILE);
    let (flags, expected) = no_store("shipped");
    let s = Settings::load(Some(&path), None, "NAMESRV_TEST_SHIPPED", &flags).unwrap();
    assert_eq!(s, expected);
}

#[test]
fn a_java_properties_file_is_accepted_with_its_java_only_keys_ignored() {
    let file = temp_file(
        "namesrv.properties",
        "listenPort=9999\nclientRequestThreadPoolNums=8\nscanNotActiveBrokerInterval : 700\norderMessageEnable=true\n",
    );
    let s = Settings::load(None, Some(&file), "NAMESRV_TEST_PROPS", &[]).unwrap();
    assert_eq!((s.listen.listen_port, s.routing.scan_interval_ms, s.routing.order_message_enable), (9999, 700, true));
    let bad = temp_file("bad.properties", "noSuchKey=1\n");
    let err = Settings::load(None, Some(&bad), "NAMESRV_TEST_PROPS2", &[]).unwrap_err().to_string();
    assert!(err.contains("noSuchKey"), "{err}");
}

#[test]
fn java_view_uses_java_names() {
    let view = Settings::default().java_view();
    assert!(view.contains(&("listenPort".to_owned(), "9876".to_owned())));
    assert!(view.contains(&("scanNotActiveBrokerInterval".to_owned(), "5000".to_owned())));
    assert!(view.contains(&("max_frame_bytes".to_owned(), "16777216".to_owned())));
}

#[test]
fn printed_config_loads_back_to_the_same_settings() {
    let mut original = no_store("printed").1;
    original.listen.listen_port = 1234;
    let path = temp_file("printed.toml", &original.to_toml_lines());
    assert_eq!(Settings::load(None, Some(&path), "NAMESRV_TEST_PRINTED", &[]).unwrap(), original);
}

#[test]
fn access_control_needs_its_accounts_file_and_tls_its_certificate_and_key() {
    let check = |pairs: &[(&str, &str)]| {
        let flags: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Settings::load(None, None, "NAMESRV_TEST_SECURITY", &flags).map(|_| ()).map_err(|e| e.to_string())
    };
    assert!(check(&[("acl_enabled", "true")]).unwrap_err().contains("acl_accounts_file"));
    assert!(check(&[("acl_enabled", "true"), ("acl_accounts_file", "/etc/namesrv/accounts.toml")]).is_ok());
    assert!(check(&[("acl_protect", "everything")]).unwrap_err().contains("admin, broker, all"));
    assert!(check(&[("tls_mode", "permissive")]).unwrap_err().contains("tls_cert_file"));
    assert!(check(&[("tls_mode", "enforcing"), ("tls_cert_file", "c.pem")]).unwrap_err().contains("tls_key_file"));
    assert!(check(&[("tls_mode", "Enforcing"), ("tls_cert_file", "c.pem"), ("tls_key_file", "k.pem")]).is_ok());
    assert!(check(&[("tls_mode", "on")]).unwrap_err().contains("disabled, permissive, enforcing"));
}

#[test]
fn the_unknown_key_message_lists_every_key_once() {
    let mut listed: Vec<String> = KEY_ORDER.iter().map(|k| (*k).to_owned()).collect();
    listed.sort();
    assert_eq!(listed, Settings::keys());
}
