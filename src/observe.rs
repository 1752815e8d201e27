//! What makes the server visible while it runs: the HTTP endpoint, a sampler that every five
//! seconds records the request rate, p99 and mailbox depth for the status page's charts, and a
//! one-line INFO summary every `log_summary_secs`.

use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::ServerHandle;
use tracing::{info, warn};

use crate::clock::{Clock, SystemClock};
use crate::controller::ControllerHandle;
use crate::http::{self, HttpLimits, HttpState, Listening};
use crate::listen::bind_host_port;
use crate::metrics::histogram::{quantile, BUCKETS};
use crate::metrics::Metrics;
use crate::origin::ConnId;
use crate::registry::messages::GetFigures;
use crate::registry::RegistryHandle;
use crate::settings::{AclProtect, Settings};

/// What the HTTP endpoint answers without credentials (it checks none, whatever `acl_protect`).
pub const READABLE_WITHOUT_CREDENTIALS: &str =
    "/, /metrics, /api/v1/stats, /api/v1/cluster, /api/v1/brokers, /api/v1/topics, /api/v1/topics/{topic}/route";

/// The warning due when access control protects every remoting code (`acl_protect = "all"`,
/// route and list queries included) while the HTTP endpoint, which shows the same clusters,
/// brokers, topics and routes without credentials, listens on `ip`, an address other hosts can
/// reach. Not refused: `http_listen` follows the remoting host by default, so this is common.
pub fn open_http_warning(settings: &Settings, ip: std::net::IpAddr) -> Option<&'static str> {
    (settings.acl.acl_enabled && settings.acl.acl_protect == AclProtect::All && !ip.is_loopback()).then_some(
        "acl_protect = all, but the HTTP endpoint answers without credentials: clusters, broker addresses, topic \
         names and routes are readable there; bind http_listen to loopback, set it empty, or restrict it",
    )
}

/// Seconds between samples.
const SAMPLE_EVERY: Duration = Duration::from_secs(5);

/// The HTTP endpoint could not listen.
#[derive(Debug, thiserror::Error)]
#[error("cannot serve http on {addr}: {error}")]
pub struct ObserveError {
    /// The address it was to listen on.
    pub addr: String,
    /// Why not.
    pub error: std::io::Error,
}

/// The HTTP endpoint and the sampler of a running server.
pub struct Observer {
    listening: Arc<Listening>,
    http: Option<ServerHandle>,
    http_addr: Option<std::net::SocketAddr>,
    sampler: Option<tokio::task::JoinHandle<()>>,
    summary: Option<tokio::task::JoinHandle<()>>,
}

impl Observer {
    /// Starts the HTTP endpoint on `listener` (or on `http_listen`, unless empty) and the
    /// sampler (when metrics are on). Must run inside an actix System.
    pub fn start(
        settings: &Settings,
        (registry, controller): (Option<RegistryHandle>, Option<ControllerHandle>),
        metrics: Arc<Metrics>,
        listener: Option<std::net::TcpListener>,
    ) -> Result<Self, ObserveError> {
        let listening = Listening::new();
        let listen = settings.observe.http_listen.trim();
        let listener = match listener {
            Some(l) => Some(l),
            None if listen.is_empty() => None,
            None => Some(bind_host_port(listen).map_err(|error| ObserveError { addr: listen.into(), error })?),
        };
        let mut http_addr = None;
        let http = match listener {
            Some(listener) => {
                let addr = listener.local_addr().map_err(|error| ObserveError { addr: listen.into(), error })?;
                let state = HttpState {
                    registry: registry.clone(),
                    controller,
                    metrics: metrics.clone(),
                    listening: listening.clone(),
                    address_list: settings.observe.address_server_list.clone(),
                    remoting_port: settings.listen.listen_port,
                    bind_address: settings.listen.bind_address.clone(),
                };
                let handle = http::start(listener, state, http_limits(settings))
                    .map_err(|error| ObserveError { addr: addr.to_string(), error })?;
                info!(http_addr = %addr, "http endpoint up");
                if let Some(warning) = open_http_warning(settings, addr.ip()) {
                    warn!(http_addr = %addr, readable = READABLE_WITHOUT_CREDENTIALS, "{warning}");
                }
                http_addr = Some(addr);
                Some(handle)
            }
            None => None,
        };
        let on = Some(metrics).filter(|m| m.is_on());
        let sampler = on.clone().map(|m| actix::spawn(sample(m, registry.clone())));
        let every = Duration::from_secs(settings.observe.log_summary_secs);
        let summary = on
            .zip(registry)
            .filter(|_| !every.is_zero())
            .map(|(m, registry)| actix::spawn(summarize(m, registry, every)));
        Ok(Observer { listening, http, http_addr, sampler, summary })
    }

    /// Where the HTTP endpoint listens; `None` when it is off.
    pub fn http_addr(&self) -> Option<std::net::SocketAddr> {
        self.http_addr
    }

    /// The remoting port is listening: the server may report ready.
    pub fn listening(&self) {
        self.listening.set();
    }

    /// Stops the HTTP endpoint and the sampler.
    pub async fn stop(self) {
        for task in [self.sampler, self.summary].into_iter().flatten() {
            task.abort();
        }
        if let Some(http) = self.http {
            http.stop(true).await;
        }
    }
}

/// Samples every five seconds for the charts, half a period off the summary's whole seconds: a
/// sample taken in the summary's tick would count the summary's own `GetFigures` as queued.
/// The HTTP endpoint's connection limits from the settings.
fn http_limits(settings: &Settings) -> HttpLimits {
    HttpLimits {
        max_connections: settings.observe.http_max_connections,
        idle_timeout: Duration::from_millis(settings.observe.http_idle_timeout_ms),
    }
}

async fn sample(metrics: Arc<Metrics>, registry: Option<RegistryHandle>) {
    let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + SAMPLE_EVERY / 2, SAMPLE_EVERY);
    loop {
        interval.tick().await;
        let all = metrics.all_requests();
        let now = SystemClock.now();
        let depth = registry.as_ref().map_or(0, |r| r.depth());
        metrics.history.sample(now, all.count(), all.bucket_counts(), depth, metrics.connections.get());
    }
}

/// Logs one line every `every`: connections, brokers, topics, requests/s, p99, mailbox depth.
async fn summarize(metrics: Arc<Metrics>, registry: RegistryHandle, every: Duration) {
    let mut interval = tokio::time::interval(every);
    interval.tick().await;
    let all = metrics.all_requests();
    let (mut count, mut buckets) = (all.count(), all.bucket_counts());
    loop {
        interval.tick().await;
        let Ok(figures) = registry.ask(GetFigures { conn: ConnId::SERVER }).await else {
            continue;
        };
        let (now_count, now_buckets) = (all.count(), all.bucket_counts());
        let delta: [u64; BUCKETS.len() + 1] = std::array::from_fn(|i| now_buckets[i].saturating_sub(buckets[i]));
        let rate = now_count.saturating_sub(count) as f64 / every.as_secs_f64();
        (count, buckets) = (now_count, now_buckets);
        info!(
            connections = metrics.connections.get(),
            brokers = figures.brokers,
            topics = figures.topics,
            requests_per_second = (rate * 10.0).round() / 10.0,
            p99_ms = quantile(&delta, 0.99) * 1000.0,
            mailbox_depth = registry.depth(),
            "summary"
        );
    }
}
