//! `namesrv healthcheck`: a probe for an image with no shell (a container HEALTHCHECK, an exec
//! probe): asks a running namesrv whether it serves, within a short timeout; exit 0 healthy, 1
//! not.
//!
//! `--addr HOST:PORT` sends a route query to the remoting port: any answer (even "no such topic")
//! means the listener, a connection actor, dispatch and the registry actor all work. `--http
//! HOST:PORT` fetches `/livez` instead (200: the registry makes progress). Without either, the
//! settings (the server's layers: `-c`, the defaults file, `NAMESRV_` variables) say where: the
//! HTTP endpoint's `/livez` when it is on, else the remoting port; a wildcard host (`0.0.0.0`,
//! `::`) is asked on loopback.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use clap::Args;
use namesrv_client::blocking::BlockingConn;
use namesrv_client::{ClientError, ConnectOptions};
use thiserror::Error;

use crate::protocol::{ExtFields, RemotingCommand, RequestCode};
use crate::settings::addr::{join_host_port, split_host_port, unbracket, AddrError};
use crate::settings::Settings;

/// The topic the remoting probe asks the route of; whether it exists does not matter.
const PROBE_TOPIC: &str = "namesrv-healthcheck";

/// Most of an HTTP answer read: the status line is all that is looked at.
const MAX_HTTP_HEAD: usize = 4096;

/// Options of `namesrv healthcheck`.
#[derive(Debug, Clone, Args)]
pub struct HealthArgs {
    /// Ask the remoting port at HOST:PORT (a route query; any answer is healthy).
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "http")]
    pub addr: Option<String>,
    /// Fetch /livez from the HTTP endpoint at HOST:PORT (200 is healthy).
    #[arg(long, value_name = "HOST:PORT")]
    pub http: Option<String>,
    /// Give up after this many milliseconds, for the connect and again for the answer.
    #[arg(long = "timeout-ms", default_value_t = 2000)]
    pub timeout_ms: u64,
}

/// What is asked, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// A route query over the remoting port.
    Remoting(String),
    /// `GET /livez` on the HTTP endpoint.
    Livez(String),
}

/// Why the server is taken for unhealthy (or cannot be asked).
#[derive(Debug, Error)]
pub enum HealthError {
    /// The settings do not load, so they cannot say where the server is.
    #[error("no address given and the settings do not load: {0}")]
    Settings(Box<dyn std::error::Error + Send + Sync>),
    /// The settings' address is no `host:port`.
    #[error("cannot probe {addr:?}: {source}")]
    Address {
        /// The address.
        addr: String,
        /// What is wrong with it.
        source: AddrError,
    },
    /// The settings' port is 0: picked at start, unknown here.
    #[error("cannot probe {addr:?}: port 0 is picked at start: give --addr or --http")]
    PortZero {
        /// The address.
        addr: String,
    },
    /// The remoting port did not answer the route query.
    #[error("{addr}: {source}")]
    Remoting {
        /// The address asked.
        addr: String,
        /// What went wrong.
        source: ClientError,
    },
    /// The HTTP endpoint could not be reached or read.
    #[error("{addr}: {source}")]
    Http {
        /// The address asked.
        addr: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The HTTP endpoint answered `/livez` with something other than 200.
    #[error("{addr}: /livez answered {status:?}")]
    Failing {
        /// The address asked.
        addr: String,
        /// The status line.
        status: String,
    },
}

impl HealthArgs {
    /// The probe the flags ask for, else the one `settings` call for.
    pub fn probe<E>(&self, settings: impl FnOnce() -> Result<Settings, E>) -> Result<Probe, HealthError>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        if let Some(addr) = &self.addr {
            return Ok(Probe::Remoting(addr.clone()));
        }
        if let Some(addr) = &self.http {
            return Ok(Probe::Livez(addr.clone()));
        }
        let settings = settings().map_err(|e| HealthError::Settings(Box::new(e)))?;
        let http = settings.observe.http_listen.trim();
        if !http.is_empty() {
            return Ok(Probe::Livez(loopback(http)?));
        }
        let listen = join_host_port(&settings.listen.bind_address, settings.listen.listen_port);
        Ok(Probe::Remoting(loopback(&listen)?))
    }

    /// The timeout of each step.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.max(1))
    }
}

/// `addr` with a wildcard host replaced by loopback; port 0 cannot be probed.
fn loopback(addr: &str) -> Result<String, HealthError> {
    let (host, port) =
        split_host_port(addr).map_err(|source| HealthError::Address { addr: addr.to_owned(), source })?;
    if port == 0 {
        return Err(HealthError::PortZero { addr: addr.to_owned() });
    }
    let host = match unbracket(&host) {
        "0.0.0.0" => "127.0.0.1",
        "::" => "::1",
        other => other,
    };
    Ok(join_host_port(host, port))
}

/// Runs `probe`: a line saying what answered, or why it is unhealthy.
pub fn check(probe: &Probe, timeout: Duration) -> Result<String, HealthError> {
    let started = Instant::now();
    let what = match probe {
        Probe::Remoting(addr) => remoting(addr, timeout)?,
        Probe::Livez(addr) => livez(addr, timeout)?,
    };
    Ok(format!("healthy: {what} in {} ms", started.elapsed().as_millis()))
}

/// A route query to `addr`; any answer is healthy.
fn remoting(addr: &str, timeout: Duration) -> Result<String, HealthError> {
    let error = |source| HealthError::Remoting { addr: addr.to_owned(), source };
    let options = ConnectOptions { timeout, ..ConnectOptions::default() };
    let mut conn = BlockingConn::connect(addr, &options).map_err(error)?;
    let fields: ExtFields = [("topic", PROBE_TOPIC)].into_iter().collect();
    let answer =
        conn.call(RemotingCommand::request(RequestCode::GetRouteinfoByTopic as i32, Some(fields))).map_err(error)?;
    Ok(format!("{addr} answered a route query (code {})", answer.code))
}

/// `GET /livez` from `addr`; 200 is healthy.
fn livez(addr: &str, timeout: Duration) -> Result<String, HealthError> {
    let error = |source| HealthError::Http { addr: addr.to_owned(), source };
    let target =
        addr.to_socket_addrs().map_err(error)?.next().ok_or_else(|| {
            error(std::io::Error::new(std::io::ErrorKind::NotFound, "the name resolves to no address"))
        })?;
    let mut stream = TcpStream::connect_timeout(&target, timeout).map_err(error)?;
    stream.set_read_timeout(Some(timeout)).map_err(error)?;
    stream.set_write_timeout(Some(timeout)).map_err(error)?;
    let request = format!("GET /livez HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).map_err(error)?;
    let mut head = Vec::with_capacity(256);
    let mut chunk = [0u8; 512];
    while head.len() < MAX_HTTP_HEAD && !head.windows(2).any(|w| w == b"\r\n") {
        match stream.read(&mut chunk).map_err(error)? {
            0 => break,
            n => head.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let status = text.lines().next().unwrap_or_default().trim().to_owned();
    match status.split_whitespace().nth(1) {
        Some("200") if status.starts_with("HTTP/1.") => Ok(format!("{addr} answered /livez with 200")),
        _ => Err(HealthError::Failing { addr: addr.to_owned(), status }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_hosts_are_asked_on_loopback_and_port_zero_is_refused() {
        assert_eq!(loopback("0.0.0.0:9880").ok(), Some("127.0.0.1:9880".to_owned()));
        assert_eq!(loopback("[::]:9876").ok(), Some("[::1]:9876".to_owned()));
        assert_eq!(loopback("10.0.0.5:9876").ok(), Some("10.0.0.5:9876".to_owned()));
        assert!(matches!(loopback("127.0.0.1:0"), Err(HealthError::PortZero { .. })));
        assert!(matches!(loopback("nohost"), Err(HealthError::Address { .. })));
    }

    #[test]
    fn flags_come_before_the_settings() {
        let args = |addr: Option<&str>, http: Option<&str>| HealthArgs {
            addr: addr.map(str::to_owned),
            http: http.map(str::to_owned),
            timeout_ms: 1,
        };
        let unused = || -> Result<Settings, std::io::Error> { Err(std::io::Error::other("not read")) };
        assert_eq!(args(Some("h:1"), None).probe(unused).ok(), Some(Probe::Remoting("h:1".into())));
        assert_eq!(args(None, Some("h:2")).probe(unused).ok(), Some(Probe::Livez("h:2".into())));
        let mut settings = Settings::default();
        assert_eq!(
            args(None, None).probe(|| Ok::<_, std::io::Error>(settings.clone())).ok(),
            Some(Probe::Livez("127.0.0.1:9880".into()))
        );
        settings.observe.http_listen = String::new();
        assert_eq!(
            args(None, None).probe(|| Ok::<_, std::io::Error>(settings.clone())).ok(),
            Some(Probe::Remoting("127.0.0.1:9876".into()))
        );
        assert!(matches!(args(None, None).probe(unused), Err(HealthError::Settings(_))));
    }
}
