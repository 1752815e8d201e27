//! The `Notifier` actor: the NameServer's only outbound request, NOTIFY_MIN_BROKER_ID_CHANGE
//! (905, oneway, spec §5.12), sent over short-lived connections to broker addresses. Sending
//! happens in spawned tasks with a 300 ms budget, so nothing ever waits on a broker.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use bytes::BytesMut;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tracing::{debug, info};

use crate::mailbox::{Apply, ConnId, Mailbox};
use crate::protocol::codec::encode_frame;
use crate::protocol::command::FLAG_ONEWAY;
use crate::protocol::{ExtFields, RemotingCommand, RequestCode};
use crate::registry::tables::MinBrokerIdChange;
use crate::{logged_handler, request};

/// Java's send timeout for this notification.
const SEND_TIMEOUT: Duration = Duration::from_millis(300);

/// The outbound notification actor.
pub struct Notifier {
    queued: Arc<AtomicUsize>,
    next_opaque: i32,
    version: i32,
}

/// The notifier's address, counting queued messages.
pub type NotifierHandle = Mailbox<Notifier>;

impl Notifier {
    /// Starts the notifier on the current arbiter; `version` is stamped on its requests.
    pub fn start(version: i32) -> NotifierHandle {
        let queued = Arc::new(AtomicUsize::new(0));
        let notifier = Notifier { queued: queued.clone(), next_opaque: 0, version };
        Mailbox::new(Actor::start(notifier), queued)
    }
}

impl Actor for Notifier {
    type Context = Context<Self>;
}

logged_handler!(Notifier, "notifier");

/// Send one NOTIFY_MIN_BROKER_ID_CHANGE to each of its targets.
#[derive(Debug)]
pub struct SendMinBrokerIdChange {
    pub conn: ConnId,
    pub change: MinBrokerIdChange,
}
request!(SendMinBrokerIdChange, ());

impl Apply<Notifier> for SendMinBrokerIdChange {
    fn apply(self, notifier: &mut Notifier) {
        let c = self.change;
        let mut ext = ExtFields::new()
            .with("minBrokerId", c.min_broker_id.to_string())
            .with("minBrokerAddr", c.min_broker_addr.clone());
        if let Some(offline) = &c.offline_broker_addr {
            ext.insert("offlineBrokerAddr", offline);
        }
        if let Some(ha) = &c.ha_broker_addr {
            ext.insert("haBrokerAddr", ha);
        }
        info!(min_broker_id = c.min_broker_id, min_broker_addr = %c.min_broker_addr, targets = ?c.targets, "notifying min broker id change");
        for target in c.targets {
            notifier.next_opaque = notifier.next_opaque.wrapping_add(1);
            let mut request = RemotingCommand::request(RequestCode::NotifyMinBrokerIdChange as i32, Some(ext.clone()));
            request.opaque = notifier.next_opaque;
            request.flag = FLAG_ONEWAY;
            request.version = notifier.version;
            let mut frame = BytesMut::new();
            if encode_frame(&request, &mut frame).is_err() {
                continue;
            }
            actix::spawn(async move {
                let send = async {
                    let mut stream = TcpStream::connect(&target).await?;
                    stream.write_all(&frame).await?;
                    stream.shutdown().await
                };
                match tokio::time::timeout(SEND_TIMEOUT, send).await {
                    Ok(Ok(())) => debug!(target = %target, "min broker id change sent"),
                    Ok(Err(error)) => info!(target = %target, %error, "min broker id change not delivered"),
                    Err(_) => info!(target = %target, "min broker id change not delivered: timed out"),
                }
            });
        }
    }
}
