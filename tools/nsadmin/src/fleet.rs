//! The NameServers named by `-n`: reads from the first that answers (or from all), writes to all,
//! and errors that name the NameServer that failed.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use namesrv_protocol::signature::SessionCredentials;
use namesrv_protocol::RemotingCommand;
use rustls::ClientConfig;
use thiserror::Error;

use namesrv_client::{ClientError, Conn, ConnectOptions};

use crate::escape::printable;

/// A failed command, with the NameServer it concerns.
#[derive(Debug, Error)]
pub enum CmdError {
    /// `-n` named no NameServer.
    #[error("no NameServer given: use -n \"host:port;host:port\"")]
    NoNameServer,
    /// `-a` named no controller.
    #[error("no controller given: use -a \"host:port;host:port\"")]
    NoController,
    /// The controller knows no leader (no quorum, or an election under way).
    #[error("{addr}: the controller names no leader")]
    NoControllerLeader {
        /// The controller asked.
        addr: String,
    },
    /// The NameServer does not list the broker group a write names (Java answers such a write
    /// with 0 topics changed, which reads as success).
    #[error("{addr}: unknown broker group {broker:?}: its cluster list has no such group")]
    UnknownBrokerGroup {
        /// The NameServer.
        addr: String,
        /// The group named.
        broker: String,
    },
    /// The NameServer lists no cluster of the name asked for.
    #[error("{addr}: no cluster {cluster:?}")]
    UnknownCluster {
        /// The NameServer.
        addr: String,
        /// The cluster named.
        cluster: String,
    },
    /// A broker's runtime info lacks the message totals `clusterList -m` shows.
    #[error("{addr}: runtime info has no message totals (msgPutTotal*/msgGetTotal*)")]
    NoMessageTotals {
        /// The broker.
        addr: String,
    },
    /// A file named on the command line cannot be read or is not what it should be.
    #[error("{path}: {reason}")]
    BadFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The TLS flags name files that cannot be used.
    #[error("TLS: {0}")]
    Tls(#[from] namesrv_client::tls::TlsConfigError),
    /// The NameServer could not be reached or did not answer.
    #[error("{addr}: {source}")]
    Client {
        /// The NameServer.
        addr: String,
        /// What went wrong.
        source: ClientError,
    },
    /// The server announced an answer larger than `--max-answer-bytes`; none of it was read.
    #[error("answer of {got} bytes from {addr} is over --max-answer-bytes {max}")]
    AnswerTooLarge {
        /// The server.
        addr: String,
        /// The announced size, its 4-byte length field included.
        got: u64,
        /// The bound.
        max: usize,
    },
    /// The NameServer answered with an error code.
    #[error("{addr}: {} ({code}){}", code_name(*.code), remark_suffix(.remark))]
    Refused {
        /// The NameServer.
        addr: String,
        /// The response code.
        code: i32,
        /// Its remark, if any.
        remark: Option<String>,
    },
    /// The NameServer's answer body does not parse.
    #[error("{addr}: unreadable answer: {source}")]
    Body {
        /// The NameServer.
        addr: String,
        /// The parse error.
        source: serde_json::Error,
    },
    /// No NameServer of the list answered; each failure is listed.
    #[error("no NameServer answered: {}", join_errors(.0))]
    NoneAnswered(Vec<CmdError>),
    /// A topic's route query failed.
    #[error("route of {topic}: {source}")]
    Route {
        /// The topic.
        topic: String,
        /// What went wrong.
        source: Box<CmdError>,
    },
    /// A command-line value that cannot be used.
    #[error("{0}")]
    Usage(String),
}

fn join_errors(errors: &[CmdError]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

fn remark_suffix(remark: &Option<String>) -> String {
    match remark.as_deref().map(str::trim) {
        Some(r) if !r.is_empty() => format!(": {}", printable(r.lines().next().unwrap_or_default())),
        _ => String::new(),
    }
}

/// The name of a response code (Java's `ResponseCode` / `RemotingSysResponseCode`).
pub fn code_name(code: i32) -> &'static str {
    match code {
        0 => "SUCCESS",
        1 => "SYSTEM_ERROR",
        2 => "SYSTEM_BUSY",
        3 => "REQUEST_CODE_NOT_SUPPORTED",
        16 => "NO_PERMISSION",
        17 => "TOPIC_NOT_EXIST",
        22 => "QUERY_NOT_FOUND",
        _ => namesrv_protocol::controller::ControllerResponseCode::from_i32(code).map_or("ERROR", |c| c.name()),
    }
}

/// One result per NameServer, with its address, in `-n` order.
pub type PerNamesrv<T> = Vec<(String, Result<T, CmdError>)>;

/// The NameServers and how to talk to them.
#[derive(Debug, Clone)]
pub struct Fleet {
    /// `host:port` of each NameServer, in the order given.
    pub addrs: Vec<String>,
    /// Connect and answer timeout.
    pub timeout: Duration,
    /// How every connection is made: the timeout, the credentials signing every request, TLS.
    pub options: ConnectOptions,
}

impl Fleet {
    /// Parses a `-n` list (`host:port;host:port`, blanks ignored).
    pub fn new(list: &str, timeout: Duration, credentials: Option<SessionCredentials>) -> Result<Fleet, CmdError> {
        let addrs: Vec<String> = list.split(';').map(str::trim).filter(|a| !a.is_empty()).map(str::to_owned).collect();
        if addrs.is_empty() {
            return Err(CmdError::NoNameServer);
        }
        if let Some(bad) = addrs.iter().find(|a| !a.contains(':')) {
            return Err(CmdError::Usage(format!("bad NameServer address {bad:?}: expected host:port")));
        }
        Ok(Fleet { addrs, timeout, options: ConnectOptions { timeout, credentials, ..ConnectOptions::default() } })
    }

    /// The same NameServers, refusing any answer larger than `max` bytes (`--max-answer-bytes`).
    pub fn with_max_answer_bytes(mut self, max: usize) -> Fleet {
        self.options.max_answer_bytes = max;
        self
    }

    /// The same NameServers over TLS with `tls`, when given.
    pub fn with_tls(mut self, tls: Option<Arc<ClientConfig>>) -> Fleet {
        self.options.tls = tls;
        self
    }

    /// Opens a connection to `addr`.
    pub async fn connect(&self, addr: &str) -> Result<Conn, CmdError> {
        Conn::connect(addr, &self.options).await.map_err(|e| client_error(addr, e))
    }

    /// Sends one request to `addr` over a new connection and returns the answer, whatever its code.
    pub async fn call(&self, addr: &str, cmd: RemotingCommand) -> Result<RemotingCommand, CmdError> {
        let mut conn = self.connect(addr).await?;
        conn.call(cmd).await.map_err(|e| client_error(addr, e))
    }

    /// Asks each NameServer in turn until one answers; the answer may carry an error code.
    pub async fn first(&self, cmd: &RemotingCommand) -> Result<(String, RemotingCommand), CmdError> {
        let mut failures = Vec::new();
        for addr in &self.addrs {
            match self.call(addr, cmd.clone()).await {
                Ok(answer) => return Ok((addr.clone(), answer)),
                Err(e) => failures.push(e),
            }
        }
        Err(CmdError::NoneAnswered(failures))
    }

    /// Asks every NameServer at once; one result per NameServer, in `-n` order.
    pub async fn each(&self, cmd: &RemotingCommand) -> PerNamesrv<RemotingCommand> {
        let calls = self.addrs.iter().map(|addr| async move { (addr.clone(), self.call(addr, cmd.clone()).await) });
        join_all(calls).await
    }

    /// The first answering NameServer, or every NameServer with `all`.
    pub async fn read(&self, cmd: &RemotingCommand, all: bool) -> PerNamesrv<RemotingCommand> {
        if all {
            return self.each(cmd).await;
        }
        match self.first(cmd).await {
            Ok((addr, answer)) => vec![(addr, Ok(answer))],
            Err(e) => vec![(self.addrs.join(";"), Err(e))],
        }
    }
}

/// Wraps a connection failure with the NameServer's address; an answer over the bound names
/// the flag that sets it.
pub fn client_error(addr: &str, source: ClientError) -> CmdError {
    match source {
        ClientError::AnswerTooLarge { got, max } => CmdError::AnswerTooLarge { addr: addr.to_owned(), got, max },
        source => CmdError::Client { addr: addr.to_owned(), source },
    }
}

/// The answer itself when its code is SUCCESS, a [`CmdError::Refused`] naming `addr` otherwise.
pub fn success(addr: &str, answer: RemotingCommand) -> Result<RemotingCommand, CmdError> {
    if answer.code == 0 {
        Ok(answer)
    } else {
        Err(CmdError::Refused { addr: addr.to_owned(), code: answer.code, remark: answer.remark })
    }
}

/// Parses the body of a successful answer from `addr`.
pub fn body<T: serde::de::DeserializeOwned>(addr: &str, answer: &RemotingCommand) -> Result<T, CmdError> {
    crate::wire::parse(answer.body.as_deref()).map_err(|source| CmdError::Body { addr: addr.to_owned(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namesrv_lists_split_on_semicolons_and_skip_blanks() {
        let fleet = Fleet::new(" a:1; ;b:2;", Duration::from_secs(1), None).expect("valid");
        assert_eq!(fleet.addrs, ["a:1", "b:2"]);
        assert!(matches!(Fleet::new(" ; ", Duration::from_secs(1), None), Err(CmdError::NoNameServer)));
        assert!(matches!(Fleet::new("a:1;nohost", Duration::from_secs(1), None), Err(CmdError::Usage(_))));
    }

    #[test]
    fn refusals_name_the_namesrv_the_code_and_the_first_remark_line() {
        let answer = RemotingCommand {
            code: 17,
            remark: Some("No topic route\nSee FAQ".into()),
            ..RemotingCommand::request(0, None)
        };
        let err = success("127.0.0.1:9876", answer).expect_err("refused");
        assert_eq!(err.to_string(), "127.0.0.1:9876: TOPIC_NOT_EXIST (17): No topic route");
        let none = CmdError::NoneAnswered(vec![err, CmdError::Usage("x".into())]);
        assert_eq!(none.to_string(), "no NameServer answered: 127.0.0.1:9876: TOPIC_NOT_EXIST (17): No topic route; x");
    }
}
