//! Microbenchmarks of the hot paths: the codec, register-body decoding, route-body building,
//! the register apply step (changed table, changed dataVersion only, unchanged dataVersion),
//! lookups of interned names, one expiry scan, and a registry round trip on the same thread
//! and across arbiters.
#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Duration;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion};
use namesrv::metrics::Metrics;
use namesrv::model::{DataVersion, QueueData, TopicConfig, TopicTable};
use namesrv::notifier::{Notifier, NotifyLimits};
use namesrv::origin::ConnId;
use namesrv::protocol::body::register::decode_register_body;
use namesrv::protocol::body::register_json;
use namesrv::protocol::body::{BodyLimits, DecodeContext, RegisterBody};
use namesrv::protocol::codec::encode_frame;
use namesrv::protocol::json::JsonStyle;
use namesrv::protocol::testing::scan_route;
use namesrv::protocol::{ExtFields, RemotingCodec, RemotingCommand};
use namesrv::registry::liveness::HEAL_SLICE;
use namesrv::registry::messages::{RegisterBroker, RouteBatch};
use namesrv::registry::options::RegistryOptions;
use namesrv::registry::register::{FingerprintedBody, Registered, Registration};
use namesrv::registry::route_answer::RouteQuery;
use namesrv::registry::tables::RouteTables;
use namesrv::registry::RouteRegistry;
use tokio_util::codec::Decoder;

fn limits(max_inflated_bytes: usize) -> DecodeContext {
    DecodeContext::unpaced(BodyLimits { max_inflated_bytes, max_topics: 1_000_000 })
}

fn register_body_json(topics: usize, counter: i64) -> Vec<u8> {
    let table: Vec<String> = (0..topics)
        .map(|t| format!("\"T{t}\":{{\"attributes\":{{}},\"order\":false,\"perm\":6,\"readQueueNums\":8,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"T{t}\",\"topicSysFlag\":0,\"writeQueueNums\":8}}"))
        .collect();
    format!(
        "{{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{{\"dataVersion\":{{\"counter\":{counter},\"stateVersion\":0,\"timestamp\":1}},\"topicConfigTable\":{{{}}},\"topicQueueMappingInfoMap\":{{}}}}}}",
        table.join(",")
    )
    .into_bytes()
}

fn registration(name: &str, addr: &str, topics: usize, counter: i64) -> Registration {
    registration_with_queues(name, addr, topics, counter, 8)
}

fn registration_with_queues(name: &str, addr: &str, topics: usize, counter: i64, queues: i32) -> Registration {
    let body = RegisterBody {
        topics: {
            let mut table = TopicTable::with_capacity(topics);
            for t in 0..topics {
                let name = format!("T{t}");
                let config = TopicConfig {
                    topic_name: Some(name.clone()),
                    read_queue_nums: queues,
                    write_queue_nums: queues,
                    ..TopicConfig::default()
                };
                table.push(&name, &config);
            }
            table
        },
        data_version: DataVersion { counter, state_version: 0, timestamp: 1 },
        filter_servers: Some(vec![]),
        mappings: vec![],
    };
    Registration {
        conn: ConnId(1),
        version: 479,
        cluster: "c".into(),
        addr: addr.into(),
        broker_name: name.into(),
        broker_id: 0,
        ha_server_addr: String::new(),
        zone_name: None,
        timeout_ms: None,
        enable_acting_master: Some(false),
        body: FingerprintedBody::new(body),
        access_key: None,
    }
}

fn codec(c: &mut Criterion) {
    let request = RemotingCommand::request(105, Some(ExtFields::new().with("topic", "TopicTest"))).with_opaque(42);
    let mut frame = BytesMut::new();
    encode_frame(&request, &mut frame).unwrap();
    c.bench_function("codec/encode route query", |b| {
        b.iter(|| {
            let mut out = BytesMut::with_capacity(160);
            encode_frame(black_box(&request), &mut out).unwrap();
            out
        })
    });
    c.bench_function("codec/decode route query", |b| {
        b.iter(|| RemotingCodec::default().decode(&mut frame.clone()).unwrap().unwrap())
    });
    // The route lane's reading of a header: as Java clients lay it out (matched piece by piece)
    // and in another order (walked key by key).
    let java = &frame[8..];
    let other = br#"{"code":105,"flag":0,"opaque":42,"language":"JAVA","version":479,"extFields":{"topic":"TopicTest"},"serializeTypeCurrentRPC":"JSON"}"#;
    c.bench_function("codec/route lane header, Java layout", |b| b.iter(|| scan_route(black_box(java)).unwrap()));
    c.bench_function("codec/route lane header, another layout", |b| b.iter(|| scan_route(black_box(other)).unwrap()));
    let body = register_body_json(10_000, 1);
    c.bench_function("body/decode 10k-topic register body", |b| {
        b.iter(|| decode_register_body(Some(black_box(&body)), false, 479, &limits(1 << 30)).unwrap())
    });
    c.bench_function("body/decode 10k-topic register body, serde reader only", |b| {
        b.iter(|| register_json::decode_general(black_box(&body), 479, &limits(1 << 30)).unwrap())
    });
    let decoded = decode_register_body(Some(&body), false, 479, &limits(1 << 30)).unwrap();
    c.bench_function("body/fingerprint 10k-topic table", |b| b.iter(|| black_box(&decoded).topics_fingerprint()));
}

fn registry(c: &mut Criterion) {
    let mut tables = RouteTables::new(RegistryOptions::default());
    let registered = tables.register_broker(registration("b", "10.0.0.1:10911", 10_000, 1), 0);
    assert!(matches!(registered, Registered::Accepted(_)));
    c.bench_function("view/build route body (standard json)", |b| {
        b.iter(|| tables.build_route(black_box("T42"), JsonStyle::Standard, None).unwrap())
    });
    c.bench_function("view/cached route body", |b| b.iter(|| tables.route_body(black_box("T42"), JsonStyle::Standard)));

    let mut counter = 1;
    c.bench_function("register/apply 10k topics, changed dataVersion and table", |b| {
        b.iter_batched(
            || {
                counter += 1;
                // Every topic's queue count changes, so every topic is rewritten.
                registration_with_queues("b", "10.0.0.1:10911", 10_000, counter, 8 + (counter % 2) as i32)
            },
            |reg| tables.register_broker(reg, 0),
            criterion::BatchSize::LargeInput,
        )
    });
    c.bench_function("register/apply 10k topics, changed dataVersion, same table", |b| {
        b.iter_batched(
            || {
                counter += 1;
                registration_with_queues("b", "10.0.0.1:10911", 10_000, counter, 8)
            },
            |reg| tables.register_broker(reg, 0),
            criterion::BatchSize::LargeInput,
        )
    });
    c.bench_function("register/apply 10k topics, unchanged dataVersion", |b| {
        b.iter_batched(
            || registration("b", "10.0.0.1:10911", 10_000, counter),
            |reg| tables.register_broker(reg, 0),
            criterion::BatchSize::LargeInput,
        )
    });

    let queue = QueueData { read_queue_nums: 8, write_queue_nums: 8, perm: 6, topic_sys_flag: 0 };
    c.bench_function("tables/put unchanged queue data (interned topic and broker lookup)", |b| {
        b.iter(|| tables.put_queue(black_box("T4242"), black_box("b"), queue))
    });

    let mut many = RouteTables::new(RegistryOptions::default());
    for i in 0..10_000 {
        many.register_broker(registration(&format!("b{i}"), &format!("10.0.{}.{}:10911", i / 250, i % 250), 2, 1), 0);
    }
    c.bench_function("expiry/scan 10k live brokers", |b| b.iter(|| many.expire(black_box(1_000))));
    let mut from = 0;
    c.bench_function("expiry/tick over 10k live brokers (scan and a slice of the consistency pass)", |b| {
        b.iter(|| {
            let removed = many.expire(black_box(1_000));
            let (healed, next) = many.heal_slice(from, HEAL_SLICE);
            from = next;
            (removed, healed)
        })
    });
    c.bench_function("expiry/whole consistency pass over 10k live brokers", |b| b.iter(|| many.heal()));
}

/// A route query answered by the registry actor, from the calling thread: the registry on the
/// same thread (`io_threads = 1`) or on an arbiter of its own, one query per message or 16 in one
/// `RouteBatch` (per query).
fn round_trip(c: &mut Criterion) {
    let system = actix::System::new();
    let start = |arbiter: Option<&actix::Arbiter>| {
        let registry = system.block_on(async {
            let notifier = Notifier::start(0, NotifyLimits { max_in_flight: 1, max_per_second: 1 }, Metrics::off());
            let options = RegistryOptions::default();
            match arbiter {
                Some(a) => {
                    RouteRegistry::start_on(&a.handle(), options, Duration::from_secs(3600), notifier, Metrics::off())
                }
                None => RouteRegistry::start(options, Duration::from_secs(3600), notifier, Metrics::off()),
            }
        });
        let reg = registration("b", "10.0.0.1:10911", 1_000, 1);
        let registered = system.block_on(registry.ask(RegisterBroker { conn: ConnId(1), registration: reg })).unwrap();
        assert!(matches!(registered, Ok(Registered::Accepted(_))), "the benchmark broker registers");
        registry
    };
    let query = || RouteQuery { conn: ConnId(2), topic: Some("T42".into()), style: JsonStyle::Standard, zone: None };
    let other = actix::Arbiter::new();
    for (name, registry) in [("same thread", start(None)), ("across arbiters", start(Some(&other)))] {
        c.bench_function(&format!("actor/route query round trip (a batch of one), {name}"), |b| {
            b.iter(|| system.block_on(registry.ask(RouteBatch { conn: ConnId(2), queries: vec![query()] })).unwrap())
        });
        c.bench_function(&format!("actor/route query in a batch of 16, {name} (per batch)"), |b| {
            b.iter(|| {
                let queries = (0..16).map(|_| query()).collect();
                system.block_on(registry.ask(RouteBatch { conn: ConnId(2), queries })).unwrap()
            })
        });
    }
    other.stop();
}

criterion_group!(benches, codec, registry, round_trip);
criterion_main!(benches);
