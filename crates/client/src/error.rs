//! Why a call failed ([`ClientError`]), and the guess at what a failure on a fresh connection
//! means (an HTTP port, a server that wants TLS).

use std::io;

use namesrv_protocol::CodecError;
use thiserror::Error;

/// What the codec reports when an HTTP server answers: "HTTP" read as a frame length (plus the
/// four bytes of the length itself).
const HTTP_AS_FRAME_LENGTH: u64 = u32::from_be_bytes(*b"HTTP") as u64 + 4;

/// Why a call to one NameServer failed; the caller adds the NameServer's address.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The TCP connection could not be opened.
    #[error("cannot connect: {0}")]
    Connect(io::Error),
    /// The TLS handshake failed (untrusted certificate, wrong name, no TLS on that port ...).
    #[error("TLS handshake failed: {0}")]
    Tls(io::Error),
    /// Nothing arrived (or nothing could be written) within the timeout.
    #[error("no answer within {0} ms")]
    Timeout(u128),
    /// The NameServer closed the connection with answers still due.
    #[error("connection closed by the NameServer")]
    Closed,
    /// A plain-TCP connection was closed before its first answer: what a NameServer that
    /// accepts TLS only does.
    #[error("the server closed the connection without answering: it expects TLS (connect with TLS)")]
    ExpectsTls,
    /// The address answers HTTP (the HTTP port, not the remoting port).
    #[error("the server answered HTTP, not the RocketMQ remoting protocol: is this the HTTP port? (the remoting port is 9876 by default)")]
    Http,
    /// The server announced a frame larger than [`crate::ConnectOptions::max_answer_bytes`]
    /// (sizes with the 4-byte length field); none of its body was read.
    #[error("answer of {got} bytes is over the limit of {max} bytes")]
    AnswerTooLarge {
        /// The announced size.
        got: u64,
        /// The bound.
        max: usize,
    },
    /// A frame could not be written or read.
    #[error("{0}")]
    Codec(#[from] CodecError),
    /// The semaphore pacing the pipeline was closed (cannot happen while a batch runs).
    #[error("request window closed")]
    Window,
    /// A runtime for the blocking wrapper could not be built.
    #[error("cannot start a runtime: {0}")]
    Runtime(io::Error),
}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> Self {
        ClientError::Codec(CodecError::Io(e))
    }
}

impl ClientError {
    /// True when the error says the peer closed or reset the connection.
    pub fn is_closed(&self) -> bool {
        match self {
            ClientError::Closed => true,
            ClientError::Codec(CodecError::Io(e)) => matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe | io::ErrorKind::UnexpectedEof
            ),
            _ => false,
        }
    }
}

/// Says what a failure most likely means: an HTTP answer, or a plain connection closed by a
/// server that wants TLS.
pub(crate) fn explain(error: ClientError, plain_unanswered: bool) -> ClientError {
    match error {
        ClientError::AnswerTooLarge { got, .. } if got == HTTP_AS_FRAME_LENGTH => ClientError::Http,
        e if plain_unanswered && e.is_closed() => ClientError::ExpectsTls,
        other => other,
    }
}
