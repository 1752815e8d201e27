//! AFL++ entry point, one target per process: `cargo afl fuzz ... -- namesrv-afl <target>`.
//! Built only with `--features afl` under `cargo afl build` (scripts/fuzz.sh), which links the
//! AFL++ runtime; a panic aborts the process, which AFL++ records as a crash.
#![forbid(unsafe_code)]

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let Some(target) = namesrv_fuzz::find(&name) else {
        let names: Vec<&str> = namesrv_fuzz::TARGETS.iter().map(|t| t.name).collect();
        eprintln!("usage: namesrv-afl <target>; targets: {}", names.join(" "));
        std::process::exit(2);
    };
    let run = target.run;
    afl::fuzz!(|data: &[u8]| {
        run(data);
    });
}
