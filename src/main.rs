//! The `namesrv` binary: command line, logging, settings, then serve until Ctrl-C / SIGTERM.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tracing::{error, info};
use tracing_subscriber::EnvFilter;

use namesrv::server;
use namesrv::settings::{Settings, DEFAULT_CONFIG_FILE};

/// A wire-compatible Apache RocketMQ NameServer.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// Config file (TOML) applied over config/default.toml.
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// Print the effective configuration and exit.
    #[arg(short = 'p', long = "print-config")]
    print_config: bool,
    /// Listen address, e.g. 127.0.0.1:9876.
    #[arg(long)]
    listen: Option<String>,
    /// Broker expiry scan period in ms.
    #[arg(long)]
    scan_interval_ms: Option<u64>,
    /// Any setting, as KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

impl Cli {
    /// The flags as setting overrides, in order.
    fn overrides(&self) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        if let Some(listen) = &self.listen {
            let (host, port) = listen.rsplit_once(':').ok_or(format!("--listen needs HOST:PORT, got {listen}"))?;
            out.push(("bind_address".into(), host.trim_matches(['[', ']']).to_owned()));
            out.push(("listen_port".into(), port.to_owned()));
        }
        if let Some(ms) = self.scan_interval_ms {
            out.push(("scan_interval_ms".into(), ms.to_string()));
        }
        for kv in &self.set {
            let (k, v) = kv.split_once('=').ok_or(format!("--set needs KEY=VALUE, got {kv}"))?;
            out.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        Ok(out)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let settings = match cli.overrides().map_err(|e| e.to_string()).and_then(|o| {
        Settings::load(Some(DEFAULT_CONFIG_FILE.as_ref()), cli.config.as_deref(), "NAMESRV", &o)
            .map_err(|e| e.to_string())
    }) {
        Ok(s) => s,
        Err(e) => {
            error!(error = %e, "cannot load settings");
            return ExitCode::from(2);
        }
    };
    if cli.print_config {
        print!("{}", settings.to_toml_lines());
        return ExitCode::SUCCESS;
    }
    info!(settings = ?settings, "starting namesrv {}", env!("CARGO_PKG_VERSION"));
    let system = actix::System::new();
    let result = system.block_on(async move {
        let listener = server::bind(&settings).map_err(server::ServeError::from)?;
        server::serve(settings, listener, shutdown_signal()).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!(error = %e, "namesrv failed");
            ExitCode::FAILURE
        }
    }
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
