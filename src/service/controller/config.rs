//! GET_CONTROLLER_CONFIG and UPDATE_CONTROLLER_CONFIG on the controller port (Java's
//! `ControllerRequestProcessor`): answered by this node's controller actor, leader or not.

use super::reply::{success, ControllerError};
use crate::controller::config::{GetControllerConfig, UpdateControllerConfig};
use crate::controller::messages::{Failure, Unavailable};
use crate::controller::ControllerHandle;
use crate::origin::Origin;
use crate::protocol::RemotingCommand;
use crate::settings::properties;

/// The controller actor did not answer.
fn gone(error: actix::MailboxError) -> ControllerError {
    Failure::Unavailable(Unavailable::Mailbox(error)).into()
}

/// GET_CONTROLLER_CONFIG: every setting as properties text.
pub(super) async fn get(controller: &ControllerHandle, origin: Origin) -> Result<RemotingCommand, ControllerError> {
    let text = controller.ask(GetControllerConfig { conn: origin.conn }).await.map_err(gone)?;
    Ok(success(None).with_body(text))
}

/// UPDATE_CONTROLLER_CONFIG: no body is SUCCESS, as in Java; text that is not properties is
/// SYSTEM_ERROR with Java's remark; a blacklisted key NO_PERMISSION; a bad value or a key read
/// at start only SYSTEM_ERROR naming the key. Nothing applies unless all of it can.
pub(super) async fn update(
    controller: &ControllerHandle,
    origin: Origin,
    req: &RemotingCommand,
) -> Result<RemotingCommand, ControllerError> {
    let Some(body) = req.body.as_deref() else {
        return Ok(success(None));
    };
    let parsed = std::str::from_utf8(body).ok().and_then(|text| properties::parse(text).ok());
    let changes = parsed.ok_or(ControllerError::NotProperties)?;
    let update = UpdateControllerConfig { conn: origin.conn, peer: origin.peer, changes };
    controller.ask(update).await.map_err(gone)??;
    Ok(success(None))
}
