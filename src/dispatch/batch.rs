//! Route queries leave an I/O thread in batches: the first query of a turn of the thread's
//! event loop schedules a flush, the queries its other connections decode in the same turn
//! join it, and the flush sends them all as one `RouteBatch`. One message and one wake-up of
//! the registry's thread (and one back) then serve many queries; on one thread it saves the
//! envelope and reply channel of each. Each I/O thread of a server owns one batcher and hands
//! it to the connections it starts (see `io_pool`); nothing here is per-thread or global.
//!
//! An answer goes back one of two ways: to a request future awaiting it (`ask`, the
//! dispatcher's path), or, for the plain route queries a connection sends down its route lane
//! (`enqueue`), onto that connection's [`Answered`] queue, which the connection drains once per
//! batch: no future, channel or wake-up per query.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use actix::MailboxError;
use bytes::Bytes;
use futures_core::Stream;
use tokio::sync::oneshot;

use crate::origin::ConnId;
use crate::protocol::SerializeType;
use crate::registry::messages::{BatchAnswer, GetRouteInfo, RouteAnswer, RouteAnswers, RouteBatch};
use crate::registry::RegistryHandle;

/// The route queries of one I/O thread of one server waiting to be sent, with where their
/// answers go.
pub struct RouteBatcher {
    registry: RegistryHandle,
    pending: RefCell<Pending>,
}

/// Queries waiting for the flush, and where each one's answer goes (same order).
#[derive(Default)]
struct Pending {
    queries: Vec<GetRouteInfo>,
    waiters: Vec<Waiter>,
}

/// Where one query's answer goes.
enum Waiter {
    /// A request future awaiting it.
    Future(oneshot::Sender<RouteAnswer>),
    /// A connection's queue of answered lane queries.
    Lane(Rc<Answered>, RouteTicket),
}

/// What a connection keeps of a route query it sent down its lane, to answer it.
#[derive(Debug)]
pub struct RouteTicket {
    /// The request's opaque.
    pub opaque: i32,
    /// The request's header serialization.
    pub serialize_type: SerializeType,
    /// When its frame was read.
    pub begin: Instant,
    /// The registry's mailbox depth then (for the slow-request line).
    pub depth_met: usize,
    /// The topic, kept only while debug lines are on.
    pub topic: Option<String>,
}

/// A lane query's ticket with its answer.
pub type LaneAnswer = (RouteTicket, LaneReply);

/// A found route's body, shared by the answers of its batch: held through an `Rc` to the
/// batch's bodies (counted without atomics on this thread).
#[derive(Debug, Clone)]
pub struct SharedBody {
    bodies: Rc<Vec<Bytes>>,
    index: usize,
}

impl SharedBody {
    /// Body `index` of `bodies`.
    pub fn new(bodies: Rc<Vec<Bytes>>, index: usize) -> Option<Self> {
        (index < bodies.len()).then_some(SharedBody { bodies, index })
    }

    /// The body's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bodies[self.index]
    }
}

/// What a lane query's connection gets back.
#[derive(Debug)]
pub enum LaneReply {
    /// Found: its body.
    Found(SharedBody),
    /// Anything else, or why there is no answer (the registry is gone).
    Other(Result<RouteAnswer, MailboxError>),
}

impl LaneReply {
    /// The reply for `found`, one of the answers to the batch with `bodies` (an index past
    /// them, which the registry never gives, counts as no answer).
    fn of(found: BatchAnswer, bodies: &Rc<Vec<Bytes>>) -> LaneReply {
        match found {
            BatchAnswer::Found(index) => SharedBody::new(bodies.clone(), index)
                .map_or(LaneReply::Other(Err(MailboxError::Closed)), LaneReply::Found),
            BatchAnswer::Other(other) => LaneReply::Other(Ok(other)),
        }
    }

    /// The body found, if any.
    pub fn body(&self) -> Option<&SharedBody> {
        match self {
            LaneReply::Found(body) => Some(body),
            LaneReply::Other(_) => None,
        }
    }

    /// The answer on its own, as the general reply path takes it.
    pub fn into_answer(self) -> Result<RouteAnswer, MailboxError> {
        match self {
            LaneReply::Found(SharedBody { bodies, index }) => Ok(BatchAnswer::Found(index).resolve(&bodies)),
            LaneReply::Other(answer) => answer,
        }
    }
}

/// The answered lane queries of one connection, until it takes them.
#[derive(Default)]
pub struct Answered {
    ready: RefCell<Vec<LaneAnswer>>,
    /// The vector the connection gave back after its last batch, to queue the next one in.
    spare: RefCell<Vec<LaneAnswer>>,
    taker: RefCell<Option<Waker>>,
}

impl Answered {
    /// A queue and the stream its connection takes the answers from, a batch at a time.
    pub fn new() -> (Rc<Answered>, AnsweredStream) {
        let answered = Rc::new(Answered::default());
        (answered.clone(), AnsweredStream(answered))
    }

    /// Gives back a batch's vector, emptied, for a later batch (no allocation per batch).
    pub fn recycle(&self, mut batch: Vec<LaneAnswer>) {
        batch.clear();
        *self.spare.borrow_mut() = batch;
    }

    fn push(&self, answer: LaneAnswer) {
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
    type Item = Vec<LaneAnswer>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<LaneAnswer>>> {
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

    /// Queues `query` for this turn's batch and waits for its answer.
    pub async fn ask(self: Rc<Self>, query: GetRouteInfo) -> Result<RouteAnswer, MailboxError> {
        let (answer, answered) = oneshot::channel();
        self.queue(query, Waiter::Future(answer));
        answered.await.map_err(|_| MailboxError::Closed)
    }

    /// Queues a lane query for this turn's batch; its answer goes onto `answered` with `ticket`.
    pub fn enqueue(self: &Rc<Self>, query: GetRouteInfo, ticket: RouteTicket, answered: &Rc<Answered>) {
        self.queue(query, Waiter::Lane(answered.clone(), ticket));
    }

    fn queue(self: &Rc<Self>, query: GetRouteInfo, waiter: Waiter) {
        let first = {
            let mut pending = self.pending.borrow_mut();
            pending.queries.push(query);
            pending.waiters.push(waiter);
            pending.queries.len() == 1
        };
        if first {
            // Runs after the tasks already woken in this turn, which may add their queries.
            actix::spawn(self.clone().flush());
        }
    }

    async fn flush(self: Rc<Self>) {
        let Pending { queries, waiters } = {
            // The next batch starts at this one's size: no vector regrows query by query.
            let mut pending = self.pending.borrow_mut();
            let size = pending.queries.len();
            std::mem::replace(
                &mut *pending,
                Pending { queries: Vec::with_capacity(size), waiters: Vec::with_capacity(size) },
            )
        };
        match self.registry.ask(RouteBatch { conn: ConnId::SERVER, queries }).await {
            Ok(RouteAnswers { bodies, answers }) => {
                let bodies = Rc::new(bodies);
                for (waiter, found) in waiters.into_iter().zip(answers) {
                    match waiter {
                        Waiter::Future(answer) => drop(answer.send(found.resolve(&bodies))),
                        Waiter::Lane(answered, ticket) => answered.push((ticket, LaneReply::of(found, &bodies))),
                    }
                }
            }
            // A lost registry: request futures fail as unavailable when their senders drop,
            // lane queries are told.
            Err(lost) => {
                for waiter in waiters {
                    if let Waiter::Lane(answered, ticket) = waiter {
                        answered.push((ticket, LaneReply::Other(Err(lost))));
                    }
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
    use crate::registry::register::{Registered, Registration};
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
            topics_fingerprint: body.topics_fingerprint(),
            body,
            access_key: None,
        };
        let registered = registry.ask(RegisterBroker { conn: ConnId(1), registration }).await.unwrap();
        assert!(matches!(registered, Ok(Registered::Accepted(_))), "{name} registered");
        registry
    }

    fn query(topic: &str) -> GetRouteInfo {
        GetRouteInfo { conn: ConnId(9), topic: topic.into(), style: JsonStyle::Standard, zone: None }
    }

    /// Two servers' batchers on one thread (as two servers in one process with one I/O thread
    /// each have) batch in the same turn and each asks its own registry.
    #[test]
    fn batchers_of_two_registries_on_one_thread_each_ask_their_own() {
        actix::System::new().block_on(async {
            let (a, b) = (registry_with("a", "TopicA").await, registry_with("b", "TopicB").await);
            let (batch_a, batch_b) = (RouteBatcher::new(a), RouteBatcher::new(b));
            let (a_a, b_a, a_b, b_b) = tokio::join!(
                batch_a.clone().ask(query("TopicA")),
                batch_b.clone().ask(query("TopicA")),
                batch_a.clone().ask(query("TopicB")),
                batch_b.clone().ask(query("TopicB")),
            );
            let answers = [a_a, b_a, a_b, b_b];
            let found: Vec<bool> = answers.iter().map(|a| matches!(a, Ok(RouteAnswer::Found(_)))).collect();
            assert_eq!(found, [true, false, false, true], "each batcher answers from its own registry");
            let RouteAnswer::Found(route) = answers[0].as_ref().unwrap() else { unreachable!() };
            let route = String::from_utf8_lossy(route);
            assert!(route.contains("a:10911") && !route.contains("b:10911"), "{route}");
        });
    }
}
