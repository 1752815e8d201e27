//! The shape of a signed broker request. RocketMQ's signature (Java's `AclUtils.combineRequestContent`)
//! covers the field values in key order with no separator, and neither the keys nor the request
//! code: a broker's signed request can be sent again under another code, with a field of empty
//! value added, or with a value split differently across keys, and its signature still holds.
//! The broker codes have known fields (Java's `RegisterBrokerRequestHeader`,
//! `UnRegisterBrokerRequestHeader`, `BrokerHeartbeatRequestHeader`,
//! `QueryDataVersionRequestHeader`), so a signed one is held to them: only its code's fields, no
//! empty value, numbers and booleans as Java prints them, a body only where the code takes one.
//! That refuses a REGISTER_BROKER resent as UNREGISTER_BROKER or BROKER_HEARTBEAT and an
//! injected empty field; what no shape can tell apart is documented under access control.

use crate::acl::verify::Malformed;
use crate::limits::shown;
use crate::protocol::signature::{ACCESS_KEY, SIGNATURE};
use crate::protocol::RemotingCommand;

/// Java's `SessionCredentials.SECURITY_TOKEN`, sent by accounts with a session token.
const SECURITY_TOKEN: &str = "SecurityToken";
/// Fields hooks add to any request: the credentials (Java's `AclClientRPCHook`) and the zone
/// (Java's `DynamicalExtFieldRPCHook`, `MixAll.ZONE_NAME` and `ZONE_MODE`).
const HOOK_FIELDS: &[&str] = &[ACCESS_KEY, SIGNATURE, SECURITY_TOKEN, "__ZONE_NAME", "__ZONE_MODE"];

/// Fields printed by Java's `Long.toString` / `Integer.toString`.
const NUMERIC: &[&str] = &[
    "brokerId",
    "heartbeatTimeoutMillis",
    "bodyCrc32",
    "epoch",
    "maxOffset",
    "confirmOffset",
    "heartbeatTimeoutMills",
    "electionPriority",
];
/// Fields printed by Java's `Boolean.toString`.
const BOOLEAN: &[&str] = &["compressed", "enableActingMaster"];

/// The fields a broker code's header has, and whether it carries a body.
struct Shape {
    fields: &'static [&'static str],
    body: bool,
}

const IDENTITY: &[&str] = &["brokerName", "brokerAddr", "clusterName", "brokerId"];

/// The shape of broker code `code`; `None` for any other code.
fn shape(code: i32) -> Option<Shape> {
    Some(match code {
        103 => Shape {
            fields: &[
                "brokerName",
                "brokerAddr",
                "clusterName",
                "haServerAddr",
                "brokerId",
                "heartbeatTimeoutMillis",
                "enableActingMaster",
                "compressed",
                "bodyCrc32",
            ],
            body: true,
        },
        104 => Shape { fields: IDENTITY, body: false },
        322 => Shape { fields: IDENTITY, body: true },
        904 => Shape {
            fields: &[
                "clusterName",
                "brokerAddr",
                "brokerName",
                "brokerId",
                "epoch",
                "maxOffset",
                "confirmOffset",
                "heartbeatTimeoutMills",
                "electionPriority",
            ],
            body: false,
        },
        _ => return None,
    })
}

/// Checks a signed request against its code's shape; codes without one pass.
pub fn check(req: &RemotingCommand) -> Result<(), Malformed> {
    let Some(shape) = shape(req.code) else { return Ok(()) };
    for (key, value) in req.ext_fields.iter().flat_map(|f| f.iter()) {
        if !shape.fields.contains(&key) && !HOOK_FIELDS.contains(&key) {
            return Err(Malformed::Field { code: req.code, field: shown(key) });
        }
        if value.is_empty() {
            return Err(Malformed::Empty(key.to_owned()));
        }
        let kind = if NUMERIC.contains(&key) && !canonical_integer(value) {
            "number"
        } else if BOOLEAN.contains(&key) && value != "true" && value != "false" {
            "boolean"
        } else {
            continue;
        };
        return Err(Malformed::NotCanonical { field: key.to_owned(), kind, value: shown(value) });
    }
    let has_body = req.body.as_ref().is_some_and(|b| !b.is_empty());
    if has_body != shape.body {
        return Err(Malformed::Body { code: req.code, expected: shape.body });
    }
    Ok(())
}

/// `0`, or an optional `-` and digits without a leading zero.
fn canonical_integer(value: &str) -> bool {
    let digits = value.strip_prefix('-').unwrap_or(value);
    let plain = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    plain && (digits == "0" && value == "0" || !digits.starts_with('0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ExtFields;

    fn req(code: i32, fields: &[(&str, &str)], body: Option<&[u8]>) -> RemotingCommand {
        let mut ext = ExtFields::default();
        for (k, v) in fields {
            ext.insert((*k).to_owned(), (*v).to_owned());
        }
        let cmd = RemotingCommand::request(code, Some(ext));
        match body {
            Some(b) => cmd.with_body(b.to_vec()),
            None => cmd,
        }
    }

    const REGISTER: &[(&str, &str)] = &[
        ("brokerName", "b"),
        ("brokerAddr", "127.0.0.1:10911"),
        ("clusterName", "c"),
        ("haServerAddr", "127.0.0.1:10912"),
        ("brokerId", "0"),
        ("compressed", "false"),
        ("bodyCrc32", "-12"),
        (ACCESS_KEY, "k"),
        (SIGNATURE, "s"),
    ];

    #[test]
    fn what_java_brokers_send_passes() {
        assert_eq!(check(&req(103, REGISTER, Some(b"{}"))), Ok(()));
        assert_eq!(check(&req(104, &[("brokerName", "b"), ("brokerId", "0")], None)), Ok(()));
        assert_eq!(check(&req(105, &[("anything", "")], None)), Ok(()), "other codes are not shaped");
    }

    #[test]
    fn a_registration_resent_under_another_code_is_malformed() {
        for code in [104, 904] {
            assert!(matches!(check(&req(code, REGISTER, Some(b"{}"))), Err(Malformed::Field { .. })), "{code}");
        }
        assert_eq!(
            check(&req(104, &[("brokerName", "b")], Some(b"x"))),
            Err(Malformed::Body { code: 104, expected: false })
        );
        assert_eq!(check(&req(103, REGISTER, None)), Err(Malformed::Body { code: 103, expected: true }));
    }

    #[test]
    fn empty_unknown_and_non_canonical_fields_are_malformed() {
        assert_eq!(check(&req(904, &[("brokerName", "")], None)), Err(Malformed::Empty("brokerName".into())));
        assert!(matches!(check(&req(904, &[("zz", "x")], None)), Err(Malformed::Field { .. })));
        for id in ["010", "+1", " 1", "-0", "1.0", ""] {
            let got = check(&req(904, &[("brokerId", id)], None));
            assert!(got.is_err(), "brokerId {id:?}");
        }
        assert!(check(&req(904, &[("brokerId", "-1")], None)).is_ok());
        assert!(matches!(
            check(&req(103, &[("compressed", "TRUE")], Some(b"{}"))),
            Err(Malformed::NotCanonical { .. })
        ));
    }
}
