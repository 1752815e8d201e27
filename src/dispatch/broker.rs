//! What brokers send: REGISTER_BROKER, UNREGISTER_BROKER, QUERY_DATA_VERSION, BROKER_HEARTBEAT
//! and REGISTER_TOPIC_IN_NAMESRV.

use super::{body_crc32, success, Dispatcher, Outcome, RequestError};
use crate::mailbox::ConnId;
use crate::model::DataVersion;
use crate::protocol::body::{decode_data_version, decode_register_body, decode_register_topic_body, RegisterBody};
use crate::protocol::header::{BrokerHeartbeatHeader, BrokerIdentityHeader, Fields, RegisterBrokerHeader};
use crate::protocol::{ExtFields, RemotingCommand};
use crate::registry::liveness::BrokerRef;
use crate::registry::messages::*;
use crate::registry::register::Registration;

/// Register bodies larger than this may be decoded on the blocking pool (see `decode_body`).
const OFFLOAD_BODY_BYTES: usize = 64 * 1024;

impl Dispatcher {
    pub(super) async fn register_broker(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let h = RegisterBrokerHeader::read(req)?;
        let body = self.decode_body(req, &h).await?;
        let registration = Registration {
            conn,
            cluster: h.cluster_name,
            addr: h.broker_addr,
            broker_name: h.broker_name,
            broker_id: h.broker_id,
            ha_server_addr: h.ha_server_addr,
            zone_name: h.zone_name,
            timeout_ms: h.heartbeat_timeout_millis.map(|ms| ms.max(0) as u64),
            enable_acting_master: h.enable_acting_master,
            topics_fingerprint: body.topics_fingerprint(),
            body,
        };
        let registry = &self.actors.registry;
        let outcome = registry.ask(RegisterBroker { conn, registration }).await?.ok_or(RequestError::RegisterFailed)?;
        let mut ext = ExtFields::new();
        if let Some(master) = outcome.master_addr {
            ext.insert("masterAddr", master);
        }
        if let Some(ha) = outcome.ha_server_addr {
            ext.insert("haServerAddr", ha);
        }
        Ok(RemotingCommand { ext_fields: Some(ext), body: outcome.order_topic_config, ..success() })
    }

    /// Checks and decodes a REGISTER_BROKER body. A full table takes milliseconds: where another
    /// core is free it is decoded on the blocking pool, so route queries on this thread do not
    /// wait behind it; on a single core a second thread only adds time slicing, so it is decoded
    /// in place (measured: no better route p99 during a registration storm either way).
    async fn decode_body(&self, req: &RemotingCommand, h: &RegisterBrokerHeader) -> Result<RegisterBody, RequestError> {
        let (crc, compressed, version, limit) =
            (h.body_crc32, h.compressed, req.version, self.options.max_inflated_body_bytes);
        let raw = req.body.clone().unwrap_or_default();
        let large = raw.len() > OFFLOAD_BODY_BYTES;
        let decode = move || -> Result<RegisterBody, RequestError> {
            if crc != 0 && i64::from(body_crc32(&raw)) != crc {
                return Err(RequestError::CrcMismatch);
            }
            Ok(decode_register_body(Some(&raw), compressed, version, limit)?)
        };
        if large && self.options.decode_large_bodies_off_thread {
            // One large decode per core at a time: more would only queue threads and memory.
            let _permit = self.large_decodes.acquire().await.map_err(|e| RequestError::Internal(e.to_string()))?;
            return tokio::task::spawn_blocking(decode).await.map_err(|e| RequestError::Internal(e.to_string()))?;
        }
        decode()
    }

    pub(super) async fn unregister_broker(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let h = BrokerIdentityHeader::read(req)?;
        let broker = BrokerRef {
            cluster: h.cluster_name,
            addr: h.broker_addr,
            broker_name: h.broker_name,
            broker_id: h.broker_id,
        };
        // A fenced unregister is still a success for the sender: its broker instance is gone.
        let _ = self.actors.registry.ask(UnregisterBroker { conn, broker }).await?;
        Ok(success())
    }

    pub(super) async fn query_data_version(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let h = BrokerIdentityHeader::read(req)?;
        let version: Option<DataVersion> = req.body.as_deref().map(decode_data_version).transpose()?;
        let query = QueryDataVersion { conn, cluster: h.cluster_name, addr: h.broker_addr, version };
        let (changed, stored) = self.actors.registry.ask(query).await?;
        Ok(RemotingCommand {
            ext_fields: Some(ExtFields::new().with("changed", changed.to_string())),
            body: stored.map(|v| v.to_json().into()),
            ..success()
        })
    }

    pub(super) async fn broker_heartbeat(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let h = BrokerHeartbeatHeader::read(req)?;
        self.actors.registry.ask(BrokerHeartbeat { conn, cluster: h.cluster_name, addr: h.broker_addr }).await?;
        Ok(success())
    }

    pub(super) async fn register_topic(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let topic = Fields::of(req).required("topic")?.to_owned();
        let Some(body) = req.body.as_deref() else {
            return Ok(success());
        };
        let queues = decode_register_topic_body(body)?;
        if !queues.is_empty() {
            self.actors.registry.ask(RegisterTopic { conn, topic, queues }).await?;
        }
        Ok(success())
    }
}
