//! Which form a REGISTER_BROKER body is in, decided as Java's `DefaultRequestProcessor` does:
//! the wrapper of pre-V3_0_11 brokers, the compressed stream, or a plain `RegisterBrokerBody`.

use crate::body::compressed::decode_compressed;
use crate::body::register_json::decode_json_form;
use crate::body::{BodyError, DecodeContext, RegisterBody};
use crate::code::version;

/// Decodes a REGISTER_BROKER body; no body (or an empty one) is an empty registration.
///
/// `compressed` is the header flag; `context` bounds the decode and paces it. A body that fails as JSON but looks deflated is tried as
/// compressed too: 5.x brokers with `compressedRegister=true` deflate while sending `false`.
pub fn decode_register_body(
    body: Option<&[u8]>,
    compressed: bool,
    request_version: i32,
    context: &DecodeContext,
) -> Result<RegisterBody, BodyError> {
    let Some(body) = body.filter(|b| !b.is_empty()) else {
        return Ok(RegisterBody::default());
    };
    if compressed && request_version >= version::V3_0_11 {
        return decode_compressed(body, request_version, context);
    }
    match decode_json_form(body, request_version, context) {
        Err(BodyError::Json(e)) if request_version >= version::V3_0_11 && !looks_like_json(body) => {
            decode_compressed(body, request_version, context).map_err(|_| BodyError::Json(e))
        }
        other => other,
    }
}

/// Whether a body starts as JSON does; anything else sent with `compressed=false` may be a
/// deflated body (5.x brokers with `compressedRegister=true` send the flag as false).
pub fn looks_like_json(body: &[u8]) -> bool {
    body.first() == Some(&b'{')
}
