//! What brokers send: REGISTER_BROKER, UNREGISTER_BROKER, QUERY_DATA_VERSION, BROKER_HEARTBEAT
//! and REGISTER_TOPIC_IN_NAMESRV.

use tracing::info;

use super::{body_crc32, success, Dispatcher, Outcome, RequestError};
use crate::acl::Caller;
use crate::limits::BrokerNames;
use crate::model::DataVersion;
use crate::origin::{ConnId, Origin};
use crate::protocol::body::register::{decode_register_body, looks_like_json};
use crate::protocol::body::{decode_data_version, decode_register_topic_body, DecodeContext};
use crate::protocol::header::{BrokerHeartbeatHeader, BrokerIdentityHeader, Fields, RegisterBrokerHeader};
use crate::protocol::reply::body::encode_data_version;
use crate::protocol::{ExtFields, RemotingCommand};
use crate::registry::liveness::{BrokerRef, DataVersionAnswer};
use crate::registry::messages::*;
use crate::registry::register::{FingerprintedBody, Registered, Registration};
use crate::registry::topic_limit::RegisterRefused;
use crate::settings::LargeBodyDecode;

/// The metrics reason of a broker refused for being live under another access key.
const BOUND: &str = "bound_elsewhere";

/// Plain register bodies larger than this are decoded on the blocking pool (see `decode_body`).
const OFFLOAD_BODY_BYTES: usize = 64 * 1024;

/// How long an off-thread decode runs before it lets other threads have its core: what a
/// route query can wait behind a registration, and still a quarter or more of a contended
/// core for the decode (measured: 32 brokers re-registering 10k topics a second keep their
/// rate on one core shared with a saturating route load). Pacing stays although decodes are
/// bounded by permits: with `cores - 1` permits and no pacing, the storm's route p99 was
/// 2.0 ms against 1.2 ms paced (p99.9 6.2 ms against 3.6 ms; io_threads 2 on 2 cores, medians
/// of 5 alternating rounds), and no better on one pinned core (5.2 ms against 5.0 ms).
const DECODE_SLICE: std::time::Duration = std::time::Duration::from_micros(500);

impl Dispatcher {
    pub(super) async fn register_broker(&self, origin: Origin, req: &RemotingCommand, caller: &Caller) -> Outcome {
        let h = RegisterBrokerHeader::read(req)?;
        BrokerNames::from(&h).check()?;
        // Every topic of the table is registered under its name as sent, as Java's
        // RouteInfoManager.registerBroker does (no TopicValidator on this path): names are bounded
        // only by the frame, body and topic-count limits.
        let body = self.decode_body(req, &h).await?;
        let registration = registration(h, origin.conn, req.version, body, caller.binding());
        let asked = self.actors.registry.ask(RegisterBroker { conn: origin.conn, registration }).await?;
        let registered = asked.map_err(|refused| match refused {
            RegisterRefused::BoundElsewhere(bound) => {
                self.refused(origin, req, BOUND, &bound);
                RequestError::from(bound)
            }
            too_many => RequestError::from(too_many),
        })?;
        Ok(register_reply(registered))
    }

    /// Checks and decodes a REGISTER_BROKER body.
    /// Compressed bodies (whose size says nothing of what they inflate to) and large plain ones
    /// are decoded on the blocking pool, so no connection's route queries wait behind them.
    async fn decode_body(
        &self,
        req: &RemotingCommand,
        h: &RegisterBrokerHeader,
    ) -> Result<FingerprintedBody, RequestError> {
        let (crc, compressed, version, limits) = (h.body_crc32, h.compressed, req.version, self.options.body_limits);
        let raw = req.body.clone().unwrap_or_default();
        let off_thread = match self.options.body_decode {
            LargeBodyDecode::Auto => compressed || !looks_like_json(&raw) || raw.len() > OFFLOAD_BODY_BYTES,
            LargeBodyDecode::Blocking => !raw.is_empty(),
            LargeBodyDecode::Inline => false,
        };
        let decode = move |context: DecodeContext| -> Result<FingerprintedBody, RequestError> {
            if crc != 0 && i64::from(body_crc32(&raw)) != crc {
                return Err(RequestError::CrcMismatch);
            }
            let body = decode_register_body(Some(&raw), compressed, version, &context)?;
            Ok(FingerprintedBody::new(body))
        };
        if off_thread {
            // One off-thread decode per core at a time: more would only queue threads and memory.
            let _permit = self.large_decodes.acquire().await?;
            return tokio::task::spawn_blocking(move || decode(DecodeContext::paced(limits, DECODE_SLICE))).await?;
        }
        decode(DecodeContext::unpaced(limits))
    }

    pub(super) async fn unregister_broker(&self, origin: Origin, req: &RemotingCommand, caller: &Caller) -> Outcome {
        let conn = origin.conn;
        if req.ext_fields.is_none() {
            // Java queues the unregister of null fields, which removes nothing, and answers SUCCESS.
            return Ok(success());
        }
        let h = BrokerIdentityHeader::read(req)?;
        let broker = BrokerRef {
            cluster: h.cluster_name,
            addr: h.broker_addr,
            broker_name: h.broker_name,
            broker_id: h.broker_id,
        };
        // Java answers SUCCESS whether or not the broker was known.
        let access_key = caller.binding_unless_admin();
        let asked = self.actors.registry.ask(UnregisterBroker { conn, broker, access_key }).await?;
        asked.inspect_err(|bound| self.refused(origin, req, BOUND, bound))?;
        Ok(success())
    }

    /// QUERY_DATA_VERSION. Access control checked the `brokerName` the request names, but the
    /// broker it refreshes and reads is the one live at (`clusterName`, `brokerAddr`): that one
    /// must not be live under another account (admins excepted).
    pub(super) async fn query_data_version(&self, origin: Origin, req: &RemotingCommand, caller: &Caller) -> Outcome {
        let h = BrokerIdentityHeader::read(req)?;
        let version: Option<DataVersion> = req.body.as_deref().map(decode_data_version).transpose()?;
        let access_key = caller.binding_unless_admin();
        let query =
            QueryDataVersion { conn: origin.conn, cluster: h.cluster_name, addr: h.broker_addr, version, access_key };
        let asked = self.actors.registry.ask(query).await?;
        let (changed, stored) = match asked.inspect_err(|bound| self.refused(origin, req, BOUND, bound))? {
            DataVersionAnswer::Same(stored) => (false, Some(stored)),
            DataVersionAnswer::Changed(stored) => (true, Some(stored)),
            DataVersionAnswer::NotLive => (true, None),
        };
        Ok(RemotingCommand {
            ext_fields: Some(ExtFields::new().with("changed", changed.to_string())),
            body: stored.map(|v| encode_data_version(&v).into()),
            ..success()
        })
    }

    /// BROKER_HEARTBEAT, which refreshes the broker live at (`clusterName`, `brokerAddr`), whatever
    /// `brokerName` access control checked: that one must not be live under another account.
    pub(super) async fn broker_heartbeat(&self, origin: Origin, req: &RemotingCommand, caller: &Caller) -> Outcome {
        let h = BrokerHeartbeatHeader::read(req)?;
        let access_key = caller.binding_unless_admin();
        let beat = BrokerHeartbeat { conn: origin.conn, cluster: h.cluster_name, addr: h.broker_addr, access_key };
        let asked = self.actors.registry.ask(beat).await?;
        asked.inspect_err(|bound| self.refused(origin, req, BOUND, bound))?;
        Ok(success())
    }

    pub(super) async fn register_topic(&self, origin: Origin, req: &RemotingCommand, caller: &Caller) -> Outcome {
        let conn = origin.conn;
        if req.ext_fields.is_none() {
            // Java registers the null topic, which stores nothing, and answers SUCCESS.
            return Ok(success());
        }
        // Java's DefaultRequestProcessor.registerTopicToNamesrv takes the topic as sent: no
        // TopicValidator, so `a.b`, `x y` and names past 127 characters are routed.
        let topic = Fields::of(req).required("topic")?.to_owned();
        let Some(body) = req.body.as_deref() else {
            return Ok(success());
        };
        let queues = decode_register_topic_body(body)?;
        // A broker account pushes topics for the brokers it lists only.
        for (broker, _) in &queues {
            caller.may_act_for(broker).inspect_err(|denied| self.refused(origin, req, denied.reason(), denied))?;
        }
        if !queues.is_empty() {
            let brokers = queues.len();
            let put = self.actors.registry.ask(RegisterTopic { conn, topic: topic.clone(), queues }).await??;
            info!(?topic, brokers, put, "topic registered");
        }
        Ok(success())
    }

    /// Logs (rate-limited) and counts a request access control refused after its first check.
    fn refused(&self, origin: Origin, req: &RemotingCommand, reason: &'static str, why: &dyn std::fmt::Display) {
        if let Some(acl) = self.gate.acl() {
            acl.refused(origin.peer, req, reason, why);
        }
    }
}

/// The registration REGISTER_BROKER header `h` and decoded `body` ask for, from connection `conn`
/// in a request of MQVersion `version`, signed by `access_key`.
fn registration(
    h: RegisterBrokerHeader,
    conn: ConnId,
    version: i32,
    body: FingerprintedBody,
    access_key: Option<String>,
) -> Registration {
    Registration {
        conn,
        version,
        cluster: h.cluster_name,
        addr: h.broker_addr,
        broker_name: h.broker_name,
        broker_id: h.broker_id,
        ha_server_addr: h.ha_server_addr,
        zone_name: h.zone_name,
        timeout_ms: h.heartbeat_timeout_millis.map(|ms| ms.max(0) as u64),
        enable_acting_master: h.enable_acting_master,
        body,
        access_key,
    }
}

/// What REGISTER_BROKER answers: the group's master and its HA address in extFields, with the
/// ORDER_TOPIC_CONFIG table as the body; a refusal with extFields too, as Java attaches the
/// response header before deciding.
fn register_reply(registered: Registered) -> RemotingCommand {
    let Registered::Accepted(outcome) = registered else {
        let refused = RequestError::RegisterFailed;
        let response = RemotingCommand::response(refused.code(), Some(refused.to_string()));
        return RemotingCommand { ext_fields: Some(ExtFields::new()), ..response };
    };
    let mut ext = ExtFields::new();
    if let Some(master) = outcome.master_addr {
        ext.insert("masterAddr", master);
    }
    if let Some(ha) = outcome.ha_server_addr {
        ext.insert("haServerAddr", ha);
    }
    RemotingCommand { ext_fields: Some(ext), body: outcome.order_topic_config, ..success() }
}
