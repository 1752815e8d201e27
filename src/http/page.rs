//! The status page: one HTML file and one script, embedded, no build step and nothing fetched
//! from elsewhere; the script polls the JSON API and draws its charts as inline SVG.

use actix_web::HttpResponse;

/// `GET /`: the status page.
pub async fn index() -> HttpResponse {
    HttpResponse::Ok().content_type("text/html; charset=utf-8").body(include_str!("status.html"))
}

/// `GET /status.js`: the page's script.
pub async fn script() -> HttpResponse {
    HttpResponse::Ok().content_type("text/javascript; charset=utf-8").body(include_str!("status.js"))
}
