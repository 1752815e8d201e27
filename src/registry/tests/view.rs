//! Route building: the acting-master rewrite, zones, order topics and the cache.

use super::*;
use crate::model::BrokerData;

#[test]
fn a_masterless_read_only_acting_master_group_shows_its_lowest_member_as_master() {
    let mut t = RouteTables::new(RegistryOptions::routing(RoutingSettings {
        support_acting_master: true,
        ..Default::default()
    }));
    let master = Reg { acting_master: Some(true), ..broker("b1", "m:1", &["T1", "T2"]) };
    let slave = Reg { id: 1, acting_master: Some(true), ..broker("b1", "s:1", &["T1", "T2"]) };
    register(&mut t, &master, 0);
    register(&mut t, &slave, 0);
    t.unregister_broker(&master.broker_ref());
    let addrs = &route(&mut t, "T1").unwrap()["brokerDatas"][0]["brokerAddrs"];
    assert_eq!(addrs, &serde_json::json!({"0": "s:1"}), "write perm was wiped, so the slave is shown as id 0");
    assert_eq!(t.group("b1").unwrap().broker_addrs.get(&1).map(String::as_str), Some("s:1"), "tables unchanged");
}

#[test]
fn a_zone_route_drops_groups_whose_master_is_elsewhere() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    register(&mut t, &broker("b2", "a:2", &["T1", "T2"]), 0);
    t.edit_existing_group("b1", |g: &mut BrokerData| g.zone_name = Some("east".into()));
    t.edit_existing_group("b2", |g: &mut BrokerData| g.zone_name = Some("west".into()));
    let body = t.zone_route_body("T1", JsonStyle::Standard, "EAST").unwrap();
    let zoned: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(zoned["brokerDatas"].as_array().unwrap().len(), 1);
    assert_eq!(zoned["queueDatas"][0]["brokerName"], "b1");
    assert_eq!(route_brokers(&mut t, "T1"), ["b1", "b2"], "the plain route is whole");
}

#[test]
fn order_topic_config_shows_only_when_enabled_and_follows_the_kv_store() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T1", "T2"]), 0);
    t.set_order_topics(Some([("T1".to_owned(), "b1:4".to_owned())].into()));
    assert!(route(&mut t, "T1").unwrap().get("orderTopicConf").is_none());
    t.set_options(RegistryOptions::routing(RoutingSettings { order_message_enable: true, ..Default::default() }));
    assert_eq!(route(&mut t, "T1").unwrap()["orderTopicConf"], "b1:4");
    t.set_order_topics(None);
    assert!(route(&mut t, "T1").unwrap().get("orderTopicConf").is_none(), "the cached route was dropped");
}

#[test]
fn a_group_change_drops_the_cached_routes_of_its_topics_and_the_cluster_info() {
    let mut t = tables();
    register(&mut t, &broker("b1", "m:1", &["T1", "T2"]), 0);
    let before = t.route_body("T1", JsonStyle::Fastjson).unwrap();
    let info_before = t.cluster_info_body();
    register(&mut t, &Reg { id: 1, ..broker("b1", "s:1", &[]) }, 1);
    let after = t.route_body("T1", JsonStyle::Fastjson).unwrap();
    assert_ne!(before, after);
    assert_eq!(after, t.build_route("T1", JsonStyle::Fastjson, None).unwrap());
    assert_ne!(info_before, t.cluster_info_body());
}

#[test]
fn a_zone_route_drops_the_filter_servers_of_a_dropped_groups_addresses_even_if_shared() {
    let mut t = tables();
    register(&mut t, &Reg { filter_servers: Some(vec!["f:1".into()]), ..broker("b1", "a:1", &["T1", "T2"]) }, 0);
    register(&mut t, &broker("b2", "a:2", &["T1", "T2"]), 0);
    t.edit_existing_group("b1", |g: &mut BrokerData| g.zone_name = Some("east".into()));
    t.edit_existing_group("b2", |g: &mut BrokerData| {
        g.zone_name = Some("west".into());
        g.broker_addrs.insert(1, "a:1".into());
    });
    let west: Value = serde_json::from_slice(&t.zone_route_body("T1", JsonStyle::Standard, "west").unwrap()).unwrap();
    assert_eq!(west["brokerDatas"][0]["brokerName"], "b2");
    assert_eq!(west["filterServerTable"], serde_json::json!({}), "Java removes a:1's entry with the dropped b1");
    let east: Value = serde_json::from_slice(&t.zone_route_body("T1", JsonStyle::Standard, "east").unwrap()).unwrap();
    assert_eq!(east["filterServerTable"], serde_json::json!({}));
    let whole = route(&mut t, "T1").unwrap();
    assert_eq!(whole["filterServerTable"]["a:1"], serde_json::json!(["f:1"]));
}
