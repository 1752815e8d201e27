//! The fuzz smoke CI runs: every target replays its committed corpus, then runs seeded mutations
//! of it for a time budget, in-process on stable Rust with no fuzzing runtime. A panic, or an
//! input slower than the hang limit, fails the target; the input is saved and printed in hex.
//!
//! Usage: fuzz-smoke [--seconds N per target] [--seed S] [--corpus DIR] [--crashes DIR] [TARGET...]
#![forbid(unsafe_code)]

use std::num::{ParseFloatError, ParseIntError};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use std::{fs, io, process};

use namesrv_fuzz::mutate::{mutate, Rng};
use namesrv_fuzz::{Target, TARGETS};

/// An input slower than this twice in a row counts as a hang (AFL's default timeout is 1 s; the
/// second run keeps a busy machine from failing the smoke).
const HANG: Duration = Duration::from_secs(1);

struct Options {
    seconds: f64,
    seed: u64,
    corpus: PathBuf,
    crashes: PathBuf,
    targets: Vec<&'static Target>,
}

/// Why the command line cannot be used.
#[derive(Debug, thiserror::Error)]
enum ArgError {
    #[error("{0} needs a value")]
    Missing(String),
    #[error("--seconds: {0}")]
    Seconds(ParseFloatError),
    #[error("--seed: {0}")]
    Seed(ParseIntError),
    #[error("unknown target {0}")]
    UnknownTarget(String),
}

/// Why one input failed.
#[derive(Debug, thiserror::Error)]
enum Failure {
    /// It panicked, with this message.
    #[error("{0}")]
    Panic(String),
    /// It ran past [`HANG`] twice in a row.
    #[error("hang: {first_ms} ms, then {second_ms} ms")]
    Hang { first_ms: u128, second_ms: u128 },
}

/// Why a target failed the smoke.
#[derive(Debug, thiserror::Error)]
enum SmokeError {
    #[error("corpus: {0}")]
    Corpus(io::Error),
    #[error("empty corpus")]
    EmptyCorpus,
    /// An input failed; `saved` says where it was saved (or why not), `hex` its first bytes.
    #[error("{failure}\n  input ({len} bytes, {saved}): {hex}")]
    Input { failure: Failure, len: usize, saved: String, hex: String },
}

fn parse_args() -> Result<Options, ArgError> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut options = Options {
        seconds: 10.0,
        seed: 1,
        corpus: root.join("corpus"),
        crashes: PathBuf::from("fuzz-crashes"),
        targets: vec![],
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| ArgError::Missing(arg.clone()));
        match arg.as_str() {
            "--seconds" => options.seconds = value()?.parse().map_err(ArgError::Seconds)?,
            "--seed" => options.seed = value()?.parse().map_err(ArgError::Seed)?,
            "--corpus" => options.corpus = value()?.into(),
            "--crashes" => options.crashes = value()?.into(),
            name => {
                options.targets.push(namesrv_fuzz::find(name).ok_or_else(|| ArgError::UnknownTarget(name.to_owned()))?)
            }
        }
    }
    if options.targets.is_empty() {
        options.targets = TARGETS.iter().collect();
    }
    Ok(options)
}

/// The files of a target's corpus, sorted by name.
fn load_corpus(dir: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    let mut paths: Vec<PathBuf> =
        fs::read_dir(dir)?.filter_map(|e| Some(e.ok()?.path())).filter(|p| p.is_file()).collect();
    paths.sort();
    paths.iter().map(fs::read).collect()
}

/// Runs one input; `Err` carries the panic message or the hang.
fn run_one(target: &Target, data: &[u8]) -> Result<Duration, Failure> {
    let timed = || {
        let start = Instant::now();
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(data)));
        outcome.map(|()| start.elapsed()).map_err(|payload| {
            let message = payload.downcast_ref::<String>().cloned();
            Failure::Panic(
                message
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "panic".into()),
            )
        })
    };
    let first = timed()?;
    if first <= HANG {
        return Ok(first);
    }
    let second = timed()?;
    if second <= HANG {
        Ok(second)
    } else {
        Err(Failure::Hang { first_ms: first.as_millis(), second_ms: second.as_millis() })
    }
}

struct Report {
    corpus: usize,
    execs: u64,
    slowest: Duration,
    elapsed: Duration,
}

/// Replays the corpus, then mutates it until the budget is spent; `Err` is the first failure.
fn smoke(target: &Target, options: &Options) -> Result<Report, SmokeError> {
    let corpus = load_corpus(&options.corpus.join(target.name)).map_err(SmokeError::Corpus)?;
    if corpus.is_empty() {
        return Err(SmokeError::EmptyCorpus);
    }
    let start = Instant::now();
    let budget = Duration::from_secs_f64(options.seconds);
    let mut rng = Rng::new(options.seed);
    let mut report = Report { corpus: corpus.len(), execs: 0, slowest: Duration::ZERO, elapsed: Duration::ZERO };
    let exec = |data: &[u8], report: &mut Report| {
        report.execs += 1;
        let took = run_one(target, data).map_err(|failure| save_failure(target, data, failure, options))?;
        report.slowest = report.slowest.max(took);
        Ok::<(), SmokeError>(())
    };
    for input in &corpus {
        exec(input, &mut report)?;
    }
    while start.elapsed() < budget {
        let input = &corpus[rng.below(corpus.len())];
        let other = &corpus[rng.below(corpus.len())];
        exec(&mutate(input, other, &mut rng), &mut report)?;
    }
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Saves a failing input under the crashes folder and describes it, hex included.
fn save_failure(target: &Target, data: &[u8], failure: Failure, options: &Options) -> SmokeError {
    let path = options.crashes.join(format!("{}-{:016x}", target.name, fingerprint(data)));
    let saved = fs::create_dir_all(&options.crashes).and_then(|()| fs::write(&path, data));
    let hex: String = data.iter().take(512).map(|b| format!("{b:02x}")).collect();
    let saved = saved.map_or_else(|e| format!("not saved: {e}"), |()| format!("saved as {}", path.display()));
    SmokeError::Input { failure, len: data.len(), saved, hex }
}

fn fingerprint(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3))
}

fn main() {
    let options = parse_args().unwrap_or_else(|e| {
        eprintln!("fuzz-smoke: {e}");
        process::exit(2);
    });
    // Panics are expected to be caught and reported with their input; keep the hook's line short.
    panic::set_hook(Box::new(|info| eprintln!("panic: {info}")));
    let (mut passed, mut failed) = (0, 0);
    for target in &options.targets {
        match smoke(target, &options) {
            Ok(r) => {
                passed += 1;
                let rate = r.execs as f64 / r.elapsed.as_secs_f64().max(1e-9);
                println!(
                    "{}: {} corpus inputs, {} executions in {:.1} s ({:.0}/s), slowest {:.2} ms, 0 crashes",
                    target.name,
                    r.corpus,
                    r.execs,
                    r.elapsed.as_secs_f64(),
                    rate,
                    r.slowest.as_secs_f64() * 1e3
                );
            }
            Err(e) => {
                failed += 1;
                println!("{}: FAILED: {e}", target.name);
            }
        }
    }
    println!("smoke: {passed} passed, {failed} failed");
    if failed > 0 {
        process::exit(1);
    }
}
