//! The mailbox's depth against a small real actor: counted while queued, given back when
//! handled, and never left counted by a send that failed.

use actix::{Actor, Context};

use super::{Apply, Mailbox};
use crate::metrics::Metrics;
use crate::origin::ConnId;
use crate::{logged_handler, request};

/// An actor that adds up what it is told.
#[derive(Default)]
struct Adder {
    sum: u64,
}

impl Actor for Adder {
    type Context = Context<Self>;
}

logged_handler!(Adder);

#[derive(Debug)]
struct Add {
    conn: ConnId,
    n: u64,
}
request!(Add, u64);

impl Apply<Adder> for Add {
    fn apply(self, adder: &mut Adder) -> u64 {
        adder.sum += self.n;
        adder.sum
    }
}

/// A plain actor whose context stops it once started.
struct Stopped;

impl Actor for Stopped {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        use actix::ActorContext;
        ctx.stop();
    }
}

logged_handler!(Stopped);

impl Apply<Stopped> for Add {
    fn apply(self, _: &mut Stopped) -> u64 {
        self.n
    }
}

#[actix::test]
async fn depth_counts_messages_until_they_are_handled() {
    let adder = Mailbox::new(Adder::default().start(), "adder", Metrics::off());
    // The actor runs on this thread, so nothing is handled before the test awaits.
    adder.tell(Add { conn: ConnId::SERVER, n: 1 });
    adder.tell(Add { conn: ConnId::SERVER, n: 2 });
    assert_eq!(adder.depth(), 2);
    assert_eq!(adder.ask(Add { conn: ConnId::SERVER, n: 3 }).await.unwrap(), 6);
    assert_eq!(adder.depth(), 0);
}

#[actix::test]
async fn a_failed_send_leaves_the_depth_unchanged() {
    let stopped = Mailbox::new(Stopped.start(), "stopped", Metrics::off());
    while stopped.connected() {
        tokio::task::yield_now().await;
    }
    assert!(stopped.ask(Add { conn: ConnId::SERVER, n: 1 }).await.is_err());
    stopped.tell(Add { conn: ConnId::SERVER, n: 1 });
    assert_eq!(stopped.depth(), 0);
}
