//! What route queries ask and what they find: one [`RouteQuery`] per GET_ROUTEINFO_BY_TOPIC,
//! answered in [`RouteAnswers`] whether it came alone or in a batch (a query alone is a batch
//! of one). Found bodies are listed apart and answers in a row that found the same body share
//! its entry, so a batch of topics with equal routes moves one shared body, not one per query;
//! an answer's body number always names a listed body (the list is only built here).

use std::rc::Rc;

use bytes::Bytes;
use compact_str::CompactString;

use crate::origin::ConnId;
use crate::protocol::json::JsonStyle;

/// One GET_ROUTEINFO_BY_TOPIC, optionally filtered to a zone.
#[derive(Debug)]
pub struct RouteQuery {
    /// The connection it came over.
    pub conn: ConnId,
    /// The topic asked for; `None` for a request without any extFields (Java then looks up a
    /// null topic: never found). Held inline up to 24 bytes: most topics cost no allocation.
    pub topic: Option<CompactString>,
    /// The JSON style the client reads route bodies in.
    pub style: JsonStyle,
    /// The zone filter (`__ZONE_MODE` with `__ZONE_NAME`).
    pub zone: Option<String>,
}

/// What one route query found; `B` is how a found body is held (its number in the batch's
/// list, or the body itself once shared out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteAnswer<B> {
    /// The encoded TopicRouteData.
    Found(B),
    /// No queues, or no known broker for them; the topic asked for (for the reply's remark).
    NotFound(Option<CompactString>),
    /// The readiness gate (`need_wait_for_service`) is still closed.
    NotReady,
}

/// The answers to a batch of route queries, in its order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RouteAnswers {
    /// The bodies found, each run of equal ones once.
    pub(super) bodies: Vec<Bytes>,
    /// One answer per query, found ones by their body's number in `bodies`.
    pub(super) answers: Vec<RouteAnswer<usize>>,
}

impl RouteAnswers {
    /// Room for `queries` answers.
    pub fn with_capacity(queries: usize) -> Self {
        Self { bodies: Vec::new(), answers: Vec::with_capacity(queries) }
    }

    /// Answers the next query with `body`, listed anew unless the last body listed is it.
    pub fn push_found(&mut self, body: &Bytes) {
        let same = self.bodies.last().is_some_and(|last| last.as_ptr() == body.as_ptr() && last.len() == body.len());
        if !same {
            self.bodies.push(body.clone());
        }
        self.answers.push(RouteAnswer::Found(self.bodies.len() - 1));
    }

    /// Answers the next query with `answer`.
    pub fn push(&mut self, answer: RouteAnswer<Bytes>) {
        match answer {
            RouteAnswer::Found(body) => self.push_found(&body),
            RouteAnswer::NotFound(topic) => self.answers.push(RouteAnswer::NotFound(topic)),
            RouteAnswer::NotReady => self.answers.push(RouteAnswer::NotReady),
        }
    }

    /// How many queries are answered.
    pub fn len(&self) -> usize {
        self.answers.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// The answers in order, found bodies shared with the others of the batch (counted without
    /// atomics on the thread that takes them).
    pub fn share(self) -> impl Iterator<Item = RouteAnswer<SharedBody>> {
        let bodies = Rc::new(self.bodies);
        self.answers.into_iter().map(move |answer| match answer {
            RouteAnswer::Found(index) => RouteAnswer::Found(SharedBody { bodies: bodies.clone(), index }),
            RouteAnswer::NotFound(topic) => RouteAnswer::NotFound(topic),
            RouteAnswer::NotReady => RouteAnswer::NotReady,
        })
    }
}

/// A found route's body, shared by the answers of its batch.
#[derive(Debug, Clone)]
pub struct SharedBody {
    bodies: Rc<Vec<Bytes>>,
    /// Always an index of `bodies`: only [`RouteAnswers::share`] makes one.
    index: usize,
}

impl SharedBody {
    /// The body's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bodies[self.index]
    }

    /// The body as shared bytes.
    pub fn to_bytes(&self) -> Bytes {
        self.bodies[self.index].clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_equal_bodies_is_listed_once_and_each_answer_resolves_to_its_own() {
        let (a, b) = (Bytes::from_static(b"a"), Bytes::from_static(b"b"));
        let mut answers = RouteAnswers::with_capacity(5);
        answers.push_found(&a);
        answers.push(RouteAnswer::Found(a.clone()));
        answers.push(RouteAnswer::NotFound(Some("T".into())));
        answers.push_found(&b);
        answers.push(RouteAnswer::NotReady);
        assert_eq!((answers.bodies.len(), answers.len()), (2, 5));
        let shared: Vec<_> = answers
            .share()
            .map(|answer| match answer {
                RouteAnswer::Found(body) => format!("found {}", String::from_utf8_lossy(body.bytes())),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(shared, ["found a", "found a", "NotFound(Some(\"T\"))", "found b", "NotReady"]);
    }
}
