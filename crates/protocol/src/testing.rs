//! The fast readers, for the fuzz targets and benchmarks that check them against their general
//! twins and time them. Nothing else calls them: a peer's input reaches them only through the
//! general entry points (`header::json::decode`, `codec`, `body::register`).

use crate::body::{DecodeContext, RegisterBody};
use crate::header::RouteHeader;
use crate::RemotingCommand;

/// The JSON header scanner (`None`: it gave up, the general reader decides).
pub fn scan_header(header: &[u8]) -> Option<RemotingCommand> {
    crate::header::scan::scan(header)
}

/// The route lane's reader of a plain route query header (`None`: not one, or it gave up).
pub fn scan_route(header: &[u8]) -> Option<RouteHeader<'_>> {
    crate::header::scan::scan_route(header)
}

/// The plain JSON register body scanner (`None`: it gave up, the general reader decides).
pub fn scan_register_body(body: &[u8], request_version: i32, context: &DecodeContext) -> Option<RegisterBody> {
    crate::body::register_scan::scan(body, request_version, context)
}
