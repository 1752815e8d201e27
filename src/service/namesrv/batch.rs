//! Route queries leave an I/O thread in batches: the first query of a turn of the thread's
//! event loop schedules a flush, the queries its other connections admit in the same turn join
//! it, and the flush sends them all as one `RouteBatch`. One message and one wake-up of the
//! registry's thread (and one back) then serve many queries; on one thread it saves the
//! envelope and reply channel of each. Each I/O thread of a server owns one batcher (in its
//! share of the service, `session`); nothing here is per-thread or global.
//!
//! Each answer becomes its reply here, on the connection's thread, and goes onto the asking
//! connection's [`Finished`] queue, which the connection drains once per batch: no future,
//! channel or wake-up per query.

use std::cell::RefCell;
use std::rc::Rc;

use actix::MailboxError;

use crate::origin::ConnId;
use crate::registry::messages::RouteBatch;
use crate::registry::route_answer::{RouteAnswer, RouteQuery, SharedBody};
use crate::registry::RegistryHandle;
use crate::service::{Finished, Outstanding, Reply};

/// What the registry answered one route query, or why it could not.
pub type Routed = Result<RouteAnswer<SharedBody>, MailboxError>;

/// Turns a route query's answer into its reply (the dispatcher's `route_reply`).
pub type Replier = Rc<dyn Fn(&Outstanding, Routed) -> Reply>;

/// The route queries of one I/O thread of one server waiting to be sent, with where their
/// replies go.
pub struct RouteBatcher {
    registry: RegistryHandle,
    /// Turns the answers into replies.
    replier: Replier,
    pending: RefCell<Pending>,
}

/// Queries waiting for the flush, and whose each one is (same order).
#[derive(Default)]
struct Pending {
    queries: Vec<RouteQuery>,
    askers: Vec<(Rc<Finished>, Outstanding)>,
}

impl RouteBatcher {
    /// A batcher for the connections of one I/O thread that ask `registry`, replying as
    /// `replier` says; made on that thread (it is not `Send`), its flushes run there.
    pub fn new(registry: RegistryHandle, replier: Replier) -> Rc<RouteBatcher> {
        Rc::new(RouteBatcher { registry, replier, pending: RefCell::default() })
    }

    /// Queues `query` for this turn's batch; its reply goes onto `finished` with `flight`.
    pub fn enqueue(self: &Rc<Self>, query: RouteQuery, flight: Outstanding, finished: &Rc<Finished>) {
        let first = {
            let mut pending = self.pending.borrow_mut();
            pending.queries.push(query);
            pending.askers.push((finished.clone(), flight));
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
                for ((finished, flight), answer) in askers.into_iter().zip(answers.share()) {
                    let reply = (self.replier)(&flight, Ok(answer));
                    finished.push((flight, reply));
                }
            }
            Err(lost) => {
                for (finished, flight) in askers {
                    let reply = (self.replier)(&flight, Err(lost));
                    finished.push((flight, reply));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use std::pin::Pin;

    use futures_core::Stream;

    use super::*;
    use crate::metrics::Metrics;
    use crate::model::{TopicConfig, TopicTable};
    use crate::notifier::{Notifier, NotifyLimits};
    use crate::protocol::body::RegisterBody;
    use crate::protocol::json::JsonStyle;
    use crate::protocol::RemotingCommand;
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
            // Each found route's body as the reply's, anything else an empty one.
            let replier: Replier = Rc::new(|_, answer| match answer {
                Ok(RouteAnswer::Found(body)) => {
                    Reply::Command(RemotingCommand::request(0, None).with_body(body.to_bytes()))
                }
                _ => Reply::Nothing,
            });
            let (batch_a, batch_b) = (RouteBatcher::new(a, replier.clone()), RouteBatcher::new(b, replier));
            let (answered, mut stream) = Finished::new();
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
            let found: Vec<bool> = answers.iter().map(|(_, reply)| matches!(reply, Reply::Command(_))).collect();
            assert_eq!(found, [true, false, false, true], "each batcher answers from its own registry");
            let Reply::Command(route) = &answers[0].1 else { unreachable!() };
            let route = String::from_utf8_lossy(route.body.as_deref().unwrap_or_default());
            assert!(route.contains("a:10911") && !route.contains("b:10911"), "{route}");
        });
    }
}
