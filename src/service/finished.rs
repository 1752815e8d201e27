//! A connection's queue of requests finished elsewhere (the NameServer's route lane answers a
//! batch at a time on the connection's thread): each with its reply, taken by the connection a
//! batch at a time, with no future, channel or wake-up per request.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

use super::{Outstanding, Reply};

/// A finished request and its reply.
pub type Done = (Outstanding, Reply);

/// The finished requests of one connection, until it takes them.
#[derive(Default)]
pub struct Finished {
    ready: RefCell<Vec<Done>>,
    /// The vector the connection gave back after its last batch, to queue the next one in.
    spare: RefCell<Vec<Done>>,
    taker: RefCell<Option<Waker>>,
}

impl Finished {
    /// A queue and the stream its connection takes the finished requests from.
    pub fn new() -> (Rc<Finished>, FinishedStream) {
        let finished = Rc::new(Finished::default());
        (finished.clone(), FinishedStream(finished))
    }

    /// Gives back a batch's vector, emptied, for a later batch (no allocation per batch).
    pub fn recycle(&self, mut batch: Vec<Done>) {
        batch.clear();
        *self.spare.borrow_mut() = batch;
    }

    /// Queues a finished request, waking the connection.
    pub fn push(&self, done: Done) {
        self.ready.borrow_mut().push(done);
        if let Some(taker) = self.taker.borrow_mut().take() {
            taker.wake();
        }
    }
}

/// Yields the requests queued for one connection, everything queued at once (give the vector
/// back with [`Finished::recycle`]); never ends.
pub struct FinishedStream(Rc<Finished>);

impl Stream for FinishedStream {
    type Item = Vec<Done>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<Done>>> {
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
