//! `--check-config`: what start-up would check, without serving: the listen address resolves
//! and it and the HTTP address can be bound (both are bound and released at once; in use by the
//! namesrv that holds this state directory counts as fine; `--no-bind` skips binding),
//! the directories of the state files are writable, the KV file loads, and, when they are on,
//! the accounts file and the TLS certificate and key load. (The settings are already loaded
//! and validated by then.)

use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::acl::accounts::{Accounts, AccountsError};
use crate::kv::{self, KvError};
use crate::listen;
use crate::observe;
use crate::secret_file::open_to_others;
use crate::settings::{Settings, TlsMode};
use crate::statelock::{is_unwritable, StateLock};
use crate::tls::{server_config, TlsError, TlsFiles};

/// A check that failed.
#[derive(Debug, Error)]
pub enum PreflightError {
    /// `bind_address` names no address.
    #[error("listen address {addr} does not resolve: {error}")]
    Resolve { addr: String, error: io::Error },
    /// The remoting address cannot be bound (in use, or not an address of this host).
    #[error("listen address {addr}: {error}")]
    Listen { addr: String, error: io::Error },
    /// The HTTP endpoint's address cannot be bound.
    #[error("http_listen {addr}: {error}")]
    Http { addr: String, error: io::Error },
    /// A state file's directory cannot be created or written.
    #[error("state directory {dir} is not writable (for {key}): {error}")]
    NotWritable { key: &'static str, dir: PathBuf, error: io::Error },
    /// The KV file exists and does not load.
    #[error(transparent)]
    Kv(#[from] KvError),
    /// Access control is on and the accounts file does not load.
    #[error(transparent)]
    Accounts(#[from] AccountsError),
    /// TLS is on and the certificate, key or client CA does not load.
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// Runs every check; returns one line per thing checked, for the operator. With `bind` false
/// (`--no-bind`) the addresses are resolved and not bound.
pub fn check(settings: &Settings, bind: bool) -> Result<Vec<String>, PreflightError> {
    let shown = format!("{}:{}", settings.listen.bind_address, settings.listen.listen_port);
    let addrs = settings.listen_addrs().map_err(|error| PreflightError::Resolve { addr: shown.clone(), error })?;
    let mut report = if bind {
        let holder = StateLock::holder(Path::new(&settings.state.kv_config_path));
        try_binds(settings, &shown, addrs, holder.as_deref())?
    } else {
        let listed: Vec<String> = addrs.iter().map(ToString::to_string).collect();
        vec![format!("listen address {shown}: {}, not bound (--no-bind)", listed.join(", "))]
    };
    for (key, file) in
        [("kv_config_path", &settings.state.kv_config_path), ("config_store_path", &settings.state.config_store_path)]
    {
        match writable_dir(Path::new(file)) {
            Ok(dir) => report.push(format!("{key} {file}: directory {} writable", dir.display())),
            // Start-up goes on (routes need no disk); the writes fail and are counted.
            Err((dir, error)) if is_unwritable(&error) => report.push(format!(
                "warning: {key} {file}: directory {} is not writable ({error}): the server starts and serves routes, and KV and config changes are refused until it is",
                dir.display()
            )),
            Err((dir, error)) => return Err(PreflightError::NotWritable { key, dir, error }),
        }
    }
    report.extend(open_http(settings));
    let table = kv::load(Path::new(&settings.state.kv_config_path), settings.limits.kv_max_store_bytes)?;
    report.push(format!("kv config {}: {} namespaces", settings.state.kv_config_path, table.len()));
    if settings.acl.acl_enabled {
        let accounts = Accounts::load(Path::new(&settings.acl.acl_accounts_file))?;
        report.push(format!("accounts file {}: {} accounts", settings.acl.acl_accounts_file, accounts.len()));
        report.extend(open_secret(&settings.acl.acl_accounts_file, "accounts file"));
    }
    if settings.tls.tls_mode != TlsMode::Disabled {
        server_config(&TlsFiles::from_settings(settings))?;
        report.push(format!(
            "TLS ({}): certificate {} and its key load",
            settings.tls.tls_mode, settings.tls.tls_cert_file
        ));
        report.extend(open_secret(&settings.tls.tls_key_file, "TLS private key file"));
    }
    Ok(report)
}

/// Binds the remoting address and then the HTTP address as start-up does, holding the first
/// while binding the second (so the two cannot be the same port), and releases both. An
/// address in use passes while `holder` (the pid of the namesrv that holds this state
/// directory's lock) runs: it is the server being checked, and a reload keeps its listeners, so
/// `namesrv --check-config && systemctl reload namesrv` works. In use with no holder fails.
fn try_binds(
    settings: &Settings,
    shown: &str,
    addrs: Vec<std::net::SocketAddr>,
    holder: Option<&str>,
) -> Result<Vec<String>, PreflightError> {
    let listed: Vec<String> = addrs.iter().map(ToString::to_string).collect();
    let held = |what: String, pid: &str| {
        format!(
            "{what}: held by the running namesrv (pid {pid}) that holds this state; not re-bound (a reload keeps it)"
        )
    };
    let mut report = Vec::new();
    let remoting = match (listen::bind_addrs(shown, addrs), holder) {
        (Ok(bound), _) => {
            report.push(format!("listen address {shown}: {}, free", listed.join(", ")));
            Some(bound)
        }
        (Err(e), Some(pid)) if e.kind() == io::ErrorKind::AddrInUse => {
            report.push(held(format!("listen address {shown}"), pid));
            None
        }
        (Err(error), _) => return Err(PreflightError::Listen { addr: shown.to_owned(), error }),
    };
    let http = settings.observe.http_listen.trim();
    if http.is_empty() {
        report.push("http endpoint: off (http_listen is empty)".to_owned());
    } else {
        match (listen::bind_host_port(http), holder) {
            (Ok(bound), _) => {
                report.push(format!("http endpoint {http}: free"));
                drop(bound);
            }
            (Err(e), Some(pid)) if e.kind() == io::ErrorKind::AddrInUse => {
                report.push(held(format!("http endpoint {http}"), pid));
            }
            (Err(error), _) => return Err(PreflightError::Http { addr: http.to_owned(), error }),
        }
    }
    drop(remoting);
    Ok(report)
}

/// Creates the file's directory, as the first write would, and writes a probe file in it.
fn writable_dir(file: &Path) -> Result<PathBuf, (PathBuf, io::Error)> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
    let probe = dir.join(format!(".namesrv-check-{}", std::process::id()));
    let result = std::fs::create_dir_all(&dir)
        .and_then(|()| OpenOptions::new().write(true).create_new(true).open(&probe))
        .and_then(|_| std::fs::remove_file(&probe));
    result.map(|()| dir.clone()).map_err(|e| (dir, e))
}

/// `--check-config`'s line for [`observe::open_http_warning`], for each address `http_listen`
/// resolves to.
fn open_http(settings: &Settings) -> Option<String> {
    use std::net::ToSocketAddrs;
    let http = settings.observe.http_listen.trim();
    let addrs = http.to_socket_addrs().ok()?;
    let warning = addrs.into_iter().find_map(|a| observe::open_http_warning(settings, a.ip()))?;
    Some(format!("warning: http endpoint {http}: {warning} (readable: {})", observe::READABLE_WITHOUT_CREDENTIALS))
}

/// `--check-config`'s warning line for a file holding secrets that others may read.
fn open_secret(path: &str, what: &str) -> Option<String> {
    let mode = open_to_others(Path::new(path))?;
    Some(format!("warning: {what} {path} is readable by group or others (mode {mode:o}): chmod 600 it"))
}
