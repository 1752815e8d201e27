//! Route queries leave an I/O thread in batches: the first query of a turn of the thread's
//! event loop schedules a flush, the queries its other connections decode in the same turn
//! join it, and the flush sends them all as one `RouteBatch`. One message and one wake-up of
//! the registry's thread (and one back) then serve many queries; on one thread it saves the
//! envelope and reply channel of each.

use std::cell::RefCell;
use std::rc::Rc;

use actix::MailboxError;
use tokio::sync::oneshot;

use crate::origin::ConnId;
use crate::registry::messages::{GetRouteInfo, RouteAnswer, RouteBatch};
use crate::registry::RegistryHandle;

thread_local! {
    /// This thread's batchers, one per registry (tests run several servers in one process).
    static BATCHERS: RefCell<Vec<Rc<RouteBatcher>>> = const { RefCell::new(Vec::new()) };
}

/// The route queries of one thread waiting to be sent, with where their answers go.
pub struct RouteBatcher {
    registry: RegistryHandle,
    pending: RefCell<Pending>,
}

/// Queries waiting for the flush, and where each one's answer goes (same order).
#[derive(Default)]
struct Pending {
    queries: Vec<GetRouteInfo>,
    answers: Vec<oneshot::Sender<RouteAnswer>>,
}

impl RouteBatcher {
    /// This thread's batcher for `registry`.
    pub fn for_thread(registry: &RegistryHandle) -> Rc<RouteBatcher> {
        BATCHERS.with(|batchers| {
            let mut batchers = batchers.borrow_mut();
            if let Some(found) = batchers.iter().find(|b| b.registry.is(registry)) {
                return found.clone();
            }
            batchers.retain(|b| b.registry.connected());
            let batcher = Rc::new(RouteBatcher { registry: registry.clone(), pending: RefCell::default() });
            batchers.push(batcher.clone());
            batcher
        })
    }

    /// Queues `query` for this turn's batch and waits for its answer.
    pub async fn ask(self: Rc<Self>, query: GetRouteInfo) -> Result<RouteAnswer, MailboxError> {
        let (answer, answered) = oneshot::channel();
        let first = {
            let mut pending = self.pending.borrow_mut();
            pending.queries.push(query);
            pending.answers.push(answer);
            pending.queries.len() == 1
        };
        if first {
            // Runs after the tasks already woken in this turn, which may add their queries.
            actix::spawn(self.clone().flush());
        }
        answered.await.map_err(|_| MailboxError::Closed)
    }

    async fn flush(self: Rc<Self>) {
        let Pending { queries, answers } = {
            // The next batch starts at this one's size: no vector regrows query by query.
            let mut pending = self.pending.borrow_mut();
            let size = pending.queries.len();
            std::mem::replace(
                &mut *pending,
                Pending { queries: Vec::with_capacity(size), answers: Vec::with_capacity(size) },
            )
        };
        // A lost registry drops the senders: every waiting query then fails as unavailable.
        if let Ok(found) = self.registry.ask(RouteBatch { conn: ConnId::SERVER, queries }).await {
            for (answer, found) in answers.into_iter().zip(found) {
                let _ = answer.send(found);
            }
        }
    }
}
