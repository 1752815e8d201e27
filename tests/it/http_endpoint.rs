//! The HTTP endpoint over real TCP: Prometheus metrics with the documented names, the probes,
//! the address-server answer, the status page and its JSON API.

use std::time::Duration;

use crate::common::checks::assert_success;
use crate::common::http::{get, get_accepting, get_with_headers, sample};
use crate::common::*;
use namesrv::protocol::RemotingCommand;

#[test]
fn metrics_count_requests_registrations_removals_and_read_the_registry_when_scraped() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "b1", 0, "127.0.0.1:1").topics(&["T1", "T2"])));
    let mut client = server.client();
    assert!(client.route("T1").is_ok());
    assert!(client.route("T1").is_ok());
    assert_eq!(client.route("nope"), Err(17));
    let mut oneway = RemotingCommand::request(106, None);
    oneway.flag = 2;
    client.send(&oneway);
    let mut other = server.client();
    assert_success(&other.register(&Broker::new("c", "b2", 0, "127.0.0.1:2").topics(&["T3", "T4"])));
    drop(other);
    // Both are counted on other threads after the fact: the close on `other`'s I/O thread, the
    // one-way request once the registry has answered it.
    assert!(eventually(Duration::from_secs(5), || {
        let text = get(http, "/metrics").body;
        sample(&text, r#"namesrv_broker_removals_total{reason="connection_closed"}"#) == Some(1.0)
            && sample(&text, r#"namesrv_requests_total{code="GET_BROKER_CLUSTER_INFO",result="ONEWAY"}"#) == Some(1.0)
    }));

    let response = get_accepting(http, "/metrics", PROMETHEUS_ACCEPT);
    assert_eq!(response.status, 200);
    assert!(response.content_type.starts_with("application/openmetrics-text"), "{}", response.content_type);
    let text = response.body;
    let at = |series: &str| sample(&text, series).unwrap_or_else(|| panic!("no {series} in\n{text}"));
    assert_eq!(at(r#"namesrv_requests_total{code="GET_ROUTEINFO_BY_TOPIC",result="SUCCESS"}"#), 2.0);
    assert_eq!(at(r#"namesrv_requests_total{code="GET_ROUTEINFO_BY_TOPIC",result="TOPIC_NOT_EXIST"}"#), 1.0);
    assert_eq!(at(r#"namesrv_requests_total{code="GET_BROKER_CLUSTER_INFO",result="ONEWAY"}"#), 1.0);
    assert_eq!(at(r#"namesrv_request_duration_seconds_count{code="GET_ROUTEINFO_BY_TOPIC"}"#), 3.0);
    assert_eq!(at(r#"namesrv_broker_registrations_total{result="accepted"}"#), 2.0);
    assert_eq!((at("namesrv_brokers"), at("namesrv_clusters"), at("namesrv_topics")), (1.0, 1.0, 2.0));
    assert_eq!((at("namesrv_route_cache_hits_total"), at("namesrv_route_cache_misses_total")), (1.0, 2.0));
    assert!(at("namesrv_connections") >= 2.0 && at("namesrv_connections_accepted_total") >= 3.0);
    assert!(at("namesrv_bytes_received_total") > 0.0 && at("namesrv_bytes_sent_total") > 0.0);
    assert_eq!(at(r#"namesrv_mailbox_depth{actor="registry"}"#), 0.0);
    // Route queries reach the registry one per message, or in batches when it runs on a thread
    // of its own (io_threads above 1).
    let routed = ["GetRouteInfo", "RouteBatch"].map(|m| {
        sample(&text, &format!(r#"namesrv_mailbox_handle_seconds_count{{actor="registry",message="{m}"}}"#))
            .unwrap_or(0.0)
    });
    assert!(routed[0] >= 3.0 || routed[1] >= 1.0, "route queries handled by the registry: {routed:?}");
    assert!(at("process_resident_memory_bytes") > 1e6 && at("process_open_fds") > 0.0);
    assert!(text.contains("namesrv_kv_write_failures_total") && text.ends_with("# EOF\n"));
}

/// The `Accept` header Prometheus 2.x scrapes with.
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

#[test]
fn metrics_without_an_openmetrics_accept_header_are_the_classic_text_format_with_the_same_series() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    let mut client = server.client();
    assert!(client.route("nope").is_err());
    let plain = get(http, "/metrics");
    assert_eq!(plain.status, 200);
    assert_eq!(plain.content_type, "text/plain; version=0.0.4; charset=utf-8");
    let text = plain.body;
    assert!(!text.contains("# EOF") && !text.contains("# UNIT"), "{text}");
    assert!(text.contains("# TYPE namesrv_requests_total counter\n"), "{text}");
    assert!(text.contains("# HELP namesrv_route_cache_misses_total "), "{text}");
    assert!(text.contains("# TYPE namesrv_request_duration_seconds histogram\n"), "{text}");
    let series = r#"namesrv_requests_total{code="GET_ROUTEINFO_BY_TOPIC",result="TOPIC_NOT_EXIST"}"#;
    assert_eq!(sample(&text, series), Some(1.0));
    let openmetrics = get_accepting(http, "/metrics", PROMETHEUS_ACCEPT).body;
    assert_eq!(sample(&openmetrics, series), Some(1.0));
    assert!(openmetrics.contains("# TYPE namesrv_requests counter\n"), "{openmetrics}");
}

#[test]
fn metrics_can_be_switched_off() {
    let server = TestServer::with_http(|s| s.observe.metrics_enabled = false);
    assert_eq!(get(server.http_addr.unwrap(), "/metrics").status, 404);
    assert_eq!(get(server.http_addr.unwrap(), "/livez").status, 200);
}

#[test]
fn probes_say_live_and_ready_and_readiness_follows_the_wait() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    assert_eq!((get(http, "/livez").status, get(http, "/readyz").status), (200, 200));
    assert_eq!(get(http, "/livez").json()["status"], "ok");

    let waiting = TestServer::with_http(|s| {
        s.routing.need_wait_for_service = true;
        s.routing.wait_seconds_for_service = 2;
    });
    let http = waiting.http_addr.unwrap();
    let not_ready = get(http, "/readyz");
    assert_eq!(not_ready.status, 503);
    assert!(not_ready.json()["reason"].as_str().unwrap().contains("waiting for service"));
    assert_eq!(get(http, "/livez").status, 200, "alive while not ready");
    assert!(eventually(Duration::from_secs(5), || get(http, "/readyz").status == 200));
}

#[test]
fn the_address_server_answers_this_server_or_the_configured_list() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    let own = get(http, "/rocketmq/nsaddr");
    assert_eq!((own.status, own.body.clone()), (200, format!("127.0.0.1:{}", server.addr.port())));
    assert!(own.content_type.starts_with("text/plain"));

    let fleet = TestServer::with_http(|s| s.observe.address_server_list = "10.0.0.1:9876;10.0.0.2:9876".into());
    assert_eq!(get(fleet.http_addr.unwrap(), "/rocketmq/nsaddr").body, "10.0.0.1:9876;10.0.0.2:9876");
}

#[test]
fn the_address_server_ignores_forged_host_and_forwarding_headers() {
    let forged = [
        ("evil.example:9876", ""),
        ("evil.example", "X-Forwarded-Host: evil.example:9876\r\n"),
        ("evil.example", "Forwarded: host=evil.example:9876;proto=http\r\n"),
        ("127.0.0.1", "X-Forwarded-Host: evil.example\r\nForwarded: for=1.2.3.4;host=evil.example\r\n"),
    ];
    // A wildcard bind answers the address the client reached; a specific one, itself.
    for bind in ["0.0.0.0", "127.0.0.1"] {
        let server = TestServer::with_http(|s| s.listen.bind_address = bind.into());
        let http = server.http_addr.unwrap();
        for (host, headers) in forged {
            let answer = get_with_headers(http, host, "/rocketmq/nsaddr", headers);
            assert_eq!(answer.status, 200);
            assert_eq!(
                answer.body,
                format!("127.0.0.1:{}", server.addr.port()),
                "bind {bind}, host {host}, {headers:?}"
            );
        }
    }
}

#[test]
fn the_api_lists_brokers_topics_routes_and_stats_and_the_page_is_served() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "b1", 0, "127.0.0.1:1").topics(&["Orders", "Payments"])));

    let brokers = get(http, "/api/v1/brokers").json();
    assert_eq!(brokers[0]["broker_name"], "b1");
    assert_eq!((brokers[0]["addr"].as_str(), brokers[0]["topics"].as_u64()), (Some("127.0.0.1:1"), Some(2)));
    assert!(brokers[0]["silent_ms"].as_u64().unwrap() < 5_000);
    assert_eq!(get(http, "/api/v1/topics?q=Ord").json()["topics"], serde_json::json!(["Orders"]));
    let route = get(http, "/api/v1/topics/Orders/route");
    assert_eq!(route.status, 200);
    assert_eq!(route.json()["brokerDatas"][0]["brokerAddrs"]["0"], "127.0.0.1:1");
    assert_eq!(get(http, "/api/v1/topics/Nope/route").status, 404);
    assert_eq!(get(http, "/api/v1/cluster").json()["clusterAddrTable"]["c"], serde_json::json!(["b1"]));
    let stats = get(http, "/api/v1/stats").json();
    assert_eq!((stats["brokers"].as_u64(), stats["topics"].as_u64()), (Some(1), Some(2)));
    assert_eq!(stats["mailbox_depth"]["registry"], 0);

    let page = get(http, "/");
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html") && page.body.contains("<script src=\"/status.js\">"));
    assert!(get(http, "/status.js").body.contains("/api/v1/brokers"));
    assert!(get(http, "/status.js").body.contains("/api/v1/controller"), "the controller's groups, when it runs");
    assert!(page.body.contains("id=\"controller-section\" hidden"), "hidden without a controller");
}

#[test]
fn http_changes_nothing() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    for path in ["/metrics", "/livez", "/api/v1/brokers"] {
        let mut stream = std::net::TcpStream::connect(http).unwrap();
        use std::io::{Read, Write};
        write!(stream, "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).unwrap();
        assert!(out.starts_with("HTTP/1.1 404") || out.starts_with("HTTP/1.1 405"), "{path}: {out}");
    }
}

/// The topic search pages through the sorted names with `next` / `after`.
#[test]
fn the_topic_search_is_paged() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.unwrap();
    let mut conn = server.client();
    let topics: Vec<String> = (0..10).map(|i| format!("Order{i}")).chain(["Payments".to_owned()]).collect();
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    assert_success(&conn.register(&Broker::new("c", "b1", 0, "127.0.0.1:1").topics(&names)));

    let mut seen = Vec::new();
    let mut path = "/api/v1/topics?q=Order&limit=4".to_owned();
    loop {
        let page = get(http, &path).json();
        let got: Vec<String> = serde_json::from_value(page["topics"].clone()).unwrap();
        assert!(got.len() <= 4, "{page}");
        seen.extend(got);
        match page["next"].as_str() {
            Some(next) => path = format!("/api/v1/topics?q=Order&limit=4&after={next}"),
            None => break,
        }
    }
    assert_eq!(seen, topics[..10], "every Order topic once, in order");
}
