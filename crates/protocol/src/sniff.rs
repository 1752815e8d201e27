//! What the first bytes of a connection say about its protocol, when it is plainly not the
//! RocketMQ remoting protocol: a TLS ClientHello (a handshake record, type 0x16, version 3.x)
//! or an HTTP request line. Read as a frame length, either is hundreds of megabytes or more.

/// The content type of a TLS handshake record, the first byte of every TLS connection (Java's
/// `TlsModeHandler` checks the same byte).
pub const TLS_HANDSHAKE: u8 = 0x16;

/// A protocol that is not RocketMQ remoting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreign {
    /// A TLS ClientHello.
    TlsClientHello,
    /// An HTTP request (HTTP/1 request line, or the HTTP/2 preface `PRI `).
    Http,
}

impl std::fmt::Display for Foreign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Foreign::TlsClientHello => f.write_str("looks like a TLS ClientHello; TLS is disabled on this port"),
            Foreign::Http => f.write_str("looks like an HTTP request; this port speaks the RocketMQ remoting protocol"),
        }
    }
}

/// The first four bytes of HTTP request lines, and of the HTTP/2 connection preface.
const HTTP_STARTS: [&[u8; 4]; 10] =
    [b"GET ", b"POST", b"PUT ", b"HEAD", b"DELE", b"OPTI", b"PATC", b"CONN", b"TRAC", b"PRI "];

/// The foreign protocol `first` (a connection's first bytes) starts, if any; `None` until four
/// bytes are there.
pub fn foreign_protocol(first: &[u8]) -> Option<Foreign> {
    let start: &[u8; 4] = first.get(..4)?.try_into().ok()?;
    if start[0] == TLS_HANDSHAKE && start[1] == 0x03 {
        return Some(Foreign::TlsClientHello);
    }
    HTTP_STARTS.contains(&start).then_some(Foreign::Http)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_hellos_and_http_requests_are_named_and_remoting_frames_are_not() {
        assert_eq!(foreign_protocol(&[0x16, 0x03, 0x01, 0x02, 0x00]), Some(Foreign::TlsClientHello));
        assert_eq!(foreign_protocol(b"GET / HTTP/1.1\r\n"), Some(Foreign::Http));
        assert_eq!(foreign_protocol(b"POST /x HTTP/1.1"), Some(Foreign::Http));
        assert_eq!(foreign_protocol(b"PRI * HTTP/2.0\r\n"), Some(Foreign::Http));
        assert_eq!(foreign_protocol(b"GET"), None, "not yet four bytes");
        assert_eq!(foreign_protocol(&[0, 0, 0, 0x40, 0, 0, 0, 0x30]), None, "a remoting frame");
        assert_eq!(foreign_protocol(&[0x16, 0x04, 0, 0]), None);
    }
}
