//! Where a request comes from: the connection that carried it ([`ConnId`]), the peer's address
//! and, over TLS, the certificate the client presented ([`Origin`]). Plain values, shared by
//! every layer that logs or routes by connection.

use std::fmt;
use std::net::SocketAddr;

/// Identifies one TCP connection for the life of the process; [`ConnId::SERVER`] is the server
/// itself (requests it makes of its own actors: start-up, HTTP, timers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ConnId(pub u64);

impl ConnId {
    /// The server itself, not a peer: the id of every request no connection carried.
    pub const SERVER: ConnId = ConnId(0);
}

impl fmt::Display for ConnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a request came from: its connection, the peer's address and its client certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The connection.
    pub conn: ConnId,
    /// The peer's address.
    pub peer: SocketAddr,
    /// Whether the connection is TLS.
    pub tls: bool,
    /// The fingerprint of the certificate the client presented in its TLS handshake; `None`
    /// over plain TCP or without one.
    pub client_cert: Option<CertFingerprint>,
}

/// The SHA-256 fingerprint of a certificate (of its DER bytes), as `openssl x509 -noout
/// -fingerprint -sha256` prints it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CertFingerprint(pub [u8; 32]);

impl CertFingerprint {
    /// The fingerprint of the certificate `der`.
    pub fn of_der(der: &[u8]) -> Self {
        let digest = ring::digest::digest(&ring::digest::SHA256, der);
        let mut out = [0u8; 32];
        out.copy_from_slice(digest.as_ref());
        CertFingerprint(out)
    }

    /// Reads `sha256:` and 64 hex digits, in either case, with or without a colon between
    /// pairs (openssl's `SHA256 Fingerprint=` output after the prefix is replaced).
    pub fn parse(text: &str) -> Option<Self> {
        let hex = text.trim().strip_prefix("sha256:")?.replace(':', "");
        if hex.len() != 64 || !hex.is_ascii() {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(CertFingerprint(out))
    }
}

impl fmt::Display for CertFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        for (i, byte) in self.0.iter().enumerate() {
            write!(f, "{}{byte:02X}", if i == 0 { "" } else { ":" })?;
        }
        Ok(())
    }
}

impl fmt::Debug for CertFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_reads_back_as_it_prints_with_or_without_colons() {
        let print = CertFingerprint::of_der(b"certificate").to_string();
        assert_eq!(CertFingerprint::parse(&print), Some(CertFingerprint::of_der(b"certificate")));
        let bare = format!("sha256:{}", print.trim_start_matches("sha256:").replace(':', "").to_lowercase());
        assert_eq!(CertFingerprint::parse(&bare), CertFingerprint::parse(&print));
        for bad in ["", "sha256:", "sha1:00", &print[..print.len() - 1], &print.replace("sha256:", "")] {
            assert_eq!(CertFingerprint::parse(bad), None, "{bad:?}");
        }
    }
}
