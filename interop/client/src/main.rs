//! Route / produce / consume checks against a NameServer, built on rocketmq-client-rust 1.0.0.
//!
//! `namesrv-interop-client roundtrip <namesrv;addrs> <topic> <group> <count> <timeout-secs>`
//! starts a push consumer, produces `count` messages, and exits 0 once every one arrived
//! (printing `received N of N`), or 1 at the timeout.
//! `namesrv-interop-client produce <namesrv;addrs> <topic> <count>` only produces.
//!
//! A namesrv address of `-` sets none: the client then finds its name servers through the address
//! server, `http://{rocketmq.namesrv.domain}/rocketmq/{rocketmq.namesrv.domain.subgroup}`, both read
//! from environment variables of those names (rocketmq-rust's spelling of Java's system properties).
//!
//! With `INTEROP_ACCESS_KEY` and `INTEROP_SECRET_KEY` set, the producer and the consumer sign every
//! request with rocketmq-rust's `AclClientRPCHook` (RocketMQ session credentials), as a client of a
//! NameServer with access control on must.
#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rocketmq_client_rust::{
    AclClientRPCHook, ClientResult, ClientRuntime, ClientRuntimeConfig, ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus, DefaultMQProducer, DefaultMQPushConsumer, MQPushConsumer, MessageListenerConcurrently,
    SessionCredentials,
};
use rocketmq_model::common::consumer::consume_from_where::ConsumeFromWhere;
use rocketmq_model::common::message::message_ext::MessageExt;
use rocketmq_model::common::message::message_single::Message;
use rocketmq_runtime::{RuntimeConfig, RuntimeOwner};

/// Collects the bodies of the messages it is handed.
struct Collect(Arc<Mutex<HashSet<Vec<u8>>>>);

impl MessageListenerConcurrently for Collect {
    fn consume_message(
        &self,
        msgs: &[&MessageExt],
        _context: &ConsumeConcurrentlyContext,
    ) -> ClientResult<ConsumeConcurrentlyStatus> {
        let mut seen = self.0.lock().unwrap();
        for msg in msgs {
            if let Some(body) = msg.body() {
                seen.insert(body.to_vec());
            }
        }
        Ok(ConsumeConcurrentlyStatus::ConsumeSuccess)
    }
}

fn client_runtime() -> Result<(RuntimeOwner, Arc<ClientRuntime>), Box<dyn std::error::Error>> {
    let mut config = RuntimeConfig { thread_name: "interop".into(), ..Default::default() };
    // The default metadata lane (depth 16) rejects bursts of consumed messages on 2 cores.
    config.blocking_lane_policies.metadata_io.max_concurrency = 16;
    config.blocking_lane_policies.metadata_io.max_queue_depth = 65_536;
    config.max_blocking_threads = config.max_blocking_threads.max(32);
    let owner = RuntimeOwner::plan(config)?.build()?;
    let telemetry = rocketmq_observability::install_global(&Default::default())?;
    let runtime =
        ClientRuntime::try_new(owner.root_context().component("client"), ClientRuntimeConfig::default(), telemetry.handle())?;
    std::mem::forget(telemetry);
    Ok((owner, runtime))
}

/// The name-server addresses to set, or `None` for `-`: found through the address server.
fn explicit(namesrv: &str) -> Option<String> {
    (namesrv != "-").then(|| namesrv.to_string())
}

/// The signing hook, when `INTEROP_ACCESS_KEY` and `INTEROP_SECRET_KEY` are set.
fn acl_hook() -> Option<Arc<AclClientRPCHook>> {
    let access_key = std::env::var("INTEROP_ACCESS_KEY").ok().filter(|k| !k.is_empty())?;
    let secret_key = std::env::var("INTEROP_SECRET_KEY").unwrap_or_default();
    Some(Arc::new(AclClientRPCHook::new(SessionCredentials::with_keys(access_key, secret_key))))
}

async fn produce(runtime: &Arc<ClientRuntime>, namesrv: &str, topic: &str, count: usize, tag: &str) -> ClientResult<()> {
    let mut builder = DefaultMQProducer::builder(runtime.clone()).producer_group(format!("interop_producer_{tag}"));
    if let Some(addrs) = explicit(namesrv) {
        builder = builder.name_server_addr(addrs);
    }
    if let Some(hook) = acl_hook() {
        builder = builder.rpc_hook(hook);
    }
    let mut producer = builder.build();
    producer.start().await?;
    for i in 0..count {
        let message = Message::builder().topic(topic).tags("interop").body_slice(format!("{tag}-{i}").as_bytes()).build_unchecked();
        let mut attempts = 0;
        loop {
            match producer.send_with_timeout(message.clone(), 3000).await {
                Ok(_) => break,
                Err(e) if attempts < 10 => {
                    attempts += 1;
                    eprintln!("send {i} failed ({e}), retrying");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
    producer.shutdown().await;
    println!("produced {count}");
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (_owner, runtime) = client_runtime()?;
    match args.first().map(String::as_str) {
        Some("produce") if args.len() == 4 => {
            produce(&runtime, &args[1], &args[2], args[3].parse()?, "p").await?;
        }
        Some("roundtrip") if args.len() == 6 => {
            let (namesrv, topic, group) = (&args[1], &args[2], &args[3]);
            let count: usize = args[4].parse()?;
            let timeout = Duration::from_secs(args[5].parse()?);
            let tag = format!("{}", std::process::id());
            let seen = Arc::new(Mutex::new(HashSet::new()));
            let mut builder = DefaultMQPushConsumer::builder(runtime.clone())
                .consumer_group(group.clone())
                .consume_from_where(ConsumeFromWhere::ConsumeFromFirstOffset);
            if let Some(hook) = acl_hook() {
                builder = builder.rpc_hook(Some(hook as _));
            }
            if let Some(addrs) = explicit(namesrv) {
                builder = builder.name_server_addr(addrs);
            }
            let mut consumer = builder.build();
            consumer.subscribe(topic, "*").await?;
            consumer.register_message_listener_concurrently(Collect(seen.clone()));
            consumer.start().await?;
            produce(&runtime, namesrv, topic, count, &tag).await?;
            let expected: HashSet<Vec<u8>> = (0..count).map(|i| format!("{tag}-{i}").into_bytes()).collect();
            let deadline = Instant::now() + timeout;
            let received = loop {
                let got = seen.lock().unwrap().intersection(&expected).count();
                if got == count || Instant::now() > deadline {
                    break got;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            };
            println!("received {received} of {count}");
            consumer.shutdown().await;
            std::process::exit(if received == count { 0 } else { 1 });
        }
        _ => {
            eprintln!("usage: namesrv-interop-client roundtrip <namesrv> <topic> <group> <count> <timeout-secs>");
            eprintln!("       (<namesrv> `-`: none set, found through the address server, rocketmq.namesrv.domain)");
            eprintln!("       namesrv-interop-client produce <namesrv> <topic> <count>");
            std::process::exit(2);
        }
    }
    Ok(())
}
