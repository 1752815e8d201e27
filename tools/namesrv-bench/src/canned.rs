//! `canned`: the physical limit of this machine for route queries — a remoting server that does
//! no NameServer work. It frames each request, parses its header (JSON or ROCKETMQ binary) for
//! `code`, `flag` and `opaque`, and answers code 0 with one pre-encoded body of a given size,
//! the opaque echoed; one-way requests get no answer. It runs on one thread, as a pinned
//! `io_threads = 1` NameServer does, so a NameServer's route throughput divided by this
//! server's under the same load is how close it comes to the limit.

use std::io;
use std::net::SocketAddr;
use std::rc::Rc;

use bytes::{Buf, BytesMut};
use namesrv_protocol::command::FLAG_ONEWAY;
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// `canned`'s arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct Canned {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:9876")]
    listen: SocketAddr,
    /// Size of the body every answer carries, bytes (the size of the workload's route reply).
    #[arg(long, default_value_t = 2048)]
    body_bytes: usize,
    /// Largest request frame accepted, bytes.
    #[arg(long, default_value_t = 64 << 20)]
    max_frame_bytes: usize,
}

/// The header fields an answer needs.
#[derive(Deserialize)]
struct Head {
    /// Parsed as any server must, though every answer is the same.
    #[serde(default)]
    #[cfg_attr(not(test), allow(dead_code))]
    code: i32,
    #[serde(default)]
    flag: i32,
    #[serde(default)]
    opaque: i32,
}

/// Serves until killed (or until the listener fails); call inside a `LocalSet`.
pub async fn run(canned: &Canned) -> io::Result<serde_json::Value> {
    let listener = TcpListener::bind(canned.listen).await?;
    eprintln!("canned: listening on {}, {} body bytes per answer", listener.local_addr()?, canned.body_bytes);
    let body: Rc<[u8]> = canned_body(canned.body_bytes).into();
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let (body, max) = (body.clone(), canned.max_frame_bytes);
        tokio::task::spawn_local(async move {
            if let Err(e) = serve(stream, &body, max).await {
                if e.kind() != io::ErrorKind::UnexpectedEof && e.kind() != io::ErrorKind::ConnectionReset {
                    eprintln!("canned: connection: {e}");
                }
            }
        });
    }
}

/// A JSON object of exactly `size` bytes (at least `{}`), standing in for a route body.
fn canned_body(size: usize) -> Vec<u8> {
    let mut body = b"{\"canned\":\"".to_vec();
    body.resize(size.saturating_sub(2).max(body.len()), b'x');
    body.extend_from_slice(b"\"}");
    if body.len() > size.max(2) {
        return b"{}".to_vec();
    }
    body
}

/// Answers one connection's requests until it closes.
async fn serve(mut stream: TcpStream, body: &[u8], max_frame: usize) -> io::Result<()> {
    let mut input = BytesMut::with_capacity(64 * 1024);
    let mut output = Vec::with_capacity(64 * 1024);
    loop {
        if stream.read_buf(&mut input).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        while let Some(head) = next_request(&mut input, max_frame)? {
            if head.flag & FLAG_ONEWAY == 0 {
                answer(&head, body, &mut output);
            }
        }
        if !output.is_empty() {
            stream.write_all(&output).await?;
            output.clear();
        }
        if input.capacity() < 16 * 1024 {
            input.reserve(64 * 1024);
        }
    }
}

/// Takes the next whole request frame from `input` and parses its header; `None` until one is whole.
fn next_request(input: &mut BytesMut, max_frame: usize) -> io::Result<Option<Head>> {
    if input.len() < 8 {
        return Ok(None);
    }
    let total = u32::from_be_bytes([input[0], input[1], input[2], input[3]]) as usize;
    if !(4..=max_frame).contains(&total) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("frame length {total}")));
    }
    if input.len() < 4 + total {
        input.reserve(4 + total - input.len());
        return Ok(None);
    }
    let mark = u32::from_be_bytes([input[4], input[5], input[6], input[7]]);
    let header_len = (mark & 0x00ff_ffff) as usize;
    let header = input.get(8..8 + header_len).filter(|_| header_len <= total - 4);
    let head = match (mark >> 24, header) {
        (0, Some(json)) => serde_json::from_slice(json).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?,
        (1, Some(binary)) if binary.len() >= 9 => Head {
            code: i16::from_be_bytes([binary[0], binary[1]]) as i32,
            opaque: i32::from_be_bytes([binary[5], binary[6], binary[7], binary[8]]),
            flag: binary.get(9..13).map_or(0, |f| i32::from_be_bytes([f[0], f[1], f[2], f[3]])),
        },
        _ => return Err(io::Error::new(io::ErrorKind::InvalidData, "bad header")),
    };
    input.advance(4 + total);
    Ok(Some(head))
}

/// Appends the answer to `head`: code 0, its opaque, the canned body.
fn answer(head: &Head, body: &[u8], out: &mut Vec<u8>) {
    let mut opaque = itoa::Buffer::new();
    let opaque = opaque.format(head.opaque);
    let parts: [&[u8]; 3] = [
        b"{\"code\":0,\"flag\":1,\"language\":\"JAVA\",\"opaque\":",
        opaque.as_bytes(),
        b",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}",
    ];
    let header_len: usize = parts.iter().map(|p| p.len()).sum();
    out.extend_from_slice(&((4 + header_len + body.len()) as u32).to_be_bytes());
    out.extend_from_slice(&(header_len as u32).to_be_bytes());
    for part in parts {
        out.extend_from_slice(part);
    }
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(header: &str, body: &[u8]) -> Vec<u8> {
        let mut frame = ((4 + header.len() + body.len()) as u32).to_be_bytes().to_vec();
        frame.extend_from_slice(&(header.len() as u32).to_be_bytes());
        frame.extend_from_slice(header.as_bytes());
        frame.extend_from_slice(body);
        frame
    }

    #[test]
    fn answers_echo_the_opaque_with_the_canned_body() {
        let mut input = BytesMut::new();
        input.extend_from_slice(&request(r#"{"code":105,"flag":0,"opaque":77,"extFields":{"topic":"T"}}"#, b""));
        input.extend_from_slice(&request(r#"{"code":105,"flag":2,"opaque":78}"#, b"x"));
        let body = canned_body(100);
        assert_eq!(body.len(), 100);
        let mut out = Vec::new();
        let first = next_request(&mut input, 1 << 20).unwrap().unwrap();
        assert_eq!((first.code, first.opaque, first.flag), (105, 77, 0));
        answer(&first, &body, &mut out);
        let second = next_request(&mut input, 1 << 20).unwrap().unwrap();
        assert_eq!(second.flag & FLAG_ONEWAY, FLAG_ONEWAY);
        assert!(next_request(&mut input, 1 << 20).unwrap().is_none());
        let total = u32::from_be_bytes(out[0..4].try_into().unwrap()) as usize;
        let header_len = u32::from_be_bytes(out[4..8].try_into().unwrap()) as usize;
        assert_eq!(out.len(), 4 + total);
        let header: serde_json::Value = serde_json::from_slice(&out[8..8 + header_len]).unwrap();
        assert_eq!((header["code"].as_i64(), header["opaque"].as_i64()), (Some(0), Some(77)));
        assert_eq!(&out[8 + header_len..], &body[..]);
    }

    #[test]
    fn partial_and_hostile_frames() {
        let frame = request(r#"{"code":105,"opaque":1}"#, b"");
        let mut input = BytesMut::from(&frame[..frame.len() - 1]);
        assert!(next_request(&mut input, 1 << 20).unwrap().is_none(), "not whole yet");
        input.extend_from_slice(&frame[frame.len() - 1..]);
        assert!(next_request(&mut input, 1 << 20).unwrap().is_some());
        let mut huge = BytesMut::from(&u32::MAX.to_be_bytes()[..]);
        huge.extend_from_slice(&[0; 4]);
        assert!(next_request(&mut huge, 1 << 20).is_err());
        let mut liar = BytesMut::from(&request("{}", b"")[..]);
        liar[7] = 200; // header longer than the frame
        assert!(next_request(&mut liar, 1 << 20).is_err());
        assert_eq!(canned_body(0), b"{}");
    }
}
