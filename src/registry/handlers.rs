//! One thin `Apply` per registry message: a call into the tables, plus lifecycle logs.

use tracing::{debug, info};

use super::messages::*;
use super::view::{encode_member_group, encode_topic_list};
use super::RouteRegistry;
use crate::mailbox::Apply;

impl Apply<RouteRegistry> for RegisterBroker {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let now = registry.now_ms();
        let reg = self.registration;
        let (name, addr, cluster, id, topics) =
            (reg.broker_name.clone(), reg.addr.clone(), reg.cluster.clone(), reg.broker_id, reg.body.topics.len());
        let mut outcome = registry.tables.register_broker(reg, now);
        match &mut outcome {
            Some(o) => {
                if o.newly_live {
                    info!(broker = %name, addr = %addr, cluster = %cluster, id, topics, conn = self.conn.0, "broker registered");
                } else {
                    debug!(broker = %name, addr = %addr, id, topics, "broker re-registered");
                }
                if registry.tables.options().return_order_topic_config_to_broker {
                    o.order_topic_config = registry.tables.order_kv_body.clone();
                }
            }
            None => {
                info!(broker = %name, addr = %addr, id, topics, "registration rejected: first one with a single topic")
            }
        }
        outcome
    }
}

impl Apply<RouteRegistry> for UnregisterBroker {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let result = registry.tables.unregister_from(self.conn, &self.broker);
        match result {
            Ok(true) => registry.log_removed("unregister request", std::slice::from_ref(&self.broker)),
            Ok(false) => {}
            Err(fenced) => info!(
                broker = %self.broker.broker_name, addr = %self.broker.addr, conn = self.conn.0,
                registered_over = fenced.registered_over.0, "unregister ignored: broker re-registered over another connection"
            ),
        }
        result
    }
}

impl Apply<RouteRegistry> for GetRouteInfo {
    fn apply(self, registry: &mut RouteRegistry) -> RouteAnswer {
        let options = registry.tables.options();
        if options.need_wait_for_service && registry.started.elapsed().as_secs() < options.wait_seconds_for_service {
            return RouteAnswer::NotReady;
        }
        let body = match &self.zone {
            Some(zone) => registry.tables.zone_route_body(&self.topic, self.style, zone),
            None => registry.tables.route_body(&self.topic, self.style),
        };
        body.map_or(RouteAnswer::NotFound, RouteAnswer::Found)
    }
}

impl Apply<RouteRegistry> for GetClusterInfo {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        registry.tables.cluster_info_body()
    }
}

impl Apply<RouteRegistry> for QueryDataVersion {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let now = registry.now_ms();
        registry.tables.query_data_version(&self.cluster, &self.addr, self.version.as_ref(), now)
    }
}

impl Apply<RouteRegistry> for BrokerHeartbeat {
    fn apply(self, registry: &mut RouteRegistry) -> bool {
        let now = registry.now_ms();
        registry.tables.heartbeat(&self.cluster, &self.addr, now)
    }
}

impl Apply<RouteRegistry> for ConnectionClosed {
    fn apply(self, registry: &mut RouteRegistry) {
        let removed = registry.tables.connection_closed(self.conn);
        registry.log_removed("connection closed", &removed);
    }
}

impl Apply<RouteRegistry> for WipeWritePerm {
    fn apply(self, registry: &mut RouteRegistry) -> usize {
        let count = registry.tables.wipe_write_perm(&self.broker);
        info!(broker = %self.broker, topics = count, "write permission wiped");
        count
    }
}

impl Apply<RouteRegistry> for AddWritePerm {
    fn apply(self, registry: &mut RouteRegistry) -> usize {
        let count = registry.tables.add_write_perm(&self.broker);
        info!(broker = %self.broker, topics = count, "write permission added");
        count
    }
}

impl Apply<RouteRegistry> for DeleteTopic {
    fn apply(self, registry: &mut RouteRegistry) {
        info!(topic = %self.topic, cluster = ?self.cluster, "topic deleted");
        registry.tables.delete_topic(&self.topic, self.cluster.as_deref());
    }
}

impl Apply<RouteRegistry> for RegisterTopic {
    fn apply(self, registry: &mut RouteRegistry) -> usize {
        registry.tables.register_topic(&self.topic, &self.queues)
    }
}

impl Apply<RouteRegistry> for GetAllTopics {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let tables = &registry.tables;
        gate(tables.options().enable_all_topic_list)?;
        Ok(encode_topic_list(&tables.all_topics(), None).into())
    }
}

impl Apply<RouteRegistry> for GetTopicsByCluster {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let tables = &registry.tables;
        gate(tables.options().enable_topic_list)?;
        Ok(self.cluster.map(|cluster| encode_topic_list(&tables.topics_by_cluster(&cluster), None).into()))
    }
}

impl Apply<RouteRegistry> for GetSystemTopics {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let (topics, addr) = registry.tables.system_topics();
        encode_topic_list(&topics, addr.as_deref()).into()
    }
}

impl Apply<RouteRegistry> for GetUnitTopics {
    fn apply(self, registry: &mut RouteRegistry) -> Self::Output {
        let tables = &registry.tables;
        gate(tables.options().enable_topic_list)?;
        Ok(encode_topic_list(&tables.unit_topics(self.filter), None).into())
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

/// `Err(Disabled)` when a list's switch is off.
fn gate(enabled: bool) -> Result<(), Disabled> {
    if enabled {
        Ok(())
    } else {
        Err(Disabled)
    }
}
