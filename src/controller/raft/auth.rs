//! How controller peers know each other, whatever `acl_enabled` says and with no setting needed:
//! each peer makes an Ed25519 key at its first start (`peer-key` in its store, readable by its
//! owner only) and signs every Raft frame it sends and every answer it gives; the others pin a
//! peer's key the first time they hear it (`peer-keys.json` beside it: trust on first use, as SSH
//! does) and from then on take only frames and answers that key signed. An operator who wants no
//! first-use window sets a cluster secret (`controller_peer_secret_file`): every frame and answer
//! then also carries its HMAC, which a stranger cannot make, and a peer whose store was rebuilt
//! is pinned again once its HMAC holds. What is signed binds the frame to its code, group,
//! sender, receiver, time (5 minutes of skew at most) and body, and an answer to the frame it
//! answers, so a frame cannot be replayed later, redirected, or answered by someone else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use ring::digest::{digest, SHA256};
use ring::hmac;
use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair, UnparsedPublicKey, ED25519};
use thiserror::Error;
use tracing::{info, warn};

use crate::persist::{read_state_file, write_atomically, write_secret_atomically};
use crate::protocol::{ExtFields, RemotingCommand};

/// The longest a frame's time may be off this peer's clock.
pub const MAX_SKEW: Duration = Duration::from_secs(300);

/// The fields a signed frame or answer carries.
const KEY: &str = "peerKey";
const SIG: &str = "peerSig";
const MAC: &str = "peerMac";
const TIME: &str = "peerTime";

/// The largest pin file read back.
const MAX_PINS_BYTES: u64 = 64 * 1024;

/// The shortest cluster secret taken.
pub const MIN_SECRET_BYTES: usize = 16;

/// Reads the cluster secret from `path`: its bytes less surrounding whitespace, 16 at least.
pub fn read_secret(path: &Path) -> Result<Vec<u8>, PeerAuthError> {
    let bytes = read_state_file(path, 4096).map_err(|e| store_error(path, e))?;
    crate::secret_file::warn_if_open_to_others(path, "controller peer secret");
    let secret = bytes.trim_ascii();
    if secret.len() < MIN_SECRET_BYTES {
        return Err(PeerAuthError::ShortSecret { path: path.to_owned() });
    }
    Ok(secret.to_vec())
}

/// The wall clock in ms since the epoch, which frames carry (peers' clocks agree to minutes).
pub fn wall_ms() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// Why a peer frame or answer is not taken.
#[derive(Debug, Error)]
pub enum PeerAuthError {
    /// The store's key or pins cannot be read or written.
    #[error("{path}: {error}")]
    Store { path: PathBuf, error: std::io::Error },
    /// The store's key or pins do not parse.
    #[error("{path}: not a peer key or pin file")]
    Corrupt { path: PathBuf },
    /// The cluster secret's file holds too little.
    #[error("{path}: controller_peer_secret_file must hold at least {MIN_SECRET_BYTES} bytes")]
    ShortSecret { path: PathBuf },
    /// A field is missing or does not decode.
    #[error("raft frame without a valid {0}")]
    Missing(&'static str),
    /// The frame's time is too far from this peer's clock.
    #[error("raft frame {skew_s} s away from this peer's clock (at most {} s)", MAX_SKEW.as_secs())]
    Skew { skew_s: u64 },
    /// The cluster secret's HMAC does not hold.
    #[error("raft frame from {0} without the cluster secret's HMAC")]
    BadMac(String),
    /// Another key than the one pinned for the peer.
    #[error("raft frame from {peer} signed with another key than the one pinned in {pins} (a peer whose store was rebuilt: remove its line there, or set controller_peer_secret_file)")]
    WrongKey { peer: String, pins: PathBuf },
    /// The signature does not hold.
    #[error("raft frame from {0} with a bad signature")]
    BadSignature(String),
}

/// This peer's key, the keys it pinned, and the cluster secret when there is one.
pub struct PeerAuth {
    key: Ed25519KeyPair,
    /// This peer's public key, as frames carry it.
    public: String,
    pins: Mutex<BTreeMap<String, String>>,
    pins_path: PathBuf,
    secret: Option<hmac::Key>,
}

impl std::fmt::Debug for PeerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerAuth").field("public", &self.public).field("secret", &self.secret.is_some()).finish()
    }
}

/// What a signature covers: a direction tag, the fields that route the frame, and a digest of
/// the body.
fn signed_bytes(tag: &str, parts: &[&str], body: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(128);
    for part in std::iter::once(tag).chain(parts.iter().copied()) {
        bytes.extend_from_slice(part.as_bytes());
        bytes.push(0);
    }
    bytes.extend_from_slice(digest(&SHA256, body).as_ref());
    bytes
}

impl PeerAuth {
    /// Opens (making at first start) this peer's key in `dir`, and the keys it pinned; a cluster
    /// secret when `secret` is given.
    pub fn open(dir: &Path, secret: Option<&[u8]>) -> Result<Arc<PeerAuth>, PeerAuthError> {
        let key_path = dir.join("peer-key");
        let pkcs8 = match read_state_file(&key_path, 4096) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let made = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new())
                    .map_err(|_| PeerAuthError::Corrupt { path: key_path.clone() })?;
                write_secret_atomically(&key_path, made.as_ref()).map_err(|e| store_error(&key_path, e))?;
                info!(file = %key_path.display(), "controller peer key made");
                made.as_ref().to_vec()
            }
            Err(error) => return Err(store_error(&key_path, error)),
        };
        crate::secret_file::warn_if_open_to_others(&key_path, "controller peer key");
        let key = Ed25519KeyPair::from_pkcs8(&pkcs8).map_err(|_| PeerAuthError::Corrupt { path: key_path })?;
        let public = B64.encode(key.public_key().as_ref());
        let pins_path = dir.join("peer-keys.json");
        let pins = match read_state_file(&pins_path, MAX_PINS_BYTES) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|_| PeerAuthError::Corrupt { path: pins_path.clone() })?
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(error) => return Err(store_error(&pins_path, error)),
        };
        let secret = secret.map(|s| hmac::Key::new(hmac::HMAC_SHA256, s));
        Ok(Arc::new(PeerAuth { key, public, pins: Mutex::new(pins), pins_path, secret }))
    }

    /// This peer's public key, base64.
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// Signs a frame of `code` from `from` to `to` in `group`, with `body`, at wall time `now_ms`:
    /// adds the fields to `ext`; returns the signature (what the answer is bound to).
    pub fn sign_frame(&self, ext: &mut ExtFields, route: [&str; 4], body: &[u8], now_ms: u64) -> String {
        let time = now_ms.to_string();
        let [code, group, from, to] = route;
        let bytes = signed_bytes("frame", &[code, group, from, to, &time], body);
        let sig = B64.encode(self.key.sign(&bytes).as_ref());
        ext.insert(KEY, self.public.clone());
        ext.insert(TIME, time);
        ext.insert(SIG, sig.clone());
        if let Some(secret) = &self.secret {
            ext.insert(MAC, B64.encode(hmac::sign(secret, &bytes).as_ref()));
        }
        sig
    }

    /// Checks a frame from peer `from` (its routing fields `route`, its extFields, its body) at
    /// wall time `now_ms`: the signature is `from`'s pinned key's (pinned now if `from` is new),
    /// the time near this peer's, the HMAC right when there is a secret. Returns the frame's
    /// signature, which the answer is bound to.
    pub fn check_frame(&self, route: [&str; 4], req: &RemotingCommand, now_ms: u64) -> Result<String, PeerAuthError> {
        let [code, group, from, to] = route;
        let field = |name: &'static str| req.ext(name).ok_or(PeerAuthError::Missing(name));
        let time = field(TIME)?;
        let sent: u64 = time.parse().map_err(|_| PeerAuthError::Missing(TIME))?;
        let skew_s = sent.abs_diff(now_ms) / 1000;
        if skew_s > MAX_SKEW.as_secs() {
            return Err(PeerAuthError::Skew { skew_s });
        }
        let bytes = signed_bytes("frame", &[code, group, from, to, time], req.body.as_deref().unwrap_or_default());
        let sig = field(SIG)?;
        self.verify(from, field(KEY)?, req.ext(MAC), sig, &bytes)?;
        Ok(sig.to_owned())
    }

    /// Signs the answer `answer` (its body) that this peer, `from`, gives to the frame signed
    /// `frame_sig` from `to`.
    pub fn sign_answer(&self, answer: &mut RemotingCommand, (from, to): (&str, &str), frame_sig: &str) {
        let bytes = signed_bytes("answer", &[from, to, frame_sig], answer.body.as_deref().unwrap_or_default());
        let ext = answer.ext_fields.get_or_insert_with(ExtFields::new);
        ext.insert(KEY, self.public.clone());
        ext.insert(SIG, B64.encode(self.key.sign(&bytes).as_ref()));
        if let Some(secret) = &self.secret {
            ext.insert(MAC, B64.encode(hmac::sign(secret, &bytes).as_ref()));
        }
    }

    /// Checks the answer of peer `from` to this peer's frame signed `frame_sig`.
    pub fn check_answer(
        &self,
        answer: &RemotingCommand,
        (from, to): (&str, &str),
        frame_sig: &str,
    ) -> Result<(), PeerAuthError> {
        let field = |name: &'static str| answer.ext(name).ok_or(PeerAuthError::Missing(name));
        let bytes = signed_bytes("answer", &[from, to, frame_sig], answer.body.as_deref().unwrap_or_default());
        self.verify(from, field(KEY)?, answer.ext(MAC), field(SIG)?, &bytes)
    }

    /// Checks `sig` (and `mac`, with a secret) over `bytes` with `peer`'s key: the pinned one,
    /// or `key`, pinned now, the first time `peer` is heard (again, with a secret whose HMAC
    /// holds: a peer whose store was rebuilt).
    fn verify(&self, peer: &str, key: &str, mac: Option<&str>, sig: &str, bytes: &[u8]) -> Result<(), PeerAuthError> {
        if let Some(secret) = &self.secret {
            let mac = mac.and_then(|m| B64.decode(m).ok()).ok_or_else(|| PeerAuthError::BadMac(peer.to_owned()))?;
            hmac::verify(secret, bytes, &mac).map_err(|_| PeerAuthError::BadMac(peer.to_owned()))?;
        }
        let raw_key = B64.decode(key).map_err(|_| PeerAuthError::Missing(KEY))?;
        let raw_sig = B64.decode(sig).map_err(|_| PeerAuthError::Missing(SIG))?;
        UnparsedPublicKey::new(&ED25519, &raw_key)
            .verify(bytes, &raw_sig)
            .map_err(|_| PeerAuthError::BadSignature(peer.to_owned()))?;
        let mut pins = self.pins.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match pins.get(peer) {
            Some(pinned) if pinned == key => Ok(()),
            Some(_) if self.secret.is_none() => {
                Err(PeerAuthError::WrongKey { peer: peer.to_owned(), pins: self.pins_path.clone() })
            }
            _ => {
                let before = pins.insert(peer.to_owned(), key.to_owned());
                let text = serde_json::to_vec_pretty(&*pins).unwrap_or_default();
                if let Err(error) = write_atomically(&self.pins_path, &text) {
                    // Kept in memory: this run still refuses another key for the peer.
                    warn!(file = %self.pins_path.display(), %error, "controller: cannot persist a pinned peer key");
                }
                let fingerprint = hex(&digest(&SHA256, &raw_key).as_ref()[..8]);
                match before {
                    None => info!(peer = %peer, key = %fingerprint, "controller: peer key pinned on first use"),
                    Some(_) => warn!(peer = %peer, key = %fingerprint, "controller: peer key replaced (its HMAC held)"),
                }
                Ok(())
            }
        }
    }
}

fn store_error(path: &Path, error: std::io::Error) -> PeerAuthError {
    PeerAuthError::Store { path: path.to_owned(), error }
}

/// Lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("namesrv-peer-auth-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn frame(auth: &PeerAuth, body: &[u8], now: u64) -> (RemotingCommand, String) {
        let mut ext = ExtFields::new();
        let sig = auth.sign_frame(&mut ext, ["1901", "g", "n0", "n1"], body, now);
        (RemotingCommand::request(1901, Some(ext)).with_body(body.to_vec()), sig)
    }

    #[test]
    fn a_peer_is_pinned_on_first_use_and_then_only_its_key_is_taken() {
        let (n0, n1, stranger) = (dir("n0"), dir("n1"), dir("stranger"));
        let (a, b, evil) = (
            PeerAuth::open(&n0, None).unwrap(),
            PeerAuth::open(&n1, None).unwrap(),
            PeerAuth::open(&stranger, None).unwrap(),
        );
        let now = 1_000_000;
        let (req, sig) = frame(&a, b"entries", now);
        assert_eq!(b.check_frame(["1901", "g", "n0", "n1"], &req, now).unwrap(), sig, "pinned on first use");
        let (forged, _) = frame(&evil, b"entries", now);
        assert!(matches!(b.check_frame(["1901", "g", "n0", "n1"], &forged, now), Err(PeerAuthError::WrongKey { .. })));
        let mut tampered = req.clone();
        tampered.body = Some(b"other entries".to_vec().into());
        assert!(matches!(
            b.check_frame(["1901", "g", "n0", "n1"], &tampered, now),
            Err(PeerAuthError::BadSignature(_))
        ));
        assert!(b.check_frame(["1901", "g", "n0", "n2"], &req, now).is_err(), "redirected to another peer");
        assert!(matches!(
            b.check_frame(["1901", "g", "n0", "n1"], &req, now + 301_000),
            Err(PeerAuthError::Skew { .. })
        ));
        // The pin survives a restart; the key too.
        let b_again = PeerAuth::open(&n1, None).unwrap();
        assert!(matches!(
            b_again.check_frame(["1901", "g", "n0", "n1"], &forged, now),
            Err(PeerAuthError::WrongKey { .. })
        ));
        assert_eq!(PeerAuth::open(&n0, None).unwrap().public_key(), a.public_key());
        assert_eq!(crate::secret_file::open_to_others(&n0.join("peer-key")), None, "owner only");
        // An answer is bound to the frame it answers.
        let mut answer =
            RemotingCommand::response(crate::protocol::ResponseCode::Success, None).with_body(b"ok".to_vec());
        b.sign_answer(&mut answer, ("n1", "n0"), &sig);
        assert!(a.check_answer(&answer, ("n1", "n0"), &sig).is_ok());
        assert!(a.check_answer(&answer, ("n1", "n0"), "another frame").is_err());
    }

    #[test]
    fn with_a_cluster_secret_a_stranger_is_never_pinned_and_a_rebuilt_peer_is() {
        let (n0, n1, stranger) = (dir("s0"), dir("s1"), dir("s2"));
        let secret = Some(&b"the group's secret"[..]);
        let (a, b) = (PeerAuth::open(&n0, secret).unwrap(), PeerAuth::open(&n1, secret).unwrap());
        let evil = PeerAuth::open(&stranger, Some(b"a guess")).unwrap();
        let now = 5_000_000;
        let (forged, _) = frame(&evil, b"x", now);
        assert!(matches!(b.check_frame(["1901", "g", "n0", "n1"], &forged, now), Err(PeerAuthError::BadMac(_))));
        assert!(b.check_frame(["1901", "g", "n0", "n1"], &frame(&a, b"x", now).0, now).is_ok());
        std::fs::remove_dir_all(&n0).unwrap();
        let rebuilt = PeerAuth::open(&n0, secret).unwrap();
        assert_ne!(rebuilt.public_key(), a.public_key());
        assert!(b.check_frame(["1901", "g", "n0", "n1"], &frame(&rebuilt, b"x", now).0, now).is_ok(), "re-pinned");
    }
}
