//! The `namesrv` binary: command line, logging, settings, then serve until Ctrl-C / SIGTERM,
//! reloading the configuration on SIGHUP.
#![forbid(unsafe_code)]

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tokio::sync::mpsc;
use tracing::{error, info, warn};
use tracing_subscriber::filter::ParseError;
use tracing_subscriber::prelude::*;
use tracing_subscriber::{reload, EnvFilter, Registry};

use namesrv::health::{self, HealthArgs};
use namesrv::settings::addr::{split_host_port, AddrError};
use namesrv::settings::sources::{DEFAULTS_FILE_NAME, DEFAULT_CONFIG_DIR, ENV_PREFIX};
use namesrv::settings::{ConfigFormat, LogFormat, PrintFormat, Settings, SettingsError, Sources};
use namesrv::statelock::take_locks;
use namesrv::{preflight, server};

/// A wire-compatible Apache RocketMQ NameServer.
#[derive(Parser, Debug)]
#[command(version = namesrv::metrics::build::LONG_VERSION, about, args_override_self = true)]
struct Cli {
    /// Config file, TOML or Java properties (a Java NameServer's namesrv.conf as it is).
    #[arg(short = 'c', long = "config", alias = "configFile")]
    config: Option<PathBuf>,
    /// How to read the -c file; auto: by extension (.toml, .properties), else by content.
    #[arg(long, value_name = "auto|toml|properties", default_value = "auto")]
    config_format: ConfigFormat,
    /// Directory of the defaults file, default.toml (read when present; never the working directory).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_CONFIG_DIR)]
    config_dir: PathBuf,
    /// Print the effective configuration and exit.
    #[arg(short = 'p', long = "print-config", alias = "printConfigItem")]
    print_config: bool,
    /// Java's `mqnamesrv -n`: accepted and unused there, accepted and ignored here.
    #[arg(short = 'n', long = "namesrvAddr", hide = true)]
    namesrv_addr: Option<String>,
    /// Format of -p: toml (our keys), or properties (Java's names, to diff with a Java NameServer's -p).
    #[arg(long, value_name = "toml|properties", default_value = "toml", requires = "print_config")]
    format: PrintFormat,
    /// Load and check everything (settings, listen and HTTP addresses free, state directory, KV file), then exit 0 or 1.
    #[arg(long)]
    check_config: bool,
    /// With --check-config: resolve the listen and HTTP addresses without binding them.
    #[arg(long, requires = "check_config")]
    no_bind: bool,
    /// Write the whole KV store (kvConfig.json with its journal folded in) to FILE (`-`: stdout)
    /// as Java's kvConfig.json, then exit. Safe while a server runs on the same state directory.
    #[arg(long, value_name = "FILE")]
    export_kv: Option<PathBuf>,
    /// Listen address, e.g. 127.0.0.1:9876, [::]:9876, [::1]:9876.
    #[arg(long)]
    listen: Option<String>,
    /// Broker expiry scan period in ms.
    #[arg(long)]
    scan_interval_ms: Option<u64>,
    /// Any setting, as KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Instead of serving: `healthcheck`.
    #[command(subcommand)]
    command: Option<Sub>,
}

/// What namesrv does instead of serving.
#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// Asks a running namesrv whether it serves (the image's HEALTHCHECK): exit 0 healthy, 1 not.
    Healthcheck(HealthArgs),
}

/// Why the command line or the settings it names cannot be used.
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// `--listen` is no address.
    #[error("--listen: {0}")]
    Listen(#[source] AddrError),
    /// A `--set` without `=`.
    #[error("--set needs KEY=VALUE, got {0}")]
    Set(String),
    /// The settings do not load (boxed: the error is large and this path is cold).
    #[error(transparent)]
    Settings(Box<SettingsError>),
}

impl From<SettingsError> for CliError {
    fn from(error: SettingsError) -> Self {
        CliError::Settings(Box::new(error))
    }
}

impl Cli {
    /// The flags as setting overrides, in order.
    fn overrides(&self) -> Result<Vec<(String, String)>, CliError> {
        let mut out = Vec::new();
        if let Some(listen) = &self.listen {
            let (host, port) = split_host_port(listen).map_err(CliError::Listen)?;
            out.push(("bind_address".into(), host));
            out.push(("listen_port".into(), port.to_string()));
        }
        if let Some(ms) = self.scan_interval_ms {
            out.push(("scan_interval_ms".into(), ms.to_string()));
        }
        for kv in &self.set {
            let (k, v) = kv.split_once('=').ok_or_else(|| CliError::Set(kv.clone()))?;
            out.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        Ok(out)
    }

    /// Where the settings come from.
    fn sources(&self) -> Result<Sources, CliError> {
        Ok(Sources {
            defaults_file: Some(self.config_dir.join(DEFAULTS_FILE_NAME)),
            config_file: self.config.clone(),
            config_format: self.config_format,
            env_prefix: ENV_PREFIX.to_owned(),
            overrides: self.overrides()?,
        })
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Sub::Healthcheck(args)) = &cli.command {
        return health_check(&cli, args);
    }
    let log_filter = init_logging(&cli);
    if let Some(addr) = &cli.namesrv_addr {
        warn!(namesrv_addr = %addr, "ignoring -n: Java's NamesrvStartup accepts it and does not use it either");
    }
    let loaded = cli.sources().and_then(|sources| Ok((sources.load()?, sources)));
    let (settings, sources) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            error!(error = %e, "cannot load settings");
            return ExitCode::from(if cli.check_config { 1 } else { 2 });
        }
    };
    if cli.print_config {
        match cli.format {
            PrintFormat::Toml => print!("{}", settings.to_toml_lines()),
            PrintFormat::Properties => print!("{}", settings.to_properties_lines()),
        }
        return ExitCode::SUCCESS;
    }
    if cli.check_config {
        return check_config(&settings, &sources, !cli.no_bind);
    }
    if let Some(out) = &cli.export_kv {
        return export_kv(&settings, out);
    }
    log_start(&settings, &sources);
    run(settings, sources, log_filter)
}

/// The start line: what an operator checks first, as fields (not a dump of every setting, which
/// goes to DEBUG as the `-p` lines).
fn log_start(settings: &Settings, sources: &Sources) {
    let (listen, routing, state) = (&settings.listen, &settings.routing, &settings.state);
    let config_file = sources.config_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    info!(
        version = env!("CARGO_PKG_VERSION"),
        commit = namesrv::metrics::build::COMMIT,
        listen = %format!("{}:{}", listen.bind_address, listen.listen_port),
        http_listen = %settings.observe.http_listen,
        config_file = %config_file,
        config_format = %sources.config_format,
        kv_config_path = %state.kv_config_path,
        config_store_path = %state.config_store_path,
        warm_restart = routing.warm_restart,
        need_wait_for_service = routing.need_wait_for_service,
        broker_timeout_ms = routing.broker_timeout_ms,
        acl_enabled = settings.acl.acl_enabled,
        acl_protect = %settings.acl.acl_protect,
        tls_mode = %settings.tls.tls_mode,
        io_threads = listen.io_threads,
        "starting namesrv"
    );
    tracing::debug!(settings = %settings.to_toml_lines(), "effective settings");
}

/// The handle SIGHUP changes the log filter through.
type FilterHandle = reload::Handle<EnvFilter, Registry>;

/// Logs to stderr, filtered as [`log_filter`] says, as text or JSON lines as the `log_format`
/// setting says. The settings are read once quietly first to learn them; their warnings are
/// logged when they are read for real.
fn init_logging(cli: &Cli) -> FilterHandle {
    let settings = quietly(|| cli.sources().ok().and_then(|s| s.load().ok()));
    let format = settings.as_ref().map_or(LogFormat::Text, |s| s.observe.log_format);
    let (wanted, invalid) = match log_filter(settings.as_ref().map_or("", |s| s.observe.log_filter.as_str())) {
        Ok(filter) => (filter, None),
        Err(error) => (EnvFilter::new("info"), Some(error)),
    };
    let (filter, handle) = reload::Layer::new(wanted);
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry().with(filter);
    match format {
        LogFormat::Json => {
            registry.with(layer.json().flatten_event(true).with_current_span(true).with_span_list(false)).init()
        }
        LogFormat::Text => registry.with(layer.with_ansi(std::io::stderr().is_terminal())).init(),
    }
    if let Some(error) = invalid {
        warn!(%error, "invalid log_filter; logging at info");
    }
    handle
}

/// `f` with logging off (the settings are read quietly to learn how to log).
fn quietly<T>(f: impl FnOnce() -> T) -> T {
    tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), f)
}

/// The log filter: the `log_filter` setting when set, else `RUST_LOG`, else `info`.
fn log_filter(setting: &str) -> Result<EnvFilter, ParseError> {
    match setting.trim() {
        "" => Ok(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"))),
        directives => EnvFilter::try_new(directives),
    }
}

/// SIGHUP: the log filter from the settings read again (quietly: the config reload that follows
/// logs what they say); a filter that does not parse leaves the current one.
fn reload_log_filter(sources: &Sources, handle: &FilterHandle) {
    let Some(settings) = quietly(|| sources.load().ok()) else { return };
    match log_filter(&settings.observe.log_filter) {
        Ok(filter) => {
            let (old, new) = (handle.with_current(|f| f.to_string()).unwrap_or_default(), filter.to_string());
            if old != new && handle.reload(filter).is_ok() {
                info!(old = %old, new = %new, "log filter changed");
            }
        }
        Err(error) => warn!(%error, "invalid log_filter; the log filter is unchanged"),
    }
}

/// `--check-config`: exit 0 when everything start-up checks passes, 1 otherwise; it also says
/// which keys runtime updates still set over the config files.
fn check_config(settings: &Settings, sources: &Sources, bind: bool) -> ExitCode {
    let overrides = match sources.runtime_overrides(settings) {
        Ok(found) => found.map(|o| o.describe()).unwrap_or_default(),
        Err(e) => vec![format!("runtime updates: {e}")],
    };
    match preflight::check(settings, bind) {
        Ok(report) => {
            for line in report.into_iter().chain(overrides) {
                println!("{line}");
            }
            println!("configuration OK");
            ExitCode::SUCCESS
        }
        Err(e) => {
            error!(error = %e, "configuration check failed");
            ExitCode::FAILURE
        }
    }
}

/// `healthcheck`: one line on stdout when healthy (exit 0), on stderr when not (exit 1).
fn health_check(cli: &Cli, args: &HealthArgs) -> ExitCode {
    let settings = || cli.sources().and_then(|s| Ok(s.load()?));
    match args.probe(settings).and_then(|probe| health::check(&probe, args.timeout())) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("unhealthy: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--export-kv FILE`: the KV store as of its last acknowledged change, as one kvConfig.json.
fn export_kv(settings: &Settings, out: &std::path::Path) -> ExitCode {
    let path = std::path::Path::new(&settings.state.kv_config_path);
    let written = namesrv::kv::export(path, settings.limits.kv_max_store_bytes).and_then(|json| {
        let result = match out.to_str() {
            Some("-") => std::io::Write::write_all(&mut std::io::stdout(), &json),
            _ => std::fs::write(out, &json),
        };
        result.map_err(|error| namesrv::kv::KvError::Write { path: out.to_owned(), error })
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!(error = %e, "cannot export the kv store");
            ExitCode::FAILURE
        }
    }
}

/// Serves until Ctrl-C or SIGTERM; SIGHUP reloads.
fn run(settings: Settings, sources: Sources, log_filter: FilterHandle) -> ExitCode {
    let (lock, store_lock) = match take_locks(&settings) {
        Ok(locks) => locks,
        Err(e) => {
            error!(error = %e, "cannot start");
            return ExitCode::FAILURE;
        }
    };
    sweep_temp_files(&settings);
    let system = actix::System::new();
    let result = system.block_on(async move {
        let (tx, requests) = mpsc::channel(1);
        reload_on_sighup(tx, sources.clone(), log_filter);
        survive_file_size_limit();
        let reload = server::Reload { sources, requests };
        server::load_bind_serve(settings, shutdown_signal(), Some(reload)).await
    });
    drop(store_lock);
    drop(lock);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!(error = %e, "namesrv failed");
            ExitCode::FAILURE
        }
    }
}

/// Removes what writes that never finished left beside the state files (before anything
/// writes them).
fn sweep_temp_files(settings: &Settings) {
    let files = [
        PathBuf::from(&settings.state.kv_config_path),
        PathBuf::from(&settings.state.config_store_path),
        namesrv::warm::file::path_for(settings),
    ];
    for removed in namesrv::persist::sweep_temp_files(files.iter().map(PathBuf::as_path)) {
        warn!(path = %removed.display(), "removed a temp file an unfinished write left");
    }
}

/// Handles SIGXFSZ instead of its default action (ending the process): a write past a
/// file-size limit (`RLIMIT_FSIZE`) then fails with EFBIG, and that write is refused as any
/// failed write is, the server going on.
fn survive_file_size_limit() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::from_raw(libc::SIGXFSZ)) {
            Ok(mut signals) => {
                tokio::spawn(async move {
                    while signals.recv().await.is_some() {
                        warn!("a write passed the file-size limit (SIGXFSZ); it failed and was refused");
                    }
                });
            }
            Err(error) => warn!(%error, "SIGXFSZ not handled: a write past a file-size limit ends the process"),
        }
    }
}

/// Sends one reload request per SIGHUP (instead of the default action, which ends the
/// process), after applying the log filter the settings now name; requests arriving while one
/// is pending fold into it. The handler is installed before this returns, so a SIGHUP after the
/// `listening` line never kills the process.
fn reload_on_sighup(tx: mpsc::Sender<()>, sources: Sources, log_filter: FilterHandle) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hup = match signal(SignalKind::hangup()) {
            Ok(hup) => hup,
            Err(e) => return error!(error = %e, "cannot handle SIGHUP: reload by signal is off"),
        };
        actix::spawn(async move {
            while hup.recv().await.is_some() {
                reload_log_filter(&sources, &log_filter);
                let _ = tx.try_send(());
            }
        });
    }
    #[cfg(not(unix))]
    drop((tx, sources, log_filter));
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
