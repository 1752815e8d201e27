//! Answering a batch of route queries. Every cache lookup of the batch runs first, in a loop
//! of lookups alone: no atomic operation between them (a found body is not cloned yet), so
//! the processor overlaps their cache misses instead of waiting out each. Found bodies are
//! then listed once per run of equal ones, and only the queries the cache could not answer
//! go on to the tables.

use super::messages::{GetRouteInfo, RouteAnswer, RouteAnswers, RouteBatch};
use super::RouteRegistry;
use crate::mailbox::Apply;

impl Apply<RouteRegistry> for RouteBatch {
    fn apply(self, registry: &mut RouteRegistry) -> RouteAnswers {
        let mut out = RouteAnswers::with_capacity(self.queries.len());
        if registry.waiting_for_service() {
            self.queries.iter().for_each(|_| out.push(RouteAnswer::NotReady));
            return out;
        }
        let mut left = Vec::new();
        let cache = registry.tables.route_cache();
        let found: Vec<_> =
            self.queries.iter().map(|q| q.zone.is_none().then(|| cache.find(&q.topic, q.style)).flatten()).collect();
        for (index, body) in found.into_iter().enumerate() {
            match body {
                Some(body) => out.push_found(body),
                None => {
                    out.push(RouteAnswer::NotReady); // a placeholder, answered below
                    left.push(index);
                }
            }
        }
        let plain_left = left.iter().filter(|&&i| self.queries[i].zone.is_none()).count();
        registry.metrics.route_cache_hits.inc_by((self.queries.len() - left.len()) as u64);
        registry.metrics.route_cache_misses.inc_by(plain_left as u64);
        for index in left {
            let answer = self.queries[index].uncached(registry);
            out.answers[index] = out.batch_answer(answer);
        }
        out
    }
}

impl GetRouteInfo {
    /// The answer from the tables, the cache aside (a plain query's body is cached on the way).
    pub(super) fn uncached(&self, registry: &mut RouteRegistry) -> RouteAnswer {
        let body = match &self.zone {
            Some(zone) => registry.tables.zone_route_body(&self.topic, self.style, zone),
            None => registry.tables.route_body(&self.topic, self.style),
        };
        body.map_or_else(|| RouteAnswer::NotFound(self.topic.to_string()), RouteAnswer::Found)
    }
}
