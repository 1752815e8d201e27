//! Which form a REGISTER_BROKER body is in, decided as Java's `DefaultRequestProcessor` does:
//! the wrapper of pre-V3_0_11 brokers, the compressed stream, or a plain `RegisterBrokerBody`.

use super::body::{decode_json_form, with_topic_cap, BodyError, BodyLimits, RegisterBody};
use super::code::version;
use super::compressed::decode_compressed;

/// Decodes a REGISTER_BROKER body; no body (or an empty one) is an empty registration.
///
/// `compressed` is the header flag. A body that fails as JSON but looks deflated is tried as
/// compressed too: 5.x brokers with `compressedRegister=true` deflate while sending `false`.
pub fn decode_register_body(
    body: Option<&[u8]>,
    compressed: bool,
    request_version: i32,
    limits: BodyLimits,
) -> Result<RegisterBody, BodyError> {
    let Some(body) = body.filter(|b| !b.is_empty()) else {
        return Ok(RegisterBody::default());
    };
    if compressed && request_version >= version::V3_0_11 {
        return decode_compressed(body, request_version, limits);
    }
    match with_topic_cap(limits.max_topics, || decode_json_form(body, request_version)) {
        Err(BodyError::Json(e)) if request_version >= version::V3_0_11 && !looks_like_json(body) => {
            decode_compressed(body, request_version, limits).map_err(|_| BodyError::Json(e))
        }
        other => other,
    }
}

/// Whether a body starts as JSON does; anything else sent with `compressed=false` may be a
/// deflated body (5.x brokers with `compressedRegister=true` send the flag as false).
pub fn looks_like_json(body: &[u8]) -> bool {
    body.first() == Some(&b'{')
}
