//! The `listings` attack: topic listings asked as fast as one peer can, over HTTP (the topic
//! search with a pattern that matches nothing, so every call would scan every topic) and over
//! remoting (GET_UNIT_TOPIC_LIST and GET_TOPICS_BY_CLUSTER pipelined), while the probe asks for
//! routes.

use std::cell::Cell;
use std::io;
use std::rc::Rc;
use std::time::Instant;

use namesrv_protocol::{ExtFields, RemotingCommand};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::conn::{Conn, Target};

/// HTTP clients searching at once.
const HTTP_CLIENTS: usize = 8;
/// Remoting listings in flight on the pipelining connection (8 lists of 200,000 topics stay
/// within the 64 MiB of unwritten replies a connection may have).
const WINDOW: usize = 8;

/// Runs the attack until `stop`: `http` is the server's HTTP endpoint (the HTTP half is left
/// out without it), `cluster` a cluster whose topics GET_TOPICS_BY_CLUSTER lists.
pub async fn run(target: &Target, http: Option<&str>, cluster: &str, stop: Instant) -> io::Result<Value> {
    let (ok, busy) = (Rc::new(Cell::new(0u64)), Rc::new(Cell::new(0u64)));
    let mut searches = Vec::new();
    for _ in 0..if http.is_some() { HTTP_CLIENTS } else { 0 } {
        let (http, ok, busy) = (http.unwrap_or_default().to_owned(), ok.clone(), busy.clone());
        searches.push(tokio::task::spawn_local(async move { search(&http, stop, &ok, &busy).await }));
    }
    let listed = pipeline(target, cluster, stop).await?;
    for task in searches {
        task.await.map_err(io::Error::other)??;
    }
    Ok(json!({"http_searches": ok.get(), "http_busy": busy.get(), "remoting_listings": listed}))
}

/// One HTTP client searching for a name no topic has, on one kept-alive connection.
async fn search(http: &str, stop: Instant, ok: &Cell<u64>, busy: &Cell<u64>) -> io::Result<()> {
    let request = format!("GET /api/v1/topics?q=NoSuchTopicName&limit=1000 HTTP/1.1\r\nHost: {http}\r\n\r\n");
    let mut stream = BufReader::new(TcpStream::connect(http).await?);
    while Instant::now() < stop {
        stream.get_mut().write_all(request.as_bytes()).await?;
        let (status, length) = read_head(&mut stream).await?;
        let mut body = vec![0; length];
        stream.read_exact(&mut body).await?;
        match status {
            200 => ok.set(ok.get() + 1),
            503 => busy.set(busy.get() + 1),
            other => return Err(io::Error::other(format!("topic search answered HTTP {other}"))),
        }
    }
    Ok(())
}

/// The status and Content-Length of the next response.
async fn read_head(stream: &mut BufReader<TcpStream>) -> io::Result<(u16, usize)> {
    let (mut status, mut length) = (0, 0);
    let mut line = String::new();
    loop {
        line.clear();
        if stream.read_line(&mut line).await? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the HTTP endpoint closed the connection"));
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            return Ok((status, length));
        }
        if let Some(code) = trimmed.strip_prefix("HTTP/1.1 ") {
            status = code.get(..3).and_then(|c| c.parse().ok()).unwrap_or(0);
        } else if let Some((name, value)) = trimmed.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
}

/// GET_UNIT_TOPIC_LIST and GET_TOPICS_BY_CLUSTER, `WINDOW` in flight, until `stop`.
async fn pipeline(target: &Target, cluster: &str, stop: Instant) -> io::Result<u64> {
    let mut conn = Conn::connect(target).await?;
    let by_cluster = RemotingCommand::request(224, Some(ExtFields::new().with("cluster", cluster)));
    let unit = RemotingCommand::request(311, None);
    let (mut sent, mut answered) = (0u64, 0u64);
    while Instant::now() < stop {
        while sent - answered < WINDOW as u64 {
            conn.feed(if sent % 2 == 0 { unit.clone() } else { by_cluster.clone() }).await?;
            sent += 1;
        }
        conn.flush().await?;
        let answer = conn.next_answer().await?;
        if answer.code != 0 {
            return Err(io::Error::other(format!("a listing answered code {}", answer.code)));
        }
        answered += 1;
    }
    Ok(answered)
}
