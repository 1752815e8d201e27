//! One thin `Apply` per registry message: a call into the tables, plus lifecycle logs.

use tracing::{debug, info, warn};

use super::messages::*;
use super::register::Registered;
use super::RouteRegistry;
use crate::mailbox::Apply;
use crate::metrics::registry_figures::ScrapeFigures;
use crate::metrics::Removal;
use crate::protocol::reply::body::{encode_member_group, encode_topic_list};

impl Apply<RouteRegistry> for RegisterBroker {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let now = registry.now_ms();
        let reg = self.registration;
        let key = reg.access_key.as_deref();
        let bound = registry.tables.bound_elsewhere(&reg.broker_name, &reg.addr, key);
        if let Some(bound) = bound.or_else(|| registry.tables.held_by_another_connection(&reg.addr, key, reg.conn, now))
        {
            debug!(broker = %reg.broker_name, addr = %reg.addr, "registration refused: {bound}");
            return Err(bound.into());
        }
        if let Err(refused) = registry.tables.check_topic_room(&reg) {
            debug!(broker = %reg.broker_name, addr = %reg.addr, "registration refused: {refused}");
            return Err(refused);
        }
        let (name, addr, cluster, id, topics) =
            (reg.broker_name.clone(), reg.addr.clone(), reg.cluster.clone(), reg.broker_id, reg.body.topics.len());
        let mut outcome = registry.tables.register_broker(reg, now);
        registry.metrics.registration(matches!(outcome, Registered::Accepted(_)));
        match &mut outcome {
            Registered::Accepted(o) => {
                if let Some(old) = &o.replaced {
                    registry.count_removed(Removal::Unregistered, 1);
                    let b = &old.broker;
                    info!(
                        broker = %b.broker_name, cluster = %b.cluster, by = %name, by_cluster = %cluster, addr = %addr,
                        "address reused: {} replaced by {} at {}", b.broker_name, name, addr
                    );
                }
                if o.newly_live {
                    info!(broker = %name, addr = %addr, cluster = %cluster, id, topics, "broker registered");
                } else {
                    debug!(broker = %name, addr = %addr, id, topics, "broker re-registered");
                }
                if registry.tables.options().routing.return_order_topic_config_to_broker {
                    o.order_topic_config = registry.tables.order_kv_body().cloned();
                }
            }
            Registered::FirstWithSingleTopic => {
                info!(broker = %name, addr = %addr, id, topics, "registration rejected: first one with a single topic")
            }
        }
        Ok(outcome)
    }
}

impl Apply<RouteRegistry> for UnregisterBroker {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let (b, key) = (&self.broker, self.access_key.as_deref());
        let bound = registry.tables.bound_elsewhere(&b.broker_name, &b.addr, key);
        if let Some(bound) = bound.or_else(|| registry.tables.live_bound_elsewhere(&b.addr, key, self.conn)) {
            debug!(broker = %b.broker_name, addr = %b.addr, "unregistration refused: {bound}");
            return Err(bound);
        }
        let known = registry.tables.unregister_broker(b);
        if known {
            registry.count_removed(Removal::Unregistered, 1);
            registry.log_removed("unregister request", std::slice::from_ref(b));
        }
        Ok(known)
    }
}

impl Apply<RouteRegistry> for AttachConnection {
    fn apply(self, registry: &mut RouteRegistry) {
        registry.connections.insert(self.conn, self.closer);
    }
}

impl Apply<RouteRegistry> for GetClusterInfo {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        registry.tables.cluster_info_body()
    }
}

impl Apply<RouteRegistry> for QueryDataVersion {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        if let Some(bound) = registry.tables.live_bound_elsewhere(&self.addr, self.access_key.as_deref(), self.conn) {
            return Err(bound);
        }
        let now = registry.now_ms();
        Ok(registry.tables.query_data_version(&self.cluster, &self.addr, self.version.as_ref(), now))
    }
}

impl Apply<RouteRegistry> for BrokerHeartbeat {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        if let Some(bound) = registry.tables.live_bound_elsewhere(&self.addr, self.access_key.as_deref(), self.conn) {
            return Err(bound);
        }
        let now = registry.now_ms();
        Ok(registry.tables.heartbeat(&self.cluster, &self.addr, now))
    }
}

impl Apply<RouteRegistry> for ConnectionClosed {
    fn apply(self, registry: &mut RouteRegistry) {
        registry.connections.remove(&self.conn);
        registry.remove_closed(self.conn);
    }
}

impl Apply<RouteRegistry> for WipeWritePerm {
    fn apply(self, registry: &mut RouteRegistry) -> usize {
        registry.tables.wipe_write_perm(&self.broker)
    }
}

impl Apply<RouteRegistry> for AddWritePerm {
    fn apply(self, registry: &mut RouteRegistry) -> usize {
        registry.tables.add_write_perm(&self.broker)
    }
}

impl Apply<RouteRegistry> for DeleteTopic {
    fn apply(self, registry: &mut RouteRegistry) {
        registry.tables.delete_topic(&self.topic, self.cluster.as_deref());
    }
}

impl Apply<RouteRegistry> for RegisterTopic {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        registry.tables.check_new_topic(&self.topic, self.queues.iter().map(|(broker, _)| broker.as_str()))?;
        Ok(registry.tables.register_topic(&self.topic, &self.queues))
    }
}

impl Apply<RouteRegistry> for GetListingInputs {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        registry.tables.listing_inputs(&self.kind)
    }
}

impl Apply<RouteRegistry> for GetSystemTopics {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let (topics, addr) = registry.tables.system_topics();
        encode_topic_list(topics.iter().map(String::as_str), addr.as_deref()).into()
    }
}

impl Apply<RouteRegistry> for GetBrokerMemberGroup {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let addrs = registry.tables.member_addrs(&self.broker);
        encode_member_group(&self.cluster, &self.broker, &addrs).into()
    }
}

impl Apply<RouteRegistry> for SetOrderTopicConfig {
    fn apply(self, registry: &mut RouteRegistry) {
        registry.tables.set_order_topics(self.table);
    }
}

impl Apply<RouteRegistry> for ApplyOptions {
    fn apply(self, registry: &mut RouteRegistry) {
        info!(options = ?self.options, "runtime options applied");
        registry.tables.set_options(self.options);
    }
}

impl Apply<RouteRegistry> for GetFigures {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        registry.tables.figures()
    }
}

impl Apply<RouteRegistry> for GetScrapeFigures {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let tables = &registry.tables;
        ScrapeFigures { totals: tables.figures(), clusters: tables.cluster_figures() }
    }
}

impl Apply<RouteRegistry> for ListBrokers {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let now = registry.now_ms();
        let tables = &registry.tables;
        let mut brokers: Vec<BrokerStatus> = tables
            .live_entries()
            .map(|(addr, l)| BrokerStatus {
                cluster: l.cluster.clone(),
                broker_name: l.broker_name.clone(),
                broker_id: l.broker_id,
                addr: addr.to_owned(),
                version: l.version,
                data_version: l.data_version.counter,
                silent_ms: l.silent_ms(now),
                timeout_ms: l.timeout_ms,
                expires_in_ms: l.expires_in_ms(now),
                provisional: l.is_provisional(),
                snapshot_age_ms: l.snapshot_age_ms(now),
                topics: tables.topic_count_of(&l.broker_name),
                conn: l.conn.0,
            })
            .collect();
        brokers
            .sort_by(|a, b| (&a.cluster, &a.broker_name, a.broker_id).cmp(&(&b.cluster, &b.broker_name, b.broker_id)));
        brokers
    }
}

impl Apply<RouteRegistry> for LoadSnapshot {
    fn apply(self, registry: &mut RouteRegistry) -> usize {
        let now = registry.now_ms();
        let report = self.snapshot.map(|s| registry.tables.load_snapshot(&s, self.age_ms, now)).unwrap_or_default();
        for skipped in &report.skipped {
            let (broker, addr) = (&skipped.broker, &skipped.addr);
            warn!(%broker, %addr, "route snapshot member not loaded: {}", skipped.why);
        }
        let loaded = report.provisional;
        if loaded > 0 {
            // Routes are served at once: the wait for brokers to register is what the snapshot saves.
            registry.readiness.open();
        }
        registry.snapshots.start(self.sink, registry.tables.changes());
        loaded
    }
}

impl Apply<RouteRegistry> for FinalSnapshot {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let now = registry.now_ms();
        registry.snapshots.finish().then(|| registry.tables.snapshot(super::snapshot_pace::wall_ms(), now))
    }
}

impl Apply<RouteRegistry> for GetReadiness {
    fn apply(self, registry: &mut RouteRegistry) -> Option<std::time::Duration> {
        registry.readiness.left(tokio::time::Instant::now())
    }
}

impl Apply<RouteRegistry> for Ping {
    fn apply(self, _: &mut RouteRegistry) {}
}

#[cfg(test)]
impl Apply<RouteRegistry> for Stall {
    fn apply(self, _: &mut RouteRegistry) {
        std::thread::sleep(std::time::Duration::from_millis(self.millis));
    }
}
