//! RocketMQ's session-credential signature on remoting requests (Java's `AclClientRPCHook`,
//! `AclUtils.combineRequestContent` and `AclSigner.calSignature`): pure functions, shared by a
//! client that signs and a server that verifies. No key store and no policy here.
//!
//! The signed content is the value of every ext field except `Signature`, in key order (Java's
//! `TreeMap`: UTF-16 code-unit order, which is byte order for the ASCII keys RocketMQ uses),
//! concatenated with no separator, then the body bytes. The signature is
//! `base64(HMAC-SHA1(secretKey, content))`, standard alphabet with padding.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha1::Sha1;

use crate::command::{ExtFields, RemotingCommand};

/// The ext field carrying the access key (Java's `SessionCredentials.ACCESS_KEY`).
pub const ACCESS_KEY: &str = "AccessKey";
/// The ext field carrying the signature (Java's `SessionCredentials.SIGNATURE`).
pub const SIGNATURE: &str = "Signature";
/// The ext field carrying the optional session token (Java's `SessionCredentials.SECURITY_TOKEN`).
pub const SECURITY_TOKEN: &str = "SecurityToken";

/// An access key, its secret and an optional session token (Java's `SessionCredentials`).
#[derive(Clone, PartialEq, Eq)]
pub struct SessionCredentials {
    /// Sent in the clear as `AccessKey`.
    pub access_key: String,
    /// Never sent: it keys the HMAC.
    pub secret_key: String,
    /// Sent (and signed) as `SecurityToken` when present.
    pub security_token: Option<String>,
}

impl std::fmt::Debug for SessionCredentials {
    /// Shows the access key only, so credentials never reach a log through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCredentials").field("access_key", &self.access_key).finish_non_exhaustive()
    }
}

/// The bytes that get signed: every field's value except `Signature`'s, sorted by key, then the body.
pub fn signed_content<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>, body: Option<&[u8]>) -> Vec<u8> {
    let mut entries: Vec<(&str, &str)> = fields.into_iter().filter(|(k, _)| *k != SIGNATURE).collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let body = body.unwrap_or_default();
    let mut content = Vec::with_capacity(entries.iter().map(|(_, v)| v.len()).sum::<usize>() + body.len());
    for (_, value) in entries {
        content.extend_from_slice(value.as_bytes());
    }
    content.extend_from_slice(body);
    content
}

/// The HMAC-SHA1 of `content` keyed by `secret`.
fn mac(content: &[u8], secret: &str) -> Hmac<Sha1> {
    // HMAC accepts keys of any length (longer ones are hashed), so this never fails.
    let mut mac = <Hmac<Sha1> as KeyInit>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(content);
    mac
}

/// The signature of `fields` (any `Signature` among them is skipped) and `body` under `secret`.
pub fn sign<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>, body: Option<&[u8]>, secret: &str) -> String {
    STANDARD.encode(mac(&signed_content(fields, body), secret).finalize().into_bytes())
}

/// True when `signature` is the signature of `fields` and `body` under `secret`, compared in
/// constant time (Java compares with `MessageDigest.isEqual`). Malformed base64 is false.
pub fn verify<'a>(
    fields: impl IntoIterator<Item = (&'a str, &'a str)>,
    body: Option<&[u8]>,
    secret: &str,
    signature: &str,
) -> bool {
    match STANDARD.decode(signature) {
        Ok(expected) => mac(&signed_content(fields, body), secret).verify_slice(&expected).is_ok(),
        Err(_) => false,
    }
}

/// Signs a request as Java's `AclClientRPCHook.doBeforeRequest` does: adds `AccessKey` (and
/// `SecurityToken` when given), then `Signature` over all fields and the body.
pub fn sign_command(cmd: &mut RemotingCommand, credentials: &SessionCredentials) {
    let fields = cmd.ext_fields.get_or_insert_with(ExtFields::new);
    fields.insert(ACCESS_KEY, credentials.access_key.as_str());
    if let Some(token) = &credentials.security_token {
        fields.insert(SECURITY_TOKEN, token.as_str());
    }
    let signature = sign(fields.iter(), cmd.body.as_deref(), &credentials.secret_key);
    fields.insert(SIGNATURE, signature);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        pairs.iter().copied()
    }

    #[test]
    fn minimal_vector_signs_the_access_key_alone() {
        assert_eq!(sign(fields(&[("AccessKey", "ak")]), None, "sk"), "AL2pakQ4gJnpWeA42COL+SacNKk=");
        assert_eq!(sign(fields(&[("AccessKey", "ak")]), Some(b""), "sk"), "AL2pakQ4gJnpWeA42COL+SacNKk=");
    }

    #[test]
    fn fields_are_sorted_by_key_and_the_body_follows() {
        let pairs = [("z", "last"), ("a", "first"), ("SecurityToken", "token"), ("AccessKey", "ak")];
        assert_eq!(signed_content(fields(&pairs), Some(b"body")), b"aktokenfirstlastbody");
        assert_eq!(sign(fields(&pairs), Some(b"body"), "secret"), "wuJkFDNRMKY6aFXTDwT/vg0UC8M=");
    }

    #[test]
    fn an_empty_value_contributes_nothing() {
        let pairs = [("topic", "TopicTest"), ("ns", ""), ("AccessKey", "rocketmq2")];
        assert_eq!(sign(fields(&pairs), None, "12345678"), "GeeGoP9mRvDhoVp4PD5omX0prgE=");
    }

    #[test]
    fn non_ascii_values_and_secret_sign_as_utf8_and_a_stale_signature_is_skipped() {
        let pairs = [
            ("Signature", "IGNORED"),
            ("heartbeatTimeoutMillis", "120000"),
            ("haServerAddr", "192.168.0.1:10912"),
            ("enableActingMaster", "false"),
            ("compressed", "false"),
            ("clusterName", "集群A"),
            ("brokerName", "broker-ä"),
            ("brokerId", "0"),
            ("brokerAddr", "192.168.0.1:10911"),
            ("bodyCrc32", "0"),
            ("SecurityToken", "tok"),
            ("AccessKey", "ak"),
        ];
        let body = r#"{"topic":"主题"}"#.as_bytes();
        assert_eq!(sign(fields(&pairs), Some(body), "sëcret"), "9rFCPKYRIAa7FRxtWPQ1DjIYgLs=");
    }

    #[test]
    fn javas_server_would_sign_an_empty_binary_value_as_null_which_is_why_empty_means_absent() {
        // Java's RocketMQSerializable.readStr gives null for a zero-length value and the server's
        // combineRequestContent appends "null": a content the client never signed.
        assert_eq!(sign(fields(&[("x", "rocketmq2nullTopicTest")]), None, "12345678"), "fMikLT91OokX39NqxFnhnm4JgZY=");
        let pairs = [("topic", "TopicTest"), ("AccessKey", "rocketmq2")];
        assert_eq!(sign(fields(&pairs), None, "12345678"), "GeeGoP9mRvDhoVp4PD5omX0prgE=", "the field left out");
    }

    #[test]
    fn rocketmq_auths_signer_vector_holds() {
        // rocketmq-auth 1.0.0 acl_signer test: HmacSHA1("alicetopic-a", "secret").
        let pairs = [("username", "alice"), ("topic", "topic-a")];
        assert_eq!(signed_content(fields(&pairs), None), b"topic-aalice", "sorted by key");
        assert_eq!(sign(fields(&[("x", "alicetopic-a")]), None, "secret"), "3yomro7y0WqWcbV+9tQa4av5w3Q=");
    }

    #[test]
    fn javas_signer_vector_holds() {
        // AclSignerTest.calSignatureTest: HmacSHA1("RocketMQ", "12345678").
        assert_eq!(sign(fields(&[("k", "RocketMQ")]), None, "12345678"), "IUc8rrO/0gDch8CjObLQsW2rsiA=");
    }

    #[test]
    fn verify_accepts_the_signature_and_rejects_any_change() {
        let pairs = [("AccessKey", "ak"), ("topic", "T")];
        let good = sign(fields(&pairs), Some(b"x"), "sk");
        assert!(verify(fields(&pairs), Some(b"x"), "sk", &good));
        assert!(!verify(fields(&pairs), Some(b"y"), "sk", &good));
        assert!(!verify(fields(&pairs), Some(b"x"), "other", &good));
        assert!(!verify(fields(&[("AccessKey", "ak"), ("topic", "U")]), Some(b"x"), "sk", &good));
        assert!(!verify(fields(&pairs), Some(b"x"), "sk", "not base64!"));
        assert!(!verify(fields(&pairs), Some(b"x"), "sk", ""));
    }

    #[test]
    fn sign_command_adds_access_key_token_and_a_verifiable_signature() {
        let mut cmd = RemotingCommand::request(105, Some(ExtFields::new().with("topic", "T"))).with_body(&b"b"[..]);
        let creds =
            SessionCredentials { access_key: "ak".into(), secret_key: "sk".into(), security_token: Some("tok".into()) };
        sign_command(&mut cmd, &creds);
        assert_eq!(cmd.ext(ACCESS_KEY), Some("ak"));
        assert_eq!(cmd.ext(SECURITY_TOKEN), Some("tok"));
        let signature = cmd.ext(SIGNATURE).expect("signed").to_owned();
        // content: "ak" + "tok" + "T" + body "b"
        assert_eq!(signature, sign(fields(&[("x", "aktokT")]), Some(b"b"), "sk"));
        let ext = cmd.ext_fields.as_ref().expect("fields");
        assert!(verify(ext.iter(), cmd.body.as_deref(), "sk", &signature));
        // Signing again (a retry) replaces the signature instead of signing the old one.
        sign_command(&mut cmd, &creds);
        assert_eq!(cmd.ext(SIGNATURE), Some(signature.as_str()));
    }

    #[test]
    fn debug_output_hides_the_secret() {
        let creds = SessionCredentials { access_key: "ak".into(), secret_key: "hunter2".into(), security_token: None };
        let shown = format!("{creds:?}");
        assert!(shown.contains("ak") && !shown.contains("hunter2"), "{shown}");
    }
}
