//! Route queries leave an I/O thread in batches: the first query of a turn of the thread's
//! event loop schedules a flush, the queries its other connections admit in the same turn join
//! it, and the flush sends them all as one `RouteBatch`. One message and one wake-up of the
//! registry's thread (and one back) then serve many queries; on one thread it saves the
//! envelope and reply channel of each. Each I/O thread of a server owns one batcher and hands
//! it to the connections it starts (see `io_pool`); nothing here is per-thread or global.
//!
//! Answers go onto each asking connection's [`Answered`] queue, which the connection drains
//! once per batch: no future, channel or wake-up per query.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use actix::MailboxError;
use futures_core::Stream;

use super::route::Outstanding;
use crate::origin::ConnId;
use crate::registry::messages::RouteBatch;
use crate::registry::route_answer::{RouteAnswer, RouteQuery, SharedBody};
use crate::registry::RegistryHandle;

/// What the registry answered one route query, or why it could not.
pub type Routed = Result<RouteAnswer<SharedBody>, MailboxError>;

/// A route query's in-flight record with its answer.
pub type Answer = (Outstanding, Routed);

/// The route queries of one I/O thread of one server waiting to be sent, with where their
/// answers go.
pub struct RouteBatcher {
    registry: RegistryHandle,
    pending: RefCell<Pending>,
}

/// Queries waiting for the flush, and whose each one is (same order).
#[derive(Default)]
struct Pending {
    queries: Vec<RouteQuery>,
    askers: Vec<(Rc<Answered>, Outstanding)>,
}

/// The answered route queries of one connection, until it takes them.
#[derive(Default)]
pub struct Answered {
    ready: RefCell<Vec<Answer>>,
    /// The vector the connection gave back after its last batch, to queue the next one in.
    spare: RefCell<Vec<Answer>>,
    taker: RefCell<Option<Waker>>,
}

impl Answered {
    /// A queue and the stream its connection takes the answers from, a batch at a time.
    pub fn new() -> (Rc<Answered>, AnsweredStream) {
        let answered = Rc::new(Answered::default());
        (answered.clone(), AnsweredStream(answered))
    }

    /// Gives back a batch's vector, emptied, for a later batch (no allocation per batch).
    pub fn recycle(&self, mut batch: Vec<Answer>) {
        batch.clear();
        *self.spare.borrow_mut() = batch;
    }

    fn push(&self, answer: Answer) {
        self.ready.borrow_mut().push(answer);
        if let Some(taker) = self.taker.borrow_mut().take() {
            taker.wake();
        }
    }
}

/// Yields the answers queued for one connection, everything queued at once (give the vector
/// back with [`Answered::recycle`]); never ends.
pub struct AnsweredStream(Rc<Answered>);

impl Stream for AnsweredStream {
    type Item = Vec<Answer>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<Answer>>> {
        let mut ready = self.0.ready.borrow_mut();
        if ready.is_empty() {
            let mut taker = self.0.taker.borrow_mut();
            if !taker.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
                *taker = Some(cx.waker().clone());
            }
            return Poll::Pending;
        }
        let spare = std::mem::take(&mut *self.0.spare.borrow_mut());
        Poll::Ready(Some(std::mem::replace(&mut *ready, spare)))
    }
}

impl RouteBatcher {
    /// A batcher for the connections of one I/O thread that ask `registry`; made on that
    /// thread (it is not `Send`), its flushes run there.
    pub fn new(registry: RegistryHandle) -> Rc<RouteBatcher> {
        Rc::new(RouteBatcher { registry, pending: RefCell::default() })
    }

    /// Queues `query` for this turn's batch; its answer goes onto `answered` with `flight`.
    pub fn enqueue(self: &Rc<Self>, query: RouteQuery, flight: Outstanding, answered: &Rc<Answered>) {
        let first = {
            let mut pending = self.pending.borrow_mut();
            pending.queries.push(query);
            pending.askers.push((answered.clone(), flight));
            pending.queries.len() == 1
        };
        if first {
            // Runs after the tasks already woken in this turn, which may add their queries.
            actix::spawn(self.clone().flush());
        }
    }

    async fn flush(self: Rc<Self>) {
        let Pending { queries, askers } = {
            // The next batch starts at this one's size: no vector regrows query by query.
            let mut pending = self.pending.borrow_mut();
            let size = pending.queries.len();
            std::mem::replace(
                &mut *pending,
                Pending { queries: Vec::with_capacity(size), askers: Vec::with_capacity(size) },
            )
        };
        match self.registry.ask(RouteBatch { conn: ConnId::SERVER, queries }).await {
            Ok(answers) => {
                for ((answered, flight), answer) in askers.into_iter().zip(answers.share()) {
                    answered.push((flight, Ok(answer)));
                }
            }
            Err(lost) => {
                for (answered, flight) in askers {
                    answered.push((flight, Err(lost)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::Metrics;
    use crate::model::{TopicConfig, TopicTable};
    use crate::notifier::{Notifier, NotifyLimits};
    use crate::protocol::body::RegisterBody;
    use crate::protocol::json::JsonStyle;
    use crate::registry::messages::RegisterBroker;
    use crate::registry::options::RegistryOptions;
    use crate::registry::register::{FingerprintedBody, Registered, Registration};
    use crate::registry::RouteRegistry;

    /// A registry of its own on this thread, with broker `name` serving `topic` (and one more:
    /// a first registration of a single topic is refused, as Java does).
    async fn registry_with(name: &str, topic: &str) -> RegistryHandle {
        let notifier = Notifier::start(479, NotifyLimits { max_in_flight: 8, max_per_second: 100 }, Metrics::off());
        let registry =
            RouteRegistry::start(RegistryOptions::default(), Duration::from_secs(60), notifier, Metrics::off());
        let mut topics = TopicTable::with_capacity(2);
        for topic in [topic.to_owned(), format!("{name}-own")] {
            topics.push(&topic, &TopicConfig { topic_name: Some(topic.clone()), ..TopicConfig::default() });
        }
        let body = RegisterBody { topics, ..RegisterBody::default() };
        let registration = Registration {
            conn: ConnId(1),
            version: 479,
            cluster: "c".into(),
            addr: format!("{name}:10911"),
            broker_name: name.into(),
            broker_id: 0,
            ha_server_addr: String::new(),
            zone_name: None,
            timeout_ms: None,
            enable_acting_master: None,
            body: FingerprintedBody::new(body),
            access_key: None,
        };
        let registered = registry.ask(RegisterBroker { conn: ConnId(1), registration }).await.unwrap();
        assert!(matches!(registered, Ok(Registered::Accepted(_))), "{name} registered");
        registry
    }

    fn query(topic: &str) -> RouteQuery {
        RouteQuery { conn: ConnId(9), topic: Some(topic.into()), style: JsonStyle::Standard, zone: None }
    }

    fn flight(opaque: i32) -> Outstanding {
        let header = crate::protocol::SerializeType::Json;
        let begin = std::time::Instant::now();
        Outstanding {
            code: super::super::route::ROUTE,
            opaque,
            header,
            oneway: false,
            begin,
            depth_met: 0,
            topic: None,
        }
    }

    /// Two servers' batchers on one thread (as two servers in one process with one I/O thread
    /// each have) batch in the same turn and each asks its own registry.
    #[test]
    fn batchers_of_two_registries_on_one_thread_each_ask_their_own() {
        actix::System::new().block_on(async {
            let (a, b) = (registry_with("a", "TopicA").await, registry_with("b", "TopicB").await);
            let (batch_a, batch_b) = (RouteBatcher::new(a), RouteBatcher::new(b));
            let (answered, mut stream) = Answered::new();
            batch_a.enqueue(query("TopicA"), flight(1), &answered);
            batch_b.enqueue(query("TopicA"), flight(2), &answered);
            batch_a.enqueue(query("TopicB"), flight(3), &answered);
            batch_b.enqueue(query("TopicB"), flight(4), &answered);
            let mut answers = Vec::new();
            while answers.len() < 4 {
                let batch = std::future::poll_fn(|cx| Pin::new(&mut stream).poll_next(cx)).await;
                answers.extend(batch.expect("the answers never end"));
            }
            answers.sort_by_key(|(flight, _)| flight.opaque);
            let found: Vec<bool> = answers.iter().map(|(_, a)| matches!(a, Ok(RouteAnswer::Found(_)))).collect();
            assert_eq!(found, [true, false, false, true], "each batcher answers from its own registry");
            let Ok(RouteAnswer::Found(route)) = &answers[0].1 else { unreachable!() };
            let route = String::from_utf8_lossy(route.bytes());
            assert!(route.contains("a:10911") && !route.contains("b:10911"), "{route}");
        });
    }
}
