//! The read-only JSON API behind the status page, under `/api/v1/`. At most
//! [`API_CONCURRENCY`] calls run at once (more get 503 with `Retry-After`), and listings are
//! paged and searched here, off the registry's thread, on a snapshot it shares.

use std::sync::Arc;
use std::time::Duration;

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};

use super::HttpState;
use crate::metrics::build;
use crate::origin::ConnId;
use crate::protocol::json::lenient::parse_lenient;
use crate::protocol::json::JsonStyle;
use crate::registry::listings::search;
use crate::registry::listings::{ListingCache, ListingKind};
use crate::registry::messages::{GetClusterInfo, GetFigures, GetListingInputs, ListBrokers, RouteBatch};
use crate::registry::route_answer::{RouteAnswer, RouteQuery};

/// How long an API call waits for the registry.
const DEADLINE: Duration = Duration::from_secs(2);

/// API calls served at once; one more is answered 503 at once rather than queued, so HTTP
/// clients cannot stack up work for the registry.
pub const API_CONCURRENCY: usize = 4;

/// The permits of [`API_CONCURRENCY`], shared by every API call, and what the calls build once
/// per change of the tables.
#[derive(Debug, Clone)]
pub struct ApiPermits {
    permits: Arc<tokio::sync::Semaphore>,
    /// The sorted topic names the search pages through, built once per change of the tables.
    listings: Arc<ListingCache>,
}

impl Default for ApiPermits {
    fn default() -> Self {
        ApiPermits { permits: Arc::new(tokio::sync::Semaphore::new(API_CONCURRENCY)), listings: Arc::default() }
    }
}

impl ApiPermits {
    /// A permit for one call, or `None` when [`API_CONCURRENCY`] calls are under way.
    pub(super) fn take(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_owned().ok()
    }
}

/// The answer to a call past [`API_CONCURRENCY`]: come back in a second.
pub(super) fn busy() -> HttpResponse {
    HttpResponse::ServiceUnavailable()
        .insert_header(("Retry-After", "1"))
        .json(json!({"error": format!("busy: at most {API_CONCURRENCY} API calls at once")}))
}

/// The API's routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/v1/stats", web::get().to(stats))
        .route("/api/v1/cluster", web::get().to(cluster))
        .route("/api/v1/brokers", web::get().to(brokers))
        .route("/api/v1/topics", web::get().to(topics))
        .route("/api/v1/topics/{topic}/route", web::get().to(route));
}

/// A registry answer within the deadline, or a 503 saying why not.
async fn ask<M>(state: &HttpState, msg: M) -> Result<M::Output, HttpResponse>
where
    M: crate::mailbox::Request + crate::mailbox::Apply<crate::registry::RouteRegistry>,
{
    let Some(registry) = &state.registry else {
        return Err(HttpResponse::NotFound().json(json!({"error": "no NameServer runs here (standalone controller)"})));
    };
    match tokio::time::timeout(DEADLINE, registry.ask(msg)).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(error)) => Err(HttpResponse::ServiceUnavailable().json(json!({"error": error.to_string()}))),
        Err(_) => Err(HttpResponse::ServiceUnavailable().json(json!({"error": "registry did not answer in time"}))),
    }
}

/// `GET /api/v1/stats`: counts, mailbox depths, and the last minutes of request rate and p99.
async fn stats(state: web::Data<HttpState>, permits: web::Data<ApiPermits>) -> HttpResponse {
    let Some(_permit) = permits.take() else {
        return busy();
    };
    let figures = match ask(&state, GetFigures { conn: ConnId::SERVER }).await {
        Ok(f) => f,
        Err(response) => return response,
    };
    // With metrics off the figures they hold are absent (null), not zero.
    let metrics = Some(&*state.metrics).filter(|m| m.is_on());
    let depths: serde_json::Map<String, Value> = metrics
        .map(|m| m.mailbox_depths().into_iter().map(|(actor, depth)| (actor.to_owned(), json!(depth))).collect())
        .unwrap_or_default();
    let last_minute = metrics.and_then(|m| m.history.over_last(60));
    HttpResponse::Ok().json(json!({
        "version": build::VERSION,
        "commit": build::COMMIT,
        "brokers": figures.brokers,
        "clusters": figures.clusters,
        "topics": figures.topics,
        "route_cache_bytes": figures.route_cache_bytes,
        "connections": metrics.map(|m| m.connections.get()),
        "mailbox_depth": depths,
        "requests_per_second": last_minute.map(|p| p.requests_per_second),
        "p99_ms": last_minute.map(|p| p.p99_ms),
        "history": metrics.map(|m| m.history.points()).unwrap_or_default(),
    }))
}

/// `GET /api/v1/cluster`: the cluster info, with quoted keys.
async fn cluster(state: web::Data<HttpState>, permits: web::Data<ApiPermits>) -> HttpResponse {
    let Some(_permit) = permits.take() else {
        return busy();
    };
    match ask(&state, GetClusterInfo { conn: ConnId::SERVER }).await {
        Ok(body) => match parse_lenient::<Value>(&body) {
            Ok(value) => HttpResponse::Ok().json(value),
            Err(error) => HttpResponse::InternalServerError().json(json!({"error": error.to_string()})),
        },
        Err(response) => response,
    }
}

/// `GET /api/v1/brokers`: every live broker with its heartbeat age.
async fn brokers(state: web::Data<HttpState>, permits: web::Data<ApiPermits>) -> HttpResponse {
    let Some(_permit) = permits.take() else {
        return busy();
    };
    match ask(&state, ListBrokers { conn: ConnId::SERVER }).await {
        Ok(list) => HttpResponse::Ok().json(list),
        Err(response) => response,
    }
}

/// Parameters of the topic search.
#[derive(Deserialize)]
struct TopicQuery {
    /// A part of the name; empty lists every topic.
    #[serde(default)]
    q: String,
    /// Most names returned (at most 1,000).
    #[serde(default)]
    limit: Option<usize>,
    /// Only names after this one: the `next` of the previous page.
    #[serde(default)]
    after: Option<String>,
}

/// `GET /api/v1/topics?q=part&limit=n&after=name`: topic names containing `q`, sorted, one
/// page at a time; `next` is the `after` of the next page (absent on the last one). The
/// registry hands over its groups' topic sets; the sorted names are built from them (once per
/// change of the tables, on actix-web's blocking pool, not the HTTP worker), and the search and
/// the page are cut here.
async fn topics(
    state: web::Data<HttpState>,
    permits: web::Data<ApiPermits>,
    query: web::Query<TopicQuery>,
) -> HttpResponse {
    let Some(_permit) = permits.take() else {
        return busy();
    };
    let limit = query.limit.unwrap_or(200).clamp(1, 1000);
    let inputs = match ask(&state, GetListingInputs { conn: ConnId::SERVER, kind: ListingKind::All }).await {
        Ok(inputs) => inputs,
        Err(response) => return response,
    };
    let cache = permits.listings.clone();
    let Ok(sorted) = web::block(move || cache.sorted(&inputs)).await else {
        return HttpResponse::ServiceUnavailable().json(json!({"error": "topic names not built"}));
    };
    let page = search(&sorted, &query.q, query.after.as_deref(), limit + 1);
    let next = (page.len() > limit).then(|| page[limit - 1].clone());
    let page = &page[..page.len().min(limit)];
    match next {
        Some(next) => HttpResponse::Ok().json(json!({"topics": page, "next": next})),
        None => HttpResponse::Ok().json(json!({"topics": page})),
    }
}

/// `GET /api/v1/topics/{topic}/route`: the route as a 5.x client receives it, or 404.
async fn route(state: web::Data<HttpState>, permits: web::Data<ApiPermits>, topic: web::Path<String>) -> HttpResponse {
    let Some(_permit) = permits.take() else {
        return busy();
    };
    let topic = Some(topic.into_inner().into());
    let query = RouteQuery { conn: ConnId::SERVER, topic, style: JsonStyle::Standard, zone: None };
    // A query alone is a batch of one.
    let answers = match ask(&state, RouteBatch { conn: ConnId::SERVER, queries: vec![query] }).await {
        Ok(answers) => answers,
        Err(response) => return response,
    };
    match answers.share().next() {
        Some(RouteAnswer::Found(body)) => HttpResponse::Ok().content_type("application/json").body(body.to_bytes()),
        Some(RouteAnswer::NotFound(_)) => HttpResponse::NotFound().json(json!({"error": "no route for this topic"})),
        Some(RouteAnswer::NotReady) => HttpResponse::ServiceUnavailable().json(json!({"error": "not ready"})),
        None => HttpResponse::InternalServerError().json(json!({"error": "no answer"})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_past_the_bound_is_told_to_come_back() {
        let permits = ApiPermits::default();
        let held: Vec<_> = (0..API_CONCURRENCY).map(|_| permits.take().expect("a permit")).collect();
        assert!(permits.take().is_none(), "no permit left");
        let answer = busy();
        assert_eq!(answer.status(), 503);
        assert_eq!(answer.headers().get("Retry-After").and_then(|v| v.to_str().ok()), Some("1"));
        drop(held);
        assert!(permits.take().is_some(), "permits come back when calls end");
    }
}
