//! Series an alert relies on, scraped from a fresh server over real TCP: every event counter's
//! known labels at 0 before the first event, so `increase()` sees that event; and which build is
//! running, by metric, status API and `--version`.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;

use crate::common::checks::version_commit;
use crate::common::http::{get, sample, samples};
use crate::common::*;
use namesrv::acl::verify::Denied;
use namesrv::metrics::elections::{ELECTION_CAUSES, ELECTION_RESULTS, FAILOVER_CAUSES};
use namesrv::metrics::zero::{ACL_REFUSAL_REASONS, SECURITY_RELOAD_FILES, SECURITY_RELOAD_RESULTS, TLS_RESULTS};

#[test]
fn event_counters_are_exported_at_zero_before_their_first_event() {
    let server = TestServer::with_http(|_| {});
    let text = get(server.http_addr.unwrap(), "/metrics").body;
    let mut series = vec![
        r#"namesrv_broker_registrations_total{result="accepted"}"#.to_owned(),
        r#"namesrv_broker_registrations_total{result="rejected"}"#.to_owned(),
        r#"namesrv_broker_removals_total{reason="expired"}"#.to_owned(),
        r#"namesrv_broker_removals_total{reason="connection_closed"}"#.to_owned(),
        r#"namesrv_broker_removals_total{reason="unregistered"}"#.to_owned(),
        r#"namesrv_config_updates_total{result="accepted"}"#.to_owned(),
        r#"namesrv_config_updates_total{result="refused"}"#.to_owned(),
    ];
    series.extend(ACL_REFUSAL_REASONS.iter().map(|r| format!(r#"namesrv_acl_refusals_total{{reason="{r}"}}"#)));
    series.extend(TLS_RESULTS.iter().map(|r| format!(r#"namesrv_tls_connections_total{{result="{r}"}}"#)));
    for file in SECURITY_RELOAD_FILES {
        let reloads = SECURITY_RELOAD_RESULTS.iter();
        series.extend(reloads.map(|r| format!(r#"namesrv_security_reloads_total{{file="{file}",result="{r}"}}"#)));
    }
    for cause in ELECTION_CAUSES {
        let results = ELECTION_RESULTS.iter();
        series
            .extend(results.map(|r| format!(r#"namesrv_controller_elections_total{{cause="{cause}",result="{r}"}}"#)));
    }
    series
        .extend(FAILOVER_CAUSES.iter().map(|c| format!(r#"namesrv_controller_failover_seconds_count{{cause="{c}"}}"#)));
    series.push("namesrv_controller_groups_without_master".to_owned());
    series.push("namesrv_kv_write_failures_total".to_owned());
    series.push("namesrv_config_write_failures_total".to_owned());
    for name in &series {
        assert_eq!(sample(&text, name), Some(0.0), "{name} at 0 in\n{text}");
    }
}

#[test]
fn every_reason_access_control_gives_is_one_exported_at_zero() {
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let key = || "k".to_owned();
    let role = namesrv::acl::accounts::Role::Client;
    let denials = [
        Denied::MissingAccessKey(100),
        Denied::AddressNotAllowed(ip),
        Denied::UnknownAccessKey(key()),
        Denied::AccountAddressNotAllowed(key(), ip),
        Denied::MissingSignature(key()),
        Denied::BadSignature(key()),
        Denied::RoleNotAllowed { key: key(), role, code: 100 },
        Denied::MissingBrokerName(key()),
        Denied::BrokerNotListed { key: key(), broker: "b".into() },
    ];
    for denied in denials {
        assert!(ACL_REFUSAL_REASONS.contains(&denied.reason()), "{} is not exported at 0", denied.reason());
    }
}

#[test]
fn the_build_is_named_by_metric_status_api_and_version_with_the_commit_it_came_from() {
    let out = Command::new(env!("CARGO_BIN_EXE_namesrv")).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(out.status.success(), "{version}");
    let commit = version_commit(&version, "namesrv", env!("CARGO_PKG_VERSION"));

    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    let text = get(http, "/metrics").body;
    let info = format!(r#"namesrv_build_info{{version="{}",commit="{commit}"}}"#, env!("CARGO_PKG_VERSION"));
    assert_eq!(sample(&text, &info), Some(1.0), "{info} in\n{text}");
    let stats = get(http, "/api/v1/stats").json();
    assert_eq!(
        (stats["version"].as_str(), stats["commit"].as_str()),
        (Some(env!("CARGO_PKG_VERSION")), Some(commit.as_str()))
    );
}

#[test]
fn broker_counts_per_cluster_show_a_group_that_lost_its_master() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    let scrape = |cluster: &str| {
        let text = get(http, "/metrics").body;
        let series = |name: &str| sample(&text, &format!(r#"{name}{{cluster="{cluster}"}}"#));
        let role =
            |role: &str| sample(&text, &format!(r#"namesrv_cluster_brokers{{cluster="{cluster}",role="{role}"}}"#));
        (role("master"), role("slave"), series("namesrv_cluster_groups_without_master"))
    };
    let a0 = Broker::new("east", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
    let a1 = Broker::new("east", "broker-a", 1, "127.0.0.1:10912").topics(&["T1", "T2"]);
    let b0 = Broker::new("east", "broker-b", 0, "127.0.0.1:10921").topics(&["T1", "T2"]);
    let w0 = Broker::new("west", "broker-w", 0, "127.0.0.1:10931").topics(&["T3", "T4"]);
    let mut a0_conn = server.client();
    a0_conn.register(&a0);
    for broker in [&a1, &b0, &w0] {
        server.register(broker);
    }
    assert_eq!(scrape("east"), (Some(2.0), Some(1.0), Some(0.0)));
    assert_eq!(scrape("west"), (Some(1.0), Some(0.0), Some(0.0)));
    assert_eq!(a0_conn.unregister(&a0).code, 0, "broker-a's master leaves; its slave stays");
    assert_eq!(scrape("east"), (Some(1.0), Some(1.0), Some(1.0)));
    server.client().unregister(&w0);
    assert_eq!(scrape("west"), (None, None, None), "a cluster gone from the registry leaves no series");
}

#[test]
fn a_scrape_reads_the_registry_in_one_message() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    server.register(&Broker::new("east", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"]));
    // Registry messages handled, per message type, as the previous scrape left them.
    let handled =
        || samples(&get(http, "/metrics").body, r#"namesrv_mailbox_handle_seconds_count{actor="registry",message=""#);
    let _warm = handled();
    let (before, after) = (handled(), handled());
    let grown: Vec<&str> = after
        .iter()
        .filter(|(message, count)| **count > before.get(*message).copied().unwrap_or(0.0))
        .map(|(message, _)| message.as_str())
        .collect();
    assert_eq!(grown, [r#"GetScrapeFigures"}"#], "registry messages one scrape caused: {after:?} after {before:?}");
    let scrapes = |handled: &BTreeMap<String, f64>| handled.get(r#"GetScrapeFigures"}"#).copied();
    assert_eq!(scrapes(&after), scrapes(&before).map(|count| count + 1.0));
    assert_eq!(
        sample(&get(http, "/metrics").body, r#"namesrv_cluster_brokers{cluster="east",role="master"}"#),
        Some(1.0)
    );
}
