//! Seeded random operation sequences (address reuse, renames and id changes come from drawing
//! names, ids and addresses from small pools): after every step, every cached route and the
//! cached cluster info equal bodies freshly built from the tables, the tables' own indexes
//! agree, every address a group lists has a live registration and every live one is listed.
//! Registrations may carry static-topic mappings, which routes include.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed};

use super::*;
use crate::model::TopicQueueMappingInfo;
use crate::registry::admin::UnitFilter;

const CLUSTERS: [&str; 2] = ["c1", "c2"];
const NAMES: [&str; 3] = ["b1", "b2", "b3"];
const ADDRS: [&str; 4] = ["a:1", "a:2", "a:3", "a:4"];
const TOPICS: [&str; 5] = ["T1", "T2", "T3", "T4", "rmq_sys_SYNC_BROKER_MEMBER_b1"];

/// One thing that can happen to the tables (`RegisterMapped`: a registration carrying a
/// static-topic mapping, see [`mapped`]).
#[derive(Debug, Clone)]
enum Op {
    Register { reg: Reg },
    RegisterMapped { reg: Reg, topic: usize, epoch: i64, queues: i64 },
    Unregister { reg: Reg },
    ConnectionClosed { conn: u64 },
    Tick { advance_ms: u64 },
    Heartbeat { cluster: usize, addr: usize },
    WipeWritePerm { name: usize },
    AddWritePerm { name: usize },
    DeleteTopic { topic: usize, cluster: Option<usize> },
    RegisterTopic { topic: usize, names: Vec<usize> },
    OrderTopics { mask: u8 },
    Options { acting_master: bool, order: bool, delete_unlisted: bool, tiny_cache: bool },
}

fn reg() -> impl Strategy<Value = Reg> {
    let who = (0..CLUSTERS.len(), 0..NAMES.len(), 0..3i64, 0..ADDRS.len());
    let what = (0u8..32, 1..4i64, 0..3i64, 1..4u64, prop_oneof![Just(None), any::<bool>().prop_map(Some)]);
    let extra = (prop_oneof![Just(None), (50..400u64).prop_map(Some)], 0..3u8);
    (who, what, extra).prop_map(|((c, n, id, a), (mask, counter, state, conn, acting), (timeout, filter))| Reg {
        cluster: CLUSTERS[c],
        name: NAMES[n],
        id,
        addr: ADDRS[a],
        topics: TOPICS.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, t)| *t).collect(),
        counter,
        state_version: state,
        conn,
        acting_master: acting,
        timeout_ms: timeout,
        filter_servers: match filter {
            0 => None,
            1 => Some(vec![]),
            _ => Some(vec![format!("f-{}", ADDRS[a])]),
        },
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => reg().prop_map(|reg| Op::Register { reg }),
        2 => (reg(), 0..TOPICS.len(), 0..3i64, 1..3i64)
            .prop_map(|(reg, topic, epoch, queues)| Op::RegisterMapped { reg, topic, epoch, queues }),
        2 => reg().prop_map(|reg| Op::Unregister { reg }),
        1 => (1..4u64).prop_map(|conn| Op::ConnectionClosed { conn }),
        2 => (0..300u64).prop_map(|advance_ms| Op::Tick { advance_ms }),
        1 => (0..CLUSTERS.len(), 0..ADDRS.len()).prop_map(|(cluster, addr)| Op::Heartbeat { cluster, addr }),
        1 => (0..NAMES.len()).prop_map(|name| Op::WipeWritePerm { name }),
        1 => (0..NAMES.len()).prop_map(|name| Op::AddWritePerm { name }),
        1 => (0..TOPICS.len(), prop_oneof![Just(None), (0..CLUSTERS.len()).prop_map(Some)])
            .prop_map(|(topic, cluster)| Op::DeleteTopic { topic, cluster }),
        1 => (0..TOPICS.len(), vec(0..NAMES.len() + 1, 0..3)).prop_map(|(topic, names)| Op::RegisterTopic { topic, names }),
        1 => (0u8..32).prop_map(|mask| Op::OrderTopics { mask }),
        1 => (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(a, o, d, t)| Op::Options {
            acting_master: a,
            order: o,
            delete_unlisted: d,
            tiny_cache: t
        }),
    ]
}

/// Applies `op` at `now`, which a tick moves forward.
fn apply(t: &mut RouteTables, op: &Op, now: &mut u64) {
    let name = |i: usize| NAMES.get(i).copied().unwrap_or("unknown-broker");
    match op {
        Op::Register { reg } => {
            t.register_broker(reg.registration(), *now);
        }
        Op::RegisterMapped { reg, topic, epoch, queues } => {
            t.register_broker(mapped(reg, TOPICS[*topic], *epoch, *queues), *now);
        }
        Op::Unregister { reg } => {
            t.unregister_broker(&reg.broker_ref());
        }
        Op::ConnectionClosed { conn } => {
            t.connection_closed(ConnId(*conn));
        }
        Op::Tick { advance_ms } => {
            *now += advance_ms;
            t.expire(*now);
        }
        Op::Heartbeat { cluster, addr } => {
            t.heartbeat(CLUSTERS[*cluster], ADDRS[*addr], *now);
        }
        Op::WipeWritePerm { name: n } => {
            t.wipe_write_perm(name(*n));
        }
        Op::AddWritePerm { name: n } => {
            t.add_write_perm(name(*n));
        }
        Op::DeleteTopic { topic, cluster } => t.delete_topic(TOPICS[*topic], cluster.map(|c| CLUSTERS[c])),
        Op::RegisterTopic { topic, names } => {
            let q = QueueData { read_queue_nums: 2, write_queue_nums: 2, perm: 6, topic_sys_flag: 1 };
            let queues: Vec<(String, QueueData)> = names.iter().map(|n| (name(*n).to_owned(), q)).collect();
            t.register_topic(TOPICS[*topic], &queues);
        }
        Op::OrderTopics { mask } => {
            let table = TOPICS.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0);
            t.set_order_topics(Some(table.map(|(i, topic)| ((*topic).to_owned(), format!("b1:{i}"))).collect()));
        }
        Op::Options { acting_master, order, delete_unlisted, tiny_cache } => {
            t.set_options(RegistryOptions::routing(RoutingSettings {
                support_acting_master: *acting_master,
                order_message_enable: *order,
                delete_topic_with_broker_registration: *delete_unlisted,
                route_cache_max_bytes: if *tiny_cache { 600 } else { 1 << 20 },
                broker_timeout_ms: 200,
                ..RoutingSettings::default()
            }))
        }
    }
}

/// `reg`'s registration with a mapping of `topic`'s `queues` global queues onto its own, at `epoch`.
fn mapped(reg: &Reg, topic: &str, epoch: i64, queues: i64) -> Registration {
    let mut registration = reg.registration();
    let info = TopicQueueMappingInfo {
        topic: topic.to_owned(),
        total_queues: queues as i32,
        bname: reg.name.to_owned(),
        epoch,
        curr_id_map: (0..queues).map(|q| (q, q)).collect(),
        ..TopicQueueMappingInfo::default()
    };
    let mut body = std::mem::take(&mut registration.body).into_body();
    body.mappings.push((topic.to_owned(), info));
    registration.body = FingerprintedBody::new(body);
    registration
}

/// Every cached body equals a fresh one; asking also fills the cache for the next step.
fn check(t: &mut RouteTables) -> Result<(), TestCaseError> {
    let topics: Vec<String> = TOPICS.iter().map(|s| (*s).to_owned()).chain(t.all_topics()).collect();
    for topic in &topics {
        for style in [JsonStyle::Fastjson, JsonStyle::Standard] {
            let fresh = t.build_route(topic, style, None);
            let served = t.route_body(topic, style).map(|b| b.to_vec());
            prop_assert_eq!(served, fresh, "route of {} ({:?})", topic, style);
        }
    }
    prop_assert_eq!(t.cluster_info_body().to_vec(), t.build_cluster_info());
    let all = crate::protocol::reply::body::encode_topic_list(t.all_topics().iter().map(String::as_str), None);
    let kind = crate::registry::listings::ListingKind::All;
    prop_assert_eq!(t.listing_inputs(&kind).build(&kind).to_vec(), all);
    t.assert_consistent();
    for group in t.groups() {
        for addr in group.broker_addrs.values() {
            prop_assert!(t.live_at(addr).is_some(), "{} lists {} with no live registration", group.broker_name, addr);
        }
    }
    for (addr, live) in t.live_entries() {
        prop_assert!(t.is_listed(addr), "live {} at {} is listed by no group", live.broker_name, addr);
    }
    let _ = t.unit_topics(UnitFilter::HasUnitSub);
    Ok(())
}

/// Runs `cases` random sequences of up to 30 operations from a fixed seed.
fn run_sequences(seed: u64, cases: u32) {
    let config = Config {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    };
    proptest!(config, |(ops in vec(op(), 1..30))| {
        let mut t = RouteTables::new(RegistryOptions::routing(RoutingSettings { broker_timeout_ms: 200, ..Default::default() }));
        let mut now = 0;
        check(&mut t)?;
        for op in &ops {
            apply(&mut t, op, &mut now);
            check(&mut t)?;
        }
    });
}

// Two seeds of 1,000 sequences each, so the test threads share the work.

#[test]
fn cached_bodies_always_equal_bodies_built_afresh() {
    run_sequences(0x006e_616d_6573_7276, 1000);
}

#[test]
fn cached_bodies_always_equal_bodies_built_afresh_second_seed() {
    run_sequences(0x0072_6f75_7465_7321, 1000);
}
