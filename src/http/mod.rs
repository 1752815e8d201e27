//! The HTTP endpoint beside the remoting port (actix-web, one worker): Prometheus metrics, the
//! liveness and readiness probes, Java's address-server answer, the status page and the
//! read-only JSON API behind it. Nothing over HTTP changes state.

mod api;
mod controller;
mod page;

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::header::{self, ContentType};
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::json;

use crate::controller::messages::GetMetadata;
use crate::controller::ControllerHandle;
use crate::mailbox::{Mailbox, Queued, Request};
use crate::metrics::Metrics;
use crate::origin::ConnId;
use crate::registry::messages::{GetReadiness, GetScrapeFigures, Ping};
use crate::registry::RegistryHandle;

/// How long the registry may take to answer the liveness probe.
const LIVENESS_DEADLINE: Duration = Duration::from_secs(1);

/// Whether the remoting port listens yet: the server's half of readiness (the registry owns
/// the other, the `need_wait_for_service` gate).
#[derive(Debug, Default)]
pub struct Listening(AtomicBool);

impl Listening {
    /// Not listening yet.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// The remoting port is listening.
    pub fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether it is.
    fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// What the handlers reach.
#[derive(Clone)]
pub struct HttpState {
    /// Route state; `None` in a standalone controller (no NameServer runs).
    pub registry: Option<RegistryHandle>,
    /// The controller, when it runs here.
    pub controller: Option<ControllerHandle>,
    /// Exported figures; `None` when metrics are off.
    pub metrics: Arc<Metrics>,
    /// Whether the remoting port listens yet.
    pub listening: Arc<Listening>,
    /// What `/rocketmq/nsaddr` answers; empty: this server's own remoting address.
    pub address_list: String,
    /// The remoting port, for the default address-server answer.
    pub remoting_port: u16,
    /// The remoting `bind_address`, for the default address-server answer; when it is a wildcard
    /// (`0.0.0.0`, `::`), the local address the HTTP client reached stands in.
    pub bind_address: String,
}

/// The local address of an HTTP connection, noted when it is accepted.
#[derive(Debug, Clone, Copy)]
struct LocalAddr(std::net::SocketAddr);

/// Notes the local address of each accepted HTTP connection (see [`LocalAddr`]).
fn note_local_addr(connection: &dyn std::any::Any, data: &mut actix_web::dev::Extensions) {
    if let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() {
        if let Ok(local) = stream.local_addr() {
            data.insert(LocalAddr(local));
        }
    }
}

/// How many HTTP connections are served at once and how long one may stay without a request.
#[derive(Debug, Clone, Copy)]
pub struct HttpLimits {
    /// Connections served at once; more wait in the listen queue.
    pub max_connections: usize,
    /// Idle keep-alive time and the deadline for a request's head.
    pub idle_timeout: Duration,
}

/// Serves `listener` on one worker of its own, within `limits`; stopped through the handle.
pub fn start(listener: TcpListener, state: HttpState, limits: HttpLimits) -> std::io::Result<ServerHandle> {
    let data = web::Data::new(state);
    let permits = web::Data::new(api::ApiPermits::default());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(permits.clone())
            .route("/metrics", web::get().to(metrics))
            .route("/livez", web::get().to(livez))
            .route("/readyz", web::get().to(readyz))
            .route("/rocketmq/{subgroup}", web::get().to(nsaddr))
            .route("/", web::get().to(page::index))
            .route("/status.js", web::get().to(page::script))
            .configure(api::routes)
            .route("/api/v1/controller", web::get().to(controller::overview))
    })
    .on_connect(note_local_addr)
    .workers(1)
    .max_connections(limits.max_connections)
    .keep_alive(limits.idle_timeout)
    .client_request_timeout(limits.idle_timeout)
    .client_disconnect_timeout(Duration::from_secs(1))
    .disable_signals()
    .shutdown_timeout(1)
    .listen(listener)?
    .run();
    let handle = server.handle();
    actix::spawn(server);
    Ok(handle)
}

/// The OpenMetrics content type.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// `GET /metrics`: the Prometheus exposition, registry figures read now: OpenMetrics when the
/// scraper asks for it (Prometheus does), else the classic text format 0.0.4.
async fn metrics(state: web::Data<HttpState>, request: HttpRequest) -> HttpResponse {
    let metrics = &state.metrics;
    if !metrics.is_on() {
        return HttpResponse::NotFound().body("metrics are off (metrics_enabled = false)\n");
    }
    if let Some(registry) = &state.registry {
        let asked = registry.ask(GetScrapeFigures { conn: ConnId::SERVER });
        if let Ok(Ok(scrape)) = tokio::time::timeout(LIVENESS_DEADLINE, asked).await {
            metrics.set_registry_figures(scrape.totals);
            metrics.cluster_brokers.set(&scrape.clusters);
        }
    }
    let accept = request.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let (content_type, body) = if wants_openmetrics(accept) {
        (OPENMETRICS, metrics.encode())
    } else {
        (crate::metrics::text::CONTENT_TYPE, metrics.encode_classic())
    };
    HttpResponse::Ok().content_type(content_type).insert_header((header::VARY, "Accept")).body(body)
}

/// Whether an `Accept` header prefers OpenMetrics to plain text: the highest `q` of
/// `application/openmetrics-text` is positive and at least that of `text/plain`, `text/*`, `*/*`.
fn wants_openmetrics(accept: &str) -> bool {
    let (mut openmetrics, mut plain) = (0.0f32, 0.0f32);
    for range in accept.split(',') {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or_default().to_ascii_lowercase();
        let q = parts.find_map(|p| p.strip_prefix("q=")).map_or(1.0, |q| q.parse().unwrap_or(0.0));
        match media.as_str() {
            "application/openmetrics-text" => openmetrics = openmetrics.max(q),
            "text/plain" | "text/*" | "*/*" => plain = plain.max(q),
            _ => {}
        }
    }
    openmetrics > 0.0 && openmetrics >= plain
}

/// `GET /livez`: 200 while the actor that owns the clock makes progress — the registry, or in a
/// standalone controller the controller: it handled a message within the last second (a busy
/// actor is live, however long its queue), or, idle, it answers a probe within a second; else 503
/// (wedged, or gone).
pub async fn livez(state: web::Data<HttpState>) -> HttpResponse {
    let probed = match (&state.registry, &state.controller) {
        (Some(registry), _) => probe(registry, "registry", Ping { conn: ConnId::SERVER }, LIVENESS_DEADLINE).await,
        (None, Some(controller)) => {
            probe(controller, "controller", GetMetadata { conn: ConnId::SERVER }, LIVENESS_DEADLINE).await
        }
        (None, None) => Ok(()),
    };
    match probed {
        Ok(()) => HttpResponse::Ok().json(json!({"status": "ok"})),
        Err(reason) => {
            HttpResponse::ServiceUnavailable().json(json!({"status": "failing", "reason": reason.to_string()}))
        }
    }
}

/// Why an actor failed a liveness probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// The actor stopped.
    #[error("{actor} gone: {error}")]
    Gone {
        /// Which actor.
        actor: &'static str,
        /// What its mailbox said.
        error: actix::MailboxError,
    },
    /// The actor runs but did not answer in time (wedged or overloaded).
    #[error("{actor} did not answer within {millis} ms")]
    Silent {
        /// Which actor.
        actor: &'static str,
        /// The deadline it missed.
        millis: u128,
    },
}

/// Whether `actor` (named `name`) made progress within `deadline`, or answers `message` within it.
async fn probe<A, M>(actor: &Mailbox<A>, name: &'static str, message: M, deadline: Duration) -> Result<(), ProbeError>
where
    A: actix::Actor + actix::Handler<Queued<M>>,
    A::Context: actix::dev::ToEnvelope<A, Queued<M>>,
    M: Request,
{
    if actor.since_progress() < deadline {
        return Ok(());
    }
    answers_within(actor, name, message, deadline).await
}

/// Whether `actor` (named `name`) answers `message` within `deadline`.
async fn answers_within<A, M>(
    actor: &Mailbox<A>,
    name: &'static str,
    message: M,
    deadline: Duration,
) -> Result<(), ProbeError>
where
    A: actix::Actor + actix::Handler<Queued<M>>,
    A::Context: actix::dev::ToEnvelope<A, Queued<M>>,
    M: Request,
{
    match tokio::time::timeout(deadline, actor.ask(message)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(ProbeError::Gone { actor: name, error }),
        Err(_) => Err(ProbeError::Silent { actor: name, millis: deadline.as_millis() }),
    }
}

/// Whether the registry answers a probe within `deadline`.
pub async fn probe_registry(registry: &RegistryHandle, deadline: Duration) -> Result<(), ProbeError> {
    answers_within(registry, "registry", Ping { conn: ConnId::SERVER }, deadline).await
}

/// `GET /readyz`: 503 until the remoting port listens and the registry serves route queries
/// (its readiness gate, `need_wait_for_service`, is open); the registry is asked, so this says
/// what a route query would get.
async fn readyz(state: web::Data<HttpState>) -> HttpResponse {
    match not_ready(&state).await {
        None => HttpResponse::Ok().json(json!({"status": "ready"})),
        Some(reason) => HttpResponse::ServiceUnavailable().json(json!({"status": "not ready", "reason": reason})),
    }
}

/// `None` when ready, else why not.
async fn not_ready(state: &HttpState) -> Option<String> {
    if !state.listening.get() {
        return Some("the remoting port is not listening yet".into());
    }
    let registry = state.registry.as_ref()?;
    let asked = registry.ask(GetReadiness { conn: ConnId::SERVER });
    match tokio::time::timeout(LIVENESS_DEADLINE, asked).await {
        Ok(Ok(None)) => None,
        Ok(Ok(Some(left))) => Some(format!("waiting for service: {} s left", left.as_secs() + 1)),
        Ok(Err(error)) => Some(ProbeError::Gone { actor: "registry", error }.to_string()),
        Err(_) => Some(ProbeError::Silent { actor: "registry", millis: LIVENESS_DEADLINE.as_millis() }.to_string()),
    }
}

/// `GET /rocketmq/nsaddr`: Java's address-server answer, `host:port;host:port`, from
/// `address_server_list`, or this server's own remoting address. Clients trust this list, so it
/// never comes from what the request says (`Host`, `X-Forwarded-Host`, `Forwarded`): it is the
/// configured `bind_address`, or, when that is a wildcard, the local address the client reached.
async fn nsaddr(state: web::Data<HttpState>, request: HttpRequest) -> HttpResponse {
    let list = state.address_list.trim();
    let list = if list.is_empty() {
        let reached = request.conn_data::<LocalAddr>().map(|l| l.0.ip());
        own_address(&state.bind_address, reached, state.remoting_port)
    } else {
        list.to_owned()
    };
    HttpResponse::Ok().content_type(ContentType::plaintext()).body(list)
}

/// This server's remoting address as `host:port`: `bind_address` unless it is a wildcard (or
/// empty), else `reached` (an IPv4-mapped IPv6 address shown as IPv4).
fn own_address(bind_address: &str, reached: Option<std::net::IpAddr>, port: u16) -> String {
    let bind = bind_address.trim().trim_start_matches('[').trim_end_matches(']');
    let wildcard = bind.is_empty() || bind.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_unspecified());
    let host = match (wildcard, reached) {
        (false, _) => bind.parse::<std::net::IpAddr>().map_or_else(|_| bind.to_owned(), |ip| ip.to_string()),
        (true, Some(ip)) => ip.to_canonical().to_string(),
        (true, None) => "127.0.0.1".to_owned(),
    };
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notifier::{Notifier, NotifyLimits};
    use crate::registry::messages::Stall;
    use crate::registry::options::RegistryOptions;
    use crate::registry::RouteRegistry;

    #[test]
    fn openmetrics_is_served_to_whoever_prefers_it_and_plain_text_to_everyone_else() {
        let prometheus =
            "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,\
                          text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(wants_openmetrics(prometheus));
        assert!(wants_openmetrics("application/openmetrics-text"));
        assert!(!wants_openmetrics(""), "no Accept header: curl, promtool");
        assert!(!wants_openmetrics("*/*"));
        assert!(!wants_openmetrics("text/plain;version=0.0.4"));
        assert!(!wants_openmetrics("text/plain, application/openmetrics-text;q=0.5"));
        assert!(!wants_openmetrics("application/openmetrics-text;q=0"));
    }

    #[test]
    fn the_own_address_is_the_bound_one_or_the_address_reached_behind_a_wildcard() {
        let reached = Some("10.1.2.3".parse().unwrap());
        assert_eq!(own_address("192.168.0.7", reached, 9876), "192.168.0.7:9876");
        assert_eq!(own_address("namesrv-0.local", reached, 9876), "namesrv-0.local:9876");
        assert_eq!(own_address("0.0.0.0", reached, 9876), "10.1.2.3:9876");
        assert_eq!(own_address("::", Some("::ffff:10.1.2.3".parse().unwrap()), 1), "10.1.2.3:1");
        assert_eq!(own_address("[::]", Some("fd00::5".parse().unwrap()), 1), "[fd00::5]:1");
        assert_eq!(own_address("::1", None, 1), "[::1]:1");
        assert_eq!(own_address("", None, 1), "127.0.0.1:1");
    }

    #[test]
    fn liveness_fails_while_the_registry_is_wedged_and_recovers_after() {
        actix::System::new().block_on(async {
            let notifier = Notifier::start(479, NotifyLimits { max_in_flight: 1, max_per_second: 1 }, Metrics::off());
            let own = actix::Arbiter::new();
            let options = RegistryOptions::default();
            let registry =
                RouteRegistry::start_on(&own.handle(), options, Duration::from_secs(60), notifier, Metrics::off());
            assert_eq!(probe_registry(&registry, Duration::from_millis(500)).await, Ok(()));
            registry.tell(Stall { conn: ConnId::SERVER, millis: 800 });
            let wedged = probe_registry(&registry, Duration::from_millis(200)).await;
            assert_eq!(wedged, Err(ProbeError::Silent { actor: "registry", millis: 200 }));
            assert_eq!(wedged.unwrap_err().to_string(), "registry did not answer within 200 ms");
            assert_eq!(probe_registry(&registry, Duration::from_secs(2)).await, Ok(()), "answers again after");
        });
    }
}
