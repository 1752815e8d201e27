//! KV config (PUT/GET/DELETE_KV_CONFIG, GET_KVLIST_BY_NAMESPACE) and runtime configuration
//! (GET/UPDATE_NAMESRV_CONFIG).

use super::{success, Dispatcher, Outcome, RequestError};
use crate::config_store::{ConfigError, GetConfig, UpdateConfig};
use crate::kv::{encode_kv_table, DeleteKv, GetKv, GetKvList, PutKv};
use crate::mailbox::ConnId;
use crate::protocol::header::Fields;
use crate::protocol::{ExtFields, RemotingCommand, ResponseCode};
use crate::settings::{properties, UpdateError};

impl Dispatcher {
    pub(super) async fn put_kv_config(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        if req.ext_fields.is_none() {
            return Err(RequestError::NamespaceOrKeyNull);
        }
        let f = Fields::of(req);
        let put = PutKv {
            conn,
            namespace: f.required("namespace")?.to_owned(),
            key: f.required("key")?.to_owned(),
            value: f.required("value")?.to_owned(),
        };
        self.actors.kv.ask(put).await?.map_err(RequestError::Store)?;
        Ok(success())
    }

    pub(super) async fn get_kv_config(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let f = Fields::of(req);
        let (namespace, key) = (f.required("namespace")?.to_owned(), f.required("key")?.to_owned());
        let get = GetKv { conn, namespace: namespace.clone(), key: key.clone() };
        Ok(match self.actors.kv.ask(get).await? {
            Some(value) => RemotingCommand { ext_fields: Some(ExtFields::new().with("value", value)), ..success() },
            None => RemotingCommand {
                ext_fields: Some(ExtFields::new()),
                ..RemotingCommand::response(
                    ResponseCode::QueryNotFound,
                    Some(format!("No config item, Namespace: {namespace} Key: {key}")),
                )
            },
        })
    }

    pub(super) async fn delete_kv_config(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let f = Fields::of(req);
        let delete =
            DeleteKv { conn, namespace: f.required("namespace")?.to_owned(), key: f.required("key")?.to_owned() };
        self.actors.kv.ask(delete).await?.map_err(RequestError::Store)?;
        Ok(success())
    }

    pub(super) async fn get_kv_list(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let namespace = Fields::of(req).required("namespace")?.to_owned();
        Ok(match self.actors.kv.ask(GetKvList { conn, namespace: namespace.clone() }).await? {
            Some(table) => success().with_body(encode_kv_table(&table)),
            None => RemotingCommand::response(
                ResponseCode::QueryNotFound,
                Some(format!("No config item, Namespace: {namespace}")),
            ),
        })
    }

    pub(super) async fn get_config(&self, conn: ConnId) -> Outcome {
        let text = self.actors.config.ask(GetConfig { conn }).await?;
        Ok(success().with_body(text))
    }

    pub(super) async fn update_config(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let Some(body) = req.body.as_deref() else {
            return Ok(success());
        };
        let text = std::str::from_utf8(body).map_err(|_| RequestError::BadProperties)?;
        let changes = properties::parse(text).map_err(|_| RequestError::BadProperties)?;
        match self.actors.config.ask(UpdateConfig { conn, changes }).await? {
            Ok(()) => Ok(success()),
            Err(ConfigError::Update(UpdateError::BlackListed(_))) => Err(RequestError::BlackListed),
            Err(e) => Err(RequestError::Store(e.to_string())),
        }
    }
}
