//! Microbenchmarks of the hot paths: the codec, register-body decoding, route-body building,
//! the register apply step (changed and unchanged dataVersion) and one expiry scan.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion};
use namesrv::mailbox::ConnId;
use namesrv::model::{DataVersion, TopicConfig, TopicTable};
use namesrv::protocol::body::{decode_register_body, RegisterBody};
use namesrv::protocol::codec::encode_frame;
use namesrv::protocol::json::JsonStyle;
use namesrv::protocol::{ExtFields, RemotingCodec, RemotingCommand};
use namesrv::registry::options::RegistryOptions;
use namesrv::registry::register::Registration;
use namesrv::registry::tables::RouteTables;
use namesrv::registry::view::encode_route;
use tokio_util::codec::Decoder;

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
    let body = RegisterBody {
        topics: {
            let mut table = TopicTable::with_capacity(topics);
            for t in 0..topics {
                let name = format!("T{t}");
                let config = TopicConfig {
                    topic_name: Some(name.clone()),
                    read_queue_nums: 8,
                    write_queue_nums: 8,
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
        cluster: "c".into(),
        addr: addr.into(),
        broker_name: name.into(),
        broker_id: 0,
        ha_server_addr: String::new(),
        zone_name: None,
        timeout_ms: None,
        enable_acting_master: Some(false),
        topics_fingerprint: body.topics_fingerprint(),
        body,
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
    let body = register_body_json(10_000, 1);
    c.bench_function("body/decode 10k-topic register body", |b| {
        b.iter(|| decode_register_body(Some(black_box(&body)), false, 479, 1 << 30).unwrap())
    });
}

fn registry(c: &mut Criterion) {
    let mut tables = RouteTables::new(RegistryOptions::default());
    tables.register_broker(registration("b", "10.0.0.1:10911", 10_000, 1), 0).unwrap();
    c.bench_function("view/build route body (standard json)", |b| {
        b.iter(|| encode_route(&tables, black_box("T42"), JsonStyle::Standard, None).unwrap())
    });
    c.bench_function("view/cached route body", |b| b.iter(|| tables.route_body(black_box("T42"), JsonStyle::Standard)));

    let mut counter = 1;
    c.bench_function("register/apply 10k topics, changed dataVersion", |b| {
        b.iter_batched(
            || {
                counter += 1;
                registration("b", "10.0.0.1:10911", 10_000, counter)
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

    let mut many = RouteTables::new(RegistryOptions::default());
    for i in 0..10_000 {
        many.register_broker(registration(&format!("b{i}"), &format!("10.0.{}.{}:10911", i / 250, i % 250), 2, 1), 0);
    }
    c.bench_function("expiry/scan 10k live brokers", |b| b.iter(|| many.expire(black_box(1_000))));
}

criterion_group!(benches, codec, registry);
criterion_main!(benches);
