//! GET_CONTROLLER_CONFIG and UPDATE_CONTROLLER_CONFIG on the controller listener (Java's
//! `ControllerRequestProcessor`): answered by this node's controller actor, leader or not.

use crate::controller::config::{ConfigUpdateError, GetControllerConfig, UpdateControllerConfig};
use crate::controller::ControllerHandle;
use crate::origin::Origin;
use crate::protocol::{RemotingCommand, ResponseCode};
use crate::settings::properties;

fn answer(code: ResponseCode, remark: Option<String>) -> RemotingCommand {
    RemotingCommand::response(code, remark)
}

/// GET_CONTROLLER_CONFIG: every setting as properties text.
pub(super) async fn get(controller: &ControllerHandle, origin: Origin) -> RemotingCommand {
    match controller.ask(GetControllerConfig { conn: origin.conn }).await {
        Ok(text) => answer(ResponseCode::Success, None).with_body(text),
        Err(e) => answer(ResponseCode::SystemError, Some(format!("controller unavailable: {e}"))),
    }
}

/// UPDATE_CONTROLLER_CONFIG: no body is SUCCESS, as in Java; text that is not properties is
/// SYSTEM_ERROR with Java's remark; a blacklisted key NO_PERMISSION; a bad value or a key read
/// at start only SYSTEM_ERROR naming the key. Nothing applies unless all of it can.
pub(super) async fn update(controller: &ControllerHandle, origin: Origin, req: &RemotingCommand) -> RemotingCommand {
    let Some(body) = req.body.as_deref() else {
        return answer(ResponseCode::Success, None);
    };
    let parsed = std::str::from_utf8(body).ok().and_then(|text| properties::parse(text).ok());
    let Some(changes) = parsed else {
        return answer(ResponseCode::SystemError, Some("string2Properties error".into()));
    };
    let update = UpdateControllerConfig { conn: origin.conn, peer: origin.peer, changes };
    match controller.ask(update).await {
        Ok(Ok(())) => answer(ResponseCode::Success, None),
        Ok(Err(e @ ConfigUpdateError::BlackListed(_))) => answer(ResponseCode::NoPermission, Some(e.to_string())),
        Ok(Err(e)) => answer(ResponseCode::SystemError, Some(e.to_string())),
        Err(e) => answer(ResponseCode::SystemError, Some(format!("controller unavailable: {e}"))),
    }
}
