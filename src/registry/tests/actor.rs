//! The real `RouteRegistry` actor, driven through its mailbox with short configured intervals:
//! the expiry tick closes an expired broker's connection, a closed connection's brokers go and
//! the notifier tells the rest of the group over TCP, and route queries wait for readiness.
//! Expiry and readiness run on tokio's paused clock: the registry's timers and clock move
//! only when the test waits (in steps of the timer wheel's granularity), costing no wall-clock
//! time.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use bytes::BytesMut;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio_util::codec::Decoder;

use super::*;
use crate::mailbox::Mailbox;
use crate::metrics::Metrics;
use crate::notifier::{Notifier, NotifyLimits};
use crate::protocol::{RemotingCodec, RemotingCommand, RequestCode};
use crate::registry::messages::{
    ApplyOptions, AttachConnection, CloseConnection, ConnectionClosed, GetReadiness, LoadSnapshot, RegisterBroker,
    RouteBatch,
};
use crate::registry::register::Registered;
use crate::registry::route_answer::{RouteAnswer, RouteAnswers, RouteQuery};
use crate::registry::{RegistryHandle, RouteRegistry};

/// How long a test waits for an effect before failing.
const PATIENCE: Duration = Duration::from_secs(5);

/// Stands in for a connection actor: reports every `CloseConnection` it gets.
struct Closer(UnboundedSender<&'static str>);

impl Actor for Closer {
    type Context = Context<Self>;
}

impl Handler<CloseConnection> for Closer {
    type Result = ();

    fn handle(&mut self, msg: CloseConnection, _: &mut Context<Self>) {
        let _ = self.0.send(msg.reason);
    }
}

/// A registry with `options` and a 20 ms expiry tick, with a notifier of its own.
fn start_registry(options: RegistryOptions) -> RegistryHandle {
    let notifier = Notifier::start(479, NotifyLimits { max_in_flight: 8, max_per_second: 100 }, Metrics::off());
    RouteRegistry::start(options, Duration::from_millis(20), notifier, Metrics::off())
}

/// Attaches connection `conn` and registers `reg` over it; the closes it gets are reported.
async fn register_over(registry: &RegistryHandle, reg: &Reg) -> UnboundedReceiver<&'static str> {
    let (tx, rx) = unbounded_channel();
    let closer = Closer(tx).start().recipient();
    registry.ask(AttachConnection { conn: ConnId(reg.conn), closer }).await.unwrap();
    let registered = registry.ask(RegisterBroker { conn: ConnId(reg.conn), registration: reg.registration() });
    assert!(matches!(registered.await.unwrap(), Ok(Registered::Accepted(_))), "{} registered", reg.name);
    rx
}

/// A query for the route of `topic`, filtered to `zone` when given.
fn query(topic: &str, zone: Option<&str>) -> RouteQuery {
    RouteQuery {
        conn: ConnId(99),
        topic: Some(topic.into()),
        style: JsonStyle::Standard,
        zone: zone.map(str::to_owned),
    }
}

/// The route of `topic` in `zone` as the registry answers it alone (a batch of one).
async fn route_in(registry: &RegistryHandle, topic: &str, zone: Option<&str>) -> RouteAnswer<bytes::Bytes> {
    let answers = batch_of(registry, &[(topic, zone)]).await;
    assert_eq!(answers.len(), 1, "one answer to one query");
    resolve(&answers, &answers.answers[0])
}

/// The route of `topic` as the registry answers it alone.
async fn route_of(registry: &RegistryHandle, topic: &str) -> RouteAnswer<bytes::Bytes> {
    route_in(registry, topic, None).await
}

/// `answer` of `answers` with its body, not its number.
fn resolve(answers: &RouteAnswers, answer: &RouteAnswer<usize>) -> RouteAnswer<bytes::Bytes> {
    match answer {
        RouteAnswer::Found(index) => RouteAnswer::Found(answers.bodies[*index].clone()),
        RouteAnswer::NotFound(topic) => RouteAnswer::NotFound(topic.clone()),
        RouteAnswer::NotReady => RouteAnswer::NotReady,
    }
}

/// The answers to one batch of `queries` (topic and zone).
async fn batch_of(registry: &RegistryHandle, queries: &[(&str, Option<&str>)]) -> RouteAnswers {
    let queries = queries.iter().map(|(topic, zone)| query(topic, *zone)).collect();
    registry.ask(RouteBatch { conn: ConnId(99), queries }).await.unwrap()
}

#[test]
fn a_route_batch_answers_each_query_as_alone_and_lists_a_run_of_equal_bodies_once() {
    System::new().block_on(async {
        let registry = start_registry(RegistryOptions::default());
        let _a = register_over(&registry, &broker("a", "a:1", &["T1", "T2", "T3"])).await;
        let _b = register_over(&registry, &Reg { conn: 2, ..broker("b", "b:1", &["U1", "U2"]) }).await;
        let queries =
            [("T1", None), ("T2", None), ("X", None), ("U1", None), ("T1", Some("z")), ("T3", None), ("T1", None)];
        for round in ["built", "cached"] {
            let batch = batch_of(&registry, &queries).await;
            let answers = &batch.answers;
            assert_eq!(answers.len(), queries.len(), "{round}");
            for ((topic, zone), answer) in queries.iter().zip(answers) {
                let alone = route_in(&registry, topic, *zone).await;
                assert_eq!(resolve(&batch, answer), alone, "{round}: {topic} in {zone:?}");
            }
            assert_eq!(answers[2], RouteAnswer::NotFound(Some("X".into())), "{round}");
            if round == "cached" {
                assert_eq!((&answers[0], &answers[1]), (&RouteAnswer::Found(0), &RouteAnswer::Found(0)), "T1, T2");
                assert_ne!(answers[3], answers[0], "U1 is routed to another broker");
                assert_eq!(answers[5], answers[6], "T3 then T1 share one entry");
                let found = answers.iter().filter(|a| matches!(a, RouteAnswer::Found(_))).count();
                assert_eq!((found, batch.bodies.len()), (6, 4), "six found, four entries: {answers:?}");
            }
        }
    });
}

#[test]
fn the_expiry_tick_closes_only_the_expired_brokers_connection_and_its_routes_go() {
    System::new().block_on(async {
        tokio::time::pause();
        let begin = tokio::time::Instant::now();
        let registry = start_registry(RegistryOptions::default());
        let silent = Reg { conn: 7, timeout_ms: Some(1_000), ..broker("silent", "a:1", &["S1", "S2"]) };
        let kept = Reg { conn: 8, timeout_ms: Some(60_000), ..broker("kept", "a:2", &["K1", "K2"]) };
        let mut silent_closes = register_over(&registry, &silent).await;
        let mut kept_closes = register_over(&registry, &kept).await;
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert!(matches!(route_of(&registry, "S1").await, RouteAnswer::Found(_)), "routed until its timeout");
        assert!(silent_closes.try_recv().is_err(), "open until its timeout");

        let reason = tokio::time::timeout(PATIENCE, silent_closes.recv()).await;
        assert!(matches!(reason, Ok(Some(_))), "the expired broker's connection is closed: {reason:?}");
        let silent_ms = begin.elapsed().as_millis();
        assert!((1_000..=1_200).contains(&silent_ms), "closed within a few 20 ms ticks of its timeout: {silent_ms} ms");
        assert_eq!(
            route_of(&registry, "S1").await,
            RouteAnswer::NotFound(Some("S1".into())),
            "its routes went with it"
        );
        assert!(matches!(route_of(&registry, "K1").await, RouteAnswer::Found(_)), "the other broker stays");
        assert!(kept_closes.try_recv().is_err(), "the other broker's connection stays open");
    });
}

#[test]
fn a_closed_connections_master_goes_at_once_and_the_notifier_tells_the_slave() {
    System::new().block_on(async {
        let options =
            RegistryOptions::routing(RoutingSettings { notify_min_broker_id_changed: true, ..Default::default() });
        let registry = start_registry(options);
        let slave_socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let slave_addr: &'static str = Box::leak(slave_socket.local_addr().unwrap().to_string().into_boxed_str());
        let master = Reg { conn: 1, acting_master: Some(true), ..broker("b", "127.0.0.1:1", &["T1", "T2"]) };
        let slave = Reg { id: 1, conn: 2, addr: slave_addr, ..master.clone() };
        let _master_closes = register_over(&registry, &master).await;
        let _slave_closes = register_over(&registry, &slave).await;

        registry.ask(ConnectionClosed { conn: ConnId(1) }).await.unwrap();
        let RouteAnswer::Found(body) = route_of(&registry, "T1").await else { panic!("the slave still serves T1") };
        let route: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(route["brokerDatas"][0]["brokerAddrs"], serde_json::json!({ "1": slave_addr }));

        let note = tokio::time::timeout(PATIENCE, read_one_request(&slave_socket)).await.expect("notified");
        assert_eq!(note.code, RequestCode::NotifyMinBrokerIdChange as i32);
        assert_eq!(note.ext("minBrokerId"), Some("1"));
        assert_eq!(note.ext("minBrokerAddr"), Some(slave_addr));
        assert_eq!(note.ext("offlineBrokerAddr"), Some("127.0.0.1:1"));
    });
}

/// Accepts one connection on `socket` and reads the request it carries.
async fn read_one_request(socket: &tokio::net::TcpListener) -> RemotingCommand {
    let (mut stream, _) = socket.accept().await.unwrap();
    let mut buf = BytesMut::new();
    let mut codec = RemotingCodec::new(1 << 20);
    loop {
        if let Some(cmd) = codec.decode(&mut buf).unwrap() {
            return cmd;
        }
        assert_ne!(stream.read_buf(&mut buf).await.unwrap(), 0, "closed before a whole frame");
    }
}

#[test]
fn route_queries_are_answered_not_ready_until_the_readiness_wait_has_passed() {
    System::new().block_on(async {
        tokio::time::pause();
        let options = RegistryOptions::routing(RoutingSettings {
            need_wait_for_service: true,
            wait_seconds_for_service: 1,
            ..Default::default()
        });
        let registry = start_registry(options);
        let _closes = register_over(&registry, &broker("b", "a:1", &["T1", "T2"])).await;
        assert_eq!(route_of(&registry, "T1").await, RouteAnswer::NotReady);
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(route_of(&registry, "T1").await, RouteAnswer::NotReady, "still waiting after 800 ms");
        let batch = batch_of(&registry, &[("T1", None), ("T2", None)]).await.answers;
        assert_eq!(batch, vec![RouteAnswer::NotReady; 2], "a batch waits too");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(matches!(route_of(&registry, "T1").await, RouteAnswer::Found(_)), "ready after 1.1 s");
    });
}

#[test]
fn after_a_warm_start_a_runtime_options_update_leaves_routes_served_and_readiness_agrees() {
    System::new().block_on(async {
        tokio::time::pause();
        let routing =
            RoutingSettings { need_wait_for_service: true, wait_seconds_for_service: 60, ..Default::default() };
        let options = RegistryOptions::routing(routing);
        let cold = start_registry(options.clone());
        let _closes = register_over(&cold, &broker("b", "a:1", &["T1", "T2"])).await;
        assert_eq!(route_of(&cold, "T1").await, RouteAnswer::NotReady);
        let left = cold.ask(GetReadiness { conn: ConnId(1) }).await.unwrap();
        assert!(left.is_some_and(|l| l > Duration::from_secs(50)), "the gate says waiting too: {left:?}");

        let mut taken = tables();
        register(&mut taken, &broker("b", "a:1", &["T1", "T2"]), 10);
        let snapshot = Some(taken.snapshot(42, 10));
        let warm = start_registry(options.clone());
        assert_eq!(warm.ask(LoadSnapshot { conn: ConnId(1), snapshot, age_ms: 0, sink: None }).await.unwrap(), 1);
        assert!(matches!(route_of(&warm, "T1").await, RouteAnswer::Found(_)), "served at once");
        // A runtime update (UPDATE_NAMESRV_CONFIG or a reload) hands the registry the settings
        // as configured, need_wait_for_service on: the gate the warm start opened stays open.
        warm.ask(ApplyOptions { conn: ConnId(1), options }).await.unwrap();
        assert!(matches!(route_of(&warm, "T1").await, RouteAnswer::Found(_)), "still served after the update");
        assert_eq!(warm.ask(GetReadiness { conn: ConnId(1) }).await.unwrap(), None, "and ready says so");
    });
}

/// Clocks a test steps: the boot clock follows tokio's (paused) clock, the wall clock runs
/// `offset_ms` ahead of it.
#[derive(Debug)]
struct SteppedClock {
    zero: tokio::time::Instant,
    offset_ms: std::sync::atomic::AtomicI64,
}

impl crate::clock::Clock for SteppedClock {
    fn now(&self) -> crate::clock::Reading {
        let boot_ms = 1_000_000 + self.zero.elapsed().as_millis() as u64;
        let offset = self.offset_ms.load(std::sync::atomic::Ordering::Relaxed);
        crate::clock::Reading { boot_ms, wall_ms: (boot_ms as i64 + offset) as u64 }
    }
}

#[test]
fn wall_clock_steps_are_counted_as_steps_not_stalls_and_expiry_keeps_its_time() {
    System::new().block_on(async {
        tokio::time::pause();
        let begin = tokio::time::Instant::now();
        let clock = Arc::new(SteppedClock { zero: begin, offset_ms: 1_700_000_000_000.into() });
        let metrics = Metrics::new();
        let notifier = Notifier::start(479, NotifyLimits { max_in_flight: 8, max_per_second: 100 }, Metrics::off());
        let scan = Duration::from_millis(20);
        let registry = RouteRegistry::new(RegistryOptions::default(), scan, notifier, metrics.clone(), clock.clone());
        let registry = Mailbox::new(registry.start(), "registry", metrics.clone());
        let silent = Reg { conn: 7, timeout_ms: Some(1_000), ..broker("silent", "a:1", &["S1", "S2"]) };
        let mut closes = register_over(&registry, &silent).await;

        let step = |ms: i64| clock.offset_ms.fetch_add(ms, std::sync::atomic::Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(300)).await;
        step(3_600_000);
        tokio::time::sleep(Duration::from_millis(300)).await;
        step(-7_200_000);
        let reason = tokio::time::timeout(PATIENCE, closes.recv()).await;
        assert!(matches!(reason, Ok(Some(_))), "the silent broker expired: {reason:?}");
        let silent_ms = begin.elapsed().as_millis();
        assert!((1_000..=1_200).contains(&silent_ms), "at its timeout, not held by a stall: {silent_ms} ms");
        assert_eq!((metrics.wall_clock_steps.get(), metrics.registry_stalls.get()), (2, 0));
    });
}
