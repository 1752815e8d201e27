//! How a peer-supplied name is repeated back in remarks and logs.

/// At most this many characters of a peer's access key or broker name are repeated back.
const SHOWN_CHARS: usize = 64;

/// A peer-supplied name as remarks and logs show it: control characters escaped, cut short.
pub fn shown(text: &str) -> String {
    let mut out: String = text.chars().take(SHOWN_CHARS).flat_map(char::escape_debug).collect();
    if text.chars().nth(SHOWN_CHARS).is_some() {
        out.push_str("...");
    }
    out
}
