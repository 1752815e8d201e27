//! Model-based differential test: seeded random operation sequences run against the real
//! server over TCP and against an executable model of the Java NameServer's routing rules
//! (`java_model`, with the namesrv's deliberate differences as named exceptions). After every
//! step every route, topic list, cluster info, member group and live entry must agree; a
//! failing sequence is shrunk to a minimal one.
//!
//! Environment: `DIFF_CASES` (sequences, default 500), `DIFF_SEED`, and what the server is held
//! to: by default its current state (`pending::SERVER`, `pending::SERVER_EXCEPTIONS`);
//! `DIFF_EXPECT=spec` for Java plus every specified exception; `DIFF_PENDING_OFF=a,b`,
//! `DIFF_PENDING_ON=a,b` and `DIFF_EXCEPTIONS_ON=c,d` to change pending switches or add
//! exceptions by field name.
//! `scripts/differential.sh` runs a long release-mode campaign.

mod java_model;
mod model_driver;

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestError, TestRunner};

use crate::common::TestServer;
use java_model::{pending, Exceptions, Model, Pending};
use model_driver::ops::{op, Op};
use model_driver::World;

/// Sequences run and steps taken, shrinking included, for the closing summary.
static SEQUENCES: AtomicUsize = AtomicUsize::new(0);
static STEPS: AtomicUsize = AtomicUsize::new(0);

/// The NamesrvConfig switches of one run.
fn namesrv_config() -> impl Strategy<Value = java_model::Config> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(acting, order, delete)| java_model::Config {
        support_acting_master: acting,
        order_message_enable: order,
        delete_topic_with_broker_registration: delete,
    })
}

/// What the server is held to, from the environment (see the module docs).
fn expectations() -> (Pending, Exceptions) {
    if std::env::var("DIFF_EXPECT").as_deref() == Ok("spec") {
        return (Pending::NONE, Exceptions::ALL);
    }
    let (mut pending, mut exceptions) = (pending::SERVER, pending::SERVER_EXCEPTIONS);
    let names = |key: &str| std::env::var(key).unwrap_or_default();
    for (key, on) in [("DIFF_PENDING_OFF", false), ("DIFF_PENDING_ON", true)] {
        for name in names(key).split(',').filter(|n| !n.is_empty()) {
            assert!(pending.set(name, on), "{key}: no switch {name}");
        }
    }
    for name in names("DIFF_EXCEPTIONS_ON").split(',').filter(|n| !n.is_empty()) {
        assert!(exceptions.set(name), "DIFF_EXCEPTIONS_ON: no exception {name}");
    }
    (pending, exceptions)
}

/// Runs `ops` on a fresh server started with `config`; the first disagreement fails, with
/// the step and its operation on the first line and what differs after.
fn run_sequence(config: java_model::Config, ops: &[Op], expect: (Pending, Exceptions)) -> Result<(), String> {
    SEQUENCES.fetch_add(1, Ordering::Relaxed);
    let server = TestServer::with(|s| {
        s.routing.support_acting_master = config.support_acting_master;
        s.routing.order_message_enable = config.order_message_enable;
        s.routing.delete_topic_with_broker_registration = config.delete_topic_with_broker_registration;
        // Every step reads every topic list: compared, not paced.
        s.limits.costly_requests_per_second_per_peer = 0;
    });
    let model = Model { pending: expect.0, ..Model::new(config, expect.1) };
    let mut world = World::new(&server, model);
    world.observe().map_err(|e| format!("before any step\n  {e}"))?;
    for (i, op) in ops.iter().enumerate() {
        STEPS.fetch_add(1, Ordering::Relaxed);
        world.step(op).map_err(|e| format!("step {i}: {op:?}\n  {e}"))?;
    }
    Ok(())
}

/// What a failure is about: the query or answer that differed, without the step.
fn failure_kind(reason: &str) -> &str {
    reason.lines().nth(1).and_then(|l| l.split(':').next()).unwrap_or(reason)
}

/// Greedily drops steps while the same kind of failure remains (proptest's shrinking does not
/// retry deletions after shrinking the steps themselves).
fn minimize(
    config: java_model::Config,
    mut ops: Vec<Op>,
    expect: (Pending, Exceptions),
    reason: String,
) -> (Vec<Op>, String) {
    let mut reason = reason;
    let mut i = 0;
    while i < ops.len() {
        let mut fewer = ops.clone();
        fewer.remove(i);
        match run_sequence(config, &fewer, expect) {
            Err(r) if failure_kind(&r) == failure_kind(&reason) => (ops, reason) = (fewer, r),
            _ => i += 1,
        }
    }
    (ops, reason)
}

/// A number from the environment, or `default`.
fn env_number(key: &str, default: u64) -> u64 {
    std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn server_answers_every_step_as_the_java_model_does() {
    let cases = env_number("DIFF_CASES", 500) as u32;
    let expect = expectations();
    let seed = env_number("DIFF_SEED", 0x6469_6666_7465_7374);
    let config = Config {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 2048,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let sequences = (namesrv_config(), vec(op(&expect.0), 1..25));
    let outcome = runner.run(&sequences, |(setup, ops)| run_sequence(setup, &ops, expect).map_err(TestCaseError::fail));
    let (run, steps) = (SEQUENCES.load(Ordering::Relaxed), STEPS.load(Ordering::Relaxed));
    println!("differential: seed {seed:#x}, {cases} cases, {run} sequences run, {steps} steps, held to {expect:?}");
    match outcome {
        Ok(()) => {}
        Err(TestError::Fail(reason, (setup, ops))) => {
            let (ops, reason) = minimize(setup, ops, expect, reason.message().to_owned());
            let steps: Vec<String> = ops.iter().enumerate().map(|(i, op)| format!("  {i}: {op:?}")).collect();
            panic!("divergence: {reason}\nminimal sequence, with {setup:?}:\n{}", steps.join("\n"));
        }
        Err(abort) => panic!("{abort}"),
    }
}
