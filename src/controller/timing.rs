//! The controller's timing on paused time: a one-peer controller on a runtime whose clock only
//! moves when the test advances it (tokio's paused time, which the controller's clock follows),
//! so heartbeat deadlines and the leader's warm-up are checked without waiting for them. Writes
//! go through the Raft log's I/O thread, which paused time does not stop: the test waits for
//! them on the real clock ([`settled`]), never by letting virtual time run.

use std::sync::Arc;
use std::time::Duration;

use actix::Arbiter;
use namesrv_controller_core::decide::{Answer, Op};
use namesrv_controller_core::liveness::{Beat, LiveKey};

use super::messages::{BrokerHeartbeat, GetMetadata, Outcome, Speaker, Submit};
use super::overview::GetOverview;
use super::raft::network::PeerSecurity;
use super::{Controller, ControllerHandle, ControllerOptions, ControllerStore};
use crate::clock::{Clock, SystemClock};
use crate::metrics::Metrics;
use crate::notifier::{Notifier, NotifyLimits};
use crate::origin::ConnId;
use crate::protocol::controller::body::SyncStateSet;
use crate::settings::{ControllerMode, Settings};

/// Runs `test` on a single-threaded actix system whose clock is paused from the start.
fn on_paused_time<F: std::future::Future<Output = ()>>(test: impl FnOnce() -> F) {
    let runtime = || tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
    actix::System::with_tokio_rt(runtime).block_on(test());
}

/// A one-peer controller sweeping every 200 ms, warming up for 10 s, on this thread, with its
/// state in a new directory; returned once it serves.
async fn serving_controller() -> ControllerHandle {
    let dir = std::env::temp_dir().join(format!("namesrv-timing-{}-{}", std::process::id(), rand_suffix()));
    let mut settings = Settings::default();
    settings.state.kv_config_path = dir.join("kvConfig.json").display().to_string();
    let c = &mut settings.controller;
    c.controller_mode = ControllerMode::Embedded;
    c.controller_peers = "n0-127.0.0.1:1".into();
    c.controller_self_id = "n0".into();
    c.controller_scan_inactive_master_interval_ms = 200;
    c.controller_notify_broker_role_changed = false;
    let options = ControllerOptions::from_settings(&settings).unwrap();
    let store = ControllerStore::open(&options).unwrap();
    let notifier = Notifier::start(479, NotifyLimits { max_in_flight: 1, max_per_second: 1 }, Metrics::off());
    let clock = Arc::new(SystemClock) as Arc<dyn Clock>;
    let started = (settings, options);
    let security = (PeerSecurity::default(), clock);
    let (controller, _) = Controller::start(started, store, notifier, &Arbiter::current(), Metrics::off(), security);
    let serving =
        settled(|| async { controller.ask(GetMetadata { conn: ConnId::SERVER }).await.unwrap().is_leader }).await;
    assert!(serving, "the controller never served");
    controller
}

/// Lets the runtime's other tasks run, then a millisecond of real time pass (the Raft log's
/// I/O thread works on the real clock); the virtual clock does not move: the runtime is never
/// idle.
async fn real_millisecond() {
    tokio::task::yield_now().await;
    std::thread::sleep(Duration::from_millis(1));
}

/// Waits, on the real clock and for 5 s at most, until `check` holds.
async fn settled<F: std::future::Future<Output = bool>>(mut check: impl FnMut() -> F) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        if check().await {
            return true;
        }
        real_millisecond().await;
    }
    false
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

/// The outcome of `op`, its write waited for on the real clock.
async fn submit(controller: &ControllerHandle, op: Op) -> Outcome {
    let from = Speaker { conn: ConnId(1), ..Speaker::server() };
    let mut answer = controller.ask(Submit { conn: ConnId(1), op, from }).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        if let Ok(outcome) = answer.try_recv() {
            return outcome;
        }
        real_millisecond().await;
    }
    panic!("the write was not answered");
}

/// A heartbeat of broker `id` of group g with timeout `timeout`, over the connection that
/// registered it (the test's one), handled
/// before this returns (a query sent after it is answered after it).
async fn beat(controller: &ControllerHandle, id: i64, timeout: Duration) {
    let key = LiveKey { cluster: "c".into(), name: "g".into(), id };
    let beat =
        Beat { key, addr: format!("127.0.0.1:{id}"), epoch: 0, max_offset: 0, confirm_offset: 0, timeout, priority: 0 };
    controller.tell(BrokerHeartbeat { conn: ConnId(1), beat, account: None });
    controller.ask(GetMetadata { conn: ConnId::SERVER }).await.unwrap();
}

/// Brokers 1 and 2 of group g registered, heartbeating with `timeouts`, broker 1 master and
/// both in sync.
async fn master_and_slave(controller: &ControllerHandle, timeouts: [Duration; 2]) {
    for id in [1, 2] {
        let check_code = format!("127.0.0.1:{id};1");
        let apply = Op::ApplyBrokerId { cluster: "c".into(), name: "g".into(), id, check_code };
        assert!(matches!(submit(controller, apply).await, Ok(Answer::IdApplied { .. })));
        let address = format!("127.0.0.1:{id}");
        let register = Op::Register { cluster: "c".into(), name: "g".into(), id, address };
        assert!(matches!(submit(controller, register).await, Ok(Answer::Registered { .. })));
        beat(controller, id, timeouts[id as usize - 1]).await;
    }
    let elect = Op::ElectMaster { name: "g".into(), requester: 1, designate: false };
    assert!(matches!(submit(controller, elect).await, Ok(Answer::Elected { .. })));
    let set = SyncStateSet { ids: [1, 2].into(), epoch: 1 };
    let alter = Op::AlterSyncStateSet { name: "g".into(), master_id: 1, master_epoch: 1, set };
    assert!(matches!(submit(controller, alter).await, Ok(Answer::Altered(_))));
    // The deadlines count from here: the writes above let virtual time run while they waited.
    beat(controller, 1, timeouts[0]).await;
    beat(controller, 2, timeouts[1]).await;
}

/// Group g's master, as the controller's overview shows it.
async fn master(controller: &ControllerHandle) -> Option<i64> {
    let overview = controller.ask(GetOverview { conn: ConnId::SERVER }).await.unwrap();
    overview.groups.iter().find(|g| g.broker_name == "g").and_then(|g| g.master_broker_id)
}

/// Group g's master once any election under way has committed (50 ms of real time without a
/// change, 5 s at most), the virtual clock standing still.
async fn settled_master(controller: &ControllerHandle) -> Option<i64> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let (mut seen, mut since) = (master(controller).await, std::time::Instant::now());
    while since.elapsed() < Duration::from_millis(50) && std::time::Instant::now() < deadline {
        real_millisecond().await;
        let now = master(controller).await;
        if now != seen {
            (seen, since) = (now, std::time::Instant::now());
        }
    }
    seen
}

/// Advances the paused clock by `by`, 100 ms at a time (the Raft heartbeat period: the leader's
/// lease stays fresh), broker 2 heartbeating every second meanwhile.
async fn advance_with_the_slave_beating(controller: &ControllerHandle, by: Duration, timeout: Duration) {
    let step = Duration::from_millis(100);
    let mut advanced = Duration::ZERO;
    while advanced < by {
        tokio::time::advance(step.min(by - advanced)).await;
        advanced += step.min(by - advanced);
        tokio::task::yield_now().await;
        if advanced.as_millis() % 1_000 == 0 {
            beat(controller, 2, timeout).await;
        }
    }
}

#[test]
fn a_master_silent_past_its_heartbeat_timeout_is_replaced_then_and_not_before() {
    on_paused_time(|| async {
        let controller = serving_controller().await;
        let timeout = Duration::from_secs(10);
        master_and_slave(&controller, [timeout, timeout]).await;
        // The controller started more than a timeout ago: it is warmed up when the deadline comes.
        advance_with_the_slave_beating(&controller, Duration::from_millis(9_500), timeout).await;
        assert_eq!(settled_master(&controller).await, Some(1), "9.5 s of silence: still within the 10 s timeout");
        advance_with_the_slave_beating(&controller, Duration::from_millis(1_000), timeout).await;
        assert_eq!(settled_master(&controller).await, Some(2), "10.5 s of silence: the slave took over");
    });
}

#[test]
fn a_new_leader_elects_nobody_before_its_configured_warm_up_whatever_the_brokers_ask() {
    on_paused_time(|| async {
        let controller = serving_controller().await;
        // The slave asks a day's heartbeat timeout (once, the whole warm-up: a peer set the
        // controller's clock); it is clamped, and the warm-up is the configured 10 s anyway.
        let (short, day) = (Duration::from_secs(2), Duration::from_secs(86_400));
        let started = tokio::time::Instant::now();
        master_and_slave(&controller, [short, day]).await;
        // The master's 2 s deadline passes at once; the leader, up for less than its 10 s
        // warm-up, may not have heard every broker yet and elects nobody.
        advance_with_the_slave_beating(&controller, Duration::from_millis(9_000), day).await;
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(settled_master(&controller).await, Some(1), "dead, but the leader is still warming up");
        advance_with_the_slave_beating(&controller, Duration::from_millis(1_500), day).await;
        assert_eq!(settled_master(&controller).await, Some(2), "warmed up: the next sweep elected the slave");
    });
}
