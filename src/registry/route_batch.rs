//! Answering a batch of route queries. The cache lookups run in loops of lookups alone: no
//! atomic operation between them (a found body is not cloned yet), so the processor overlaps
//! their cache misses instead of waiting out each. A loop runs until a query the cache cannot
//! answer (a miss, or a zone query), which goes on to the tables, and the next loop starts after
//! it; found bodies are listed once per run of equal ones.

use bytes::Bytes;

use super::cache::RouteCache;
use super::messages::RouteBatch;
use super::route_answer::{RouteAnswer, RouteAnswers, RouteQuery};
use super::RouteRegistry;
use crate::mailbox::Apply;

impl Apply<RouteRegistry> for RouteBatch {
    fn apply(self, registry: &mut RouteRegistry) -> RouteAnswers {
        let queries = self.queries;
        let mut out = RouteAnswers::with_capacity(queries.len());
        if registry.waiting_for_service() {
            queries.iter().for_each(|_| out.push(RouteAnswer::NotReady));
            return out;
        }
        // Zone queries bypass the cache: neither hits nor misses.
        let (mut at, mut misses, mut zoned) = (0, 0, 0);
        while at < queries.len() {
            let cache = registry.tables.route_cache();
            let hits: Vec<&Bytes> = queries[at..].iter().map_while(|q| q.cached(cache)).collect();
            hits.iter().for_each(|body| out.push_found(body));
            at += hits.len();
            if let Some(query) = queries.get(at) {
                match query.zone {
                    Some(_) => zoned += 1,
                    None => misses += 1,
                }
                out.push(query.uncached(registry));
                at += 1;
            }
        }
        registry.metrics.route_cache_hits.inc_by((queries.len() - misses - zoned) as u64);
        registry.metrics.route_cache_misses.inc_by(misses as u64);
        out
    }
}

impl RouteQuery {
    /// The body the cache holds for a plain query (no zone filter), if any.
    fn cached<'c>(&self, cache: &'c RouteCache) -> Option<&'c Bytes> {
        let topic = self.topic.as_deref()?;
        self.zone.is_none().then(|| cache.find(topic, self.style)).flatten()
    }

    /// The answer from the tables, the cache aside (a plain query's body is cached on the way).
    fn uncached(&self, registry: &mut RouteRegistry) -> RouteAnswer<Bytes> {
        let Some(topic) = self.topic.as_deref() else {
            return RouteAnswer::NotFound(None);
        };
        let body = match &self.zone {
            Some(zone) => registry.tables.zone_route_body(topic, self.style, zone),
            None => registry.tables.route_body(topic, self.style),
        };
        body.map_or_else(|| RouteAnswer::NotFound(self.topic.clone()), RouteAnswer::Found)
    }
}
