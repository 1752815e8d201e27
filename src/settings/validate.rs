//! Checks on settings the types cannot express: ranges, and what access control and TLS need.

use super::{addr, Settings, SettingsError, TlsMode};

/// The NameServer's numbers held to a range from every source: (key, least, most).
const RANGES: &[(&str, u64, u64)] = &[
    ("scan_interval_ms", 1, u64::MAX),
    ("expiry_guard_percent", 0, 100),
    ("idle_timeout_secs", 1, u64::MAX),
    ("max_frame_bytes", 1024, i32::MAX as u64),
    ("max_inflated_body_bytes", 1024, i32::MAX as u64),
    ("max_in_flight_per_connection", 1, u64::MAX),
    ("notify_max_in_flight", 1, u64::MAX),
    ("notify_max_per_second", 1, u64::MAX),
    ("frame_receive_timeout_secs", 1, u64::MAX),
    ("max_topics_per_broker", 1, u64::MAX),
    ("io_threads", 0, 1024),
    ("runtime_min_broker_timeout_ms", 1_000, 86_400_000),
    ("first_byte_timeout_ms", 100, u64::MAX),
    ("frame_progress_timeout_ms", 100, u64::MAX),
    ("reply_drain_timeout_ms", 100, u64::MAX),
    ("peer_share_percent", 1, 100),
    ("broker_reserve_percent", 0, 50),
    ("http_max_connections", 1, 4096),
    ("http_idle_timeout_ms", 100, u64::MAX),
    ("max_heartbeat_timeout_ms", 1_000, u64::MAX),
    ("tls_handshake_timeout_ms", 1, u64::MAX),
];

/// Why a number is outside `min..=max`.
fn range_reason(min: u64, max: u64) -> String {
    match (min, max) {
        (min, u64::MAX) => format!("must be at least {min}"),
        (0, max) => format!("must be at most {max}"),
        (min, max) => format!("must be between {min} and {max}"),
    }
}

impl Settings {
    /// Checks what the types cannot express: every number in its range ([`RANGES`], and the
    /// runtime keys' wire ranges), the relations between settings, the addresses and the log
    /// filter, what access control and TLS need, and the controller's own.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let values = serde_json::to_value(self).unwrap_or_default();
        for (key, min, max) in RANGES {
            if values.get(*key).and_then(|v| v.as_u64()).is_some_and(|v| !(*min..=*max).contains(&v)) {
                return Err(SettingsError::Invalid { key, reason: range_reason(*min, *max) });
            }
        }
        self.validate_runtime_floors()?;
        self.validate_relations()?;
        self.validate_text()?;
        self.validate_security()?;
        self.controller.validate()
    }

    /// Settings bounded by others.
    fn validate_relations(&self) -> Result<(), SettingsError> {
        let invalid = |key, reason: &str| Err(SettingsError::Invalid { key, reason: reason.to_owned() });
        let limits = &self.limits;
        if limits.write_buffer_low_bytes >= limits.write_buffer_high_bytes {
            return invalid("write_buffer_low_bytes", "must be below write_buffer_high_bytes");
        }
        if limits.write_buffer_max_bytes < limits.write_buffer_high_bytes {
            return invalid("write_buffer_max_bytes", "must be at least write_buffer_high_bytes");
        }
        if limits.reply_budget_bytes < limits.write_buffer_high_bytes {
            return invalid("reply_budget_bytes", "must be at least write_buffer_high_bytes");
        }
        if limits.frame_budget_bytes < limits.max_frame_bytes {
            return invalid("frame_budget_bytes", "must hold at least one frame of max_frame_bytes");
        }
        if limits.kv_max_value_bytes == 0 || limits.kv_max_value_bytes > limits.kv_max_store_bytes {
            return invalid("kv_max_value_bytes", "must be at least 1 and at most kv_max_store_bytes");
        }
        Ok(())
    }

    /// Addresses and the log filter, parsed as they will be used.
    fn validate_text(&self) -> Result<(), SettingsError> {
        if let Err(e) = addr::check_host(&self.listen.bind_address) {
            return Err(SettingsError::Invalid { key: "bind_address", reason: e.to_string() });
        }
        let http = self.observe.http_listen.trim();
        if !http.is_empty() && addr::split_host_port(http).is_err() {
            let reason = "must be host:port (brackets around an IPv6 host), or empty".to_owned();
            return Err(SettingsError::Invalid { key: "http_listen", reason });
        }
        if let Err(error) = log_filter_directives(&self.observe.log_filter) {
            return Err(SettingsError::Invalid { key: "log_filter", reason: error.to_string() });
        }
        Ok(())
    }

    /// Every runtime key's wire range holds from a file, the environment or a flag too, so that
    /// `broker_timeout_ms = 120` (seconds meant, milliseconds read) cannot expire every broker
    /// at the first scan after it registers: the floor UPDATE_NAMESRV_CONFIG applies is the
    /// floor everywhere.
    fn validate_runtime_floors(&self) -> Result<(), SettingsError> {
        let values = self.values();
        for (key, _) in super::RUNTIME_KEYS {
            let Some(Some((min, max))) = self.runtime_range(key) else { continue };
            let value = values.iter().find(|(k, _)| k == key).and_then(|(_, v)| v.parse::<u64>().ok());
            if value.is_some_and(|v| !(min..=max).contains(&v)) {
                return Err(SettingsError::Invalid { key: runtime_key(key), reason: floor_reason(key, min, max) });
            }
        }
        Ok(())
    }

    /// Access control needs its accounts file, TLS its certificate and key.
    fn validate_security(&self) -> Result<(), SettingsError> {
        let invalid = |key, reason: &str| Err(SettingsError::Invalid { key, reason: reason.to_owned() });
        if self.acl.acl_enabled && self.acl.acl_accounts_file.trim().is_empty() {
            return invalid("acl_accounts_file", "must name the accounts file when acl_enabled is true");
        }
        if self.tls.tls_mode != TlsMode::Disabled {
            if self.tls.tls_cert_file.trim().is_empty() {
                return invalid("tls_cert_file", "must name a PEM certificate file when tls_mode is not disabled");
            }
            if self.tls.tls_key_file.trim().is_empty() {
                return invalid("tls_key_file", "must name a PEM private key file when tls_mode is not disabled");
            }
        }
        Ok(())
    }
}

/// Parses a non-empty `log_filter` as the binary will (`RUST_LOG` syntax), so that a bad one
/// fails start-up, `--check-config` and a reload instead of falling back to `info`.
fn log_filter_directives(filter: &str) -> Result<(), tracing_subscriber::filter::ParseError> {
    match filter.trim() {
        "" => Ok(()),
        directives => tracing_subscriber::EnvFilter::builder().parse(directives).map(drop),
    }
}

/// The `'static` name of a runtime key, for its error.
fn runtime_key(key: &str) -> &'static str {
    super::RUNTIME_KEYS.iter().find(|(k, _)| *k == key).map_or("broker_timeout_ms", |(k, _)| k)
}

/// Why a runtime key is out of its range, saying how to widen it.
fn floor_reason(key: &str, min: u64, max: u64) -> String {
    match key {
        "broker_timeout_ms" => format!(
            "must be between runtime_min_broker_timeout_ms ({min}) and {max}: it is in milliseconds \
             (120 s is 120000); lower runtime_min_broker_timeout_ms (at least 1000) to allow less"
        ),
        _ => format!("must be between {min} and {max}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::RUNTIME_KEYS;

    #[test]
    fn every_numeric_runtime_key_has_its_wire_floor_from_every_source() {
        let defaults = Settings::default();
        for (key, range) in RUNTIME_KEYS {
            let Some(Some((min, _))) = defaults.runtime_range(key) else { continue };
            assert!(range.is_some());
            let below = defaults.with_values(&[((*key).to_owned(), (min - 1).to_string())]).unwrap();
            let err = below.validate().expect_err(key).to_string();
            assert!(err.contains(key), "{err}");
            let at = defaults.with_values(&[((*key).to_owned(), min.to_string())]).unwrap();
            assert!(at.validate().is_ok(), "{key} at its floor");
        }
        let seconds = defaults.with_values(&[("broker_timeout_ms".into(), "120".into())]).unwrap();
        let err = seconds.validate().unwrap_err().to_string();
        assert!(err.contains("runtime_min_broker_timeout_ms (60000)") && err.contains("milliseconds"), "{err}");
        let lowered = defaults
            .with_values(&[
                ("broker_timeout_ms".into(), "3000".into()),
                ("runtime_min_broker_timeout_ms".into(), "1000".into()),
            ])
            .unwrap();
        assert!(lowered.validate().is_ok(), "a lowered floor allows less");
    }

    #[test]
    fn a_log_filter_that_does_not_parse_is_invalid() {
        let with = |f: &str| Settings::default().with_values(&[("log_filter".into(), f.into())]).unwrap().validate();
        assert!(with("").is_ok() && with("info,namesrv=debug").is_ok());
        let err = with("namesrv=[bogus").unwrap_err().to_string();
        assert!(err.starts_with("invalid setting log_filter"), "{err}");
    }
}
