//! The classic Prometheus text format (version 0.0.4), made from prometheus-client's OpenMetrics
//! text, for scrapers and tools that do not ask for OpenMetrics (`promtool check metrics`, curl,
//! older agents). Prometheus itself asks for OpenMetrics and gets it unchanged.
//!
//! The two formats differ, for what this server exports, in three ways: an OpenMetrics counter
//! family `x` has samples `x_total` (0.0.4 names the family `x_total` too), OpenMetrics has
//! `# UNIT` lines and a closing `# EOF` (0.0.4 has neither), and the type `unknown` is 0.0.4's
//! `untyped`. Sample lines are the same, except that 0.0.4 has no `_created` series and no exemplars.

use std::collections::HashSet;

/// The content type of the classic text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `openmetrics` rewritten as text format 0.0.4.
pub fn to_classic(openmetrics: &str) -> String {
    let counters: HashSet<&str> =
        openmetrics.lines().filter_map(|line| line.strip_prefix("# TYPE ")?.strip_suffix(" counter")).collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            let name = family_name(&counters, name);
            out.push_str(&format!("# HELP {name} {}\n", unescape_quotes(help)));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "untyped"));
            let kind = if kind == "unknown" { "untyped" } else { kind };
            out.push_str(&format!("# TYPE {} {kind}\n", family_name(&counters, name)));
        } else if line.starts_with('#') {
            // `# UNIT` and `# EOF` have no 0.0.4 counterpart.
        } else if !is_created(&counters, line) {
            // An exemplar follows ` # ` after the value; 0.0.4 has none.
            out.push_str(line.split_once(" # ").map_or(line, |(sample, _)| sample));
            out.push('\n');
        }
    }
    out
}

/// The 0.0.4 family name: counters carry their `_total`.
fn family_name(counters: &HashSet<&str>, name: &str) -> String {
    if counters.contains(name) {
        format!("{name}_total")
    } else {
        name.to_owned()
    }
}

/// Whether a sample line is a counter's `_created` series.
fn is_created(counters: &HashSet<&str>, line: &str) -> bool {
    let name = line.split(['{', ' ']).next().unwrap_or_default();
    name.strip_suffix("_created").is_some_and(|family| counters.contains(family))
}

/// OpenMetrics escapes `"` in help text; 0.0.4 knows only `\\` and `\n` there.
fn unescape_quotes(help: &str) -> String {
    let mut out = String::with_capacity(help.len());
    let mut chars = help.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Metrics, Removal};

    const SAMPLE: &str = "# HELP up_requests Requests \\\"handled\\\", a \\\\ b.\n\
        # TYPE up_requests counter\n\
        # UNIT up_requests requests\n\
        up_requests_total{code=\"A\"} 3 # {trace_id=\"x\"} 1.0\n\
        up_requests_created{code=\"A\"} 1700000000.0\n\
        # HELP up_open Open now.\n\
        # TYPE up_open gauge\n\
        up_open 2\n\
        # HELP up_odd Odd.\n\
        # TYPE up_odd unknown\n\
        up_odd 1\n\
        # EOF\n";

    #[test]
    fn counters_are_named_with_total_and_openmetrics_only_lines_go() {
        let expected = "# HELP up_requests_total Requests \"handled\", a \\\\ b.\n\
            # TYPE up_requests_total counter\n\
            up_requests_total{code=\"A\"} 3\n\
            # HELP up_open Open now.\n\
            # TYPE up_open gauge\n\
            up_open 2\n\
            # HELP up_odd Odd.\n\
            # TYPE up_odd untyped\n\
            up_odd 1\n";
        assert_eq!(to_classic(SAMPLE), expected);
    }

    /// What `promtool check metrics` and the 0.0.4 parser require: every sample belongs to a
    /// family declared once with help and type (histograms by their `_bucket`, `_sum`, `_count`).
    #[test]
    fn every_series_the_server_exports_belongs_to_a_family_with_help_and_type() {
        let metrics = Metrics::new();
        metrics.request(105, Some(0), 12_000);
        metrics.request(105, Some(17), 9_000);
        metrics.request(106, None, 3_000);
        metrics.registration(true);
        metrics.removed(Removal::Expired, 1);
        metrics.config_update(false);
        metrics.mailbox_handle("registry", "GetRouteInfo").observe_nanos(1_000);
        let text = to_classic(&metrics.encode());
        let mut helped = HashSet::new();
        let mut typed = std::collections::HashMap::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                assert!(helped.insert(rest.split(' ').next().unwrap().to_owned()), "help twice: {line}");
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                assert!(typed.insert(name.to_owned(), kind.to_owned()).is_none(), "type twice: {line}");
            } else {
                assert!(!line.starts_with('#'), "comment left: {line}");
                let name = line.split(['{', ' ']).next().unwrap();
                let family = ["_bucket", "_sum", "_count"]
                    .iter()
                    .filter_map(|s| name.strip_suffix(s))
                    .find(|f| typed.get(*f).is_some_and(|k| k == "histogram"))
                    .unwrap_or(name);
                assert!(helped.contains(family) && typed.contains_key(family), "{name} has no help or type");
                if typed[family] == "counter" {
                    assert!(family.ends_with("_total"), "counter {family} without _total");
                }
            }
        }
        assert_eq!(typed.get("namesrv_requests_total").map(String::as_str), Some("counter"));
        assert_eq!(typed.get("process_cpu_seconds_total").map(String::as_str), Some("counter"));
        assert!(text.contains("namesrv_requests_total{code=\"GET_ROUTEINFO_BY_TOPIC\",result=\"TOPIC_NOT_EXIST\"} 1\n"));
    }
}
