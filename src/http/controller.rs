//! `GET /api/v1/controller`: the embedded or standalone controller as this peer sees it (who
//! leads, each broker group's master, epochs and in-sync set); `{"enabled": false}` when no
//! controller runs here.

use std::time::Duration;

use actix_web::{web, HttpResponse};
use serde_json::json;

use super::api::{busy, ApiPermits};
use super::HttpState;
use crate::controller::overview::GetOverview;
use crate::origin::ConnId;

/// How long the call waits for the controller.
const DEADLINE: Duration = Duration::from_secs(2);

/// The controller's overview, or why there is none.
pub async fn overview(state: web::Data<HttpState>, permits: web::Data<ApiPermits>) -> HttpResponse {
    let Some(_permit) = permits.take() else {
        return busy();
    };
    let Some(controller) = &state.controller else {
        return HttpResponse::Ok().json(json!({"enabled": false}));
    };
    match tokio::time::timeout(DEADLINE, controller.ask(GetOverview { conn: ConnId::SERVER })).await {
        Ok(Ok(overview)) => {
            let mut body = serde_json::to_value(overview).unwrap_or_default();
            if let Some(fields) = body.as_object_mut() {
                fields.insert("enabled".into(), json!(true));
            }
            HttpResponse::Ok().json(body)
        }
        Ok(Err(error)) => HttpResponse::ServiceUnavailable().json(json!({"error": error.to_string()})),
        Err(_) => HttpResponse::ServiceUnavailable().json(json!({"error": "controller did not answer in time"})),
    }
}
