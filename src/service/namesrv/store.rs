//! KV config (PUT/GET/DELETE_KV_CONFIG, GET_KVLIST_BY_NAMESPACE) and runtime configuration
//! (GET/UPDATE_NAMESRV_CONFIG).

use tracing::info;

use super::{success, Dispatcher, Outcome, RequestError};
use crate::config_store::{GetConfig, UpdateConfig};
use crate::kv::{DeleteKv, GetKv, GetKvList, PutKv};
use crate::limits::{check_name, LimitError};
use crate::origin::{ConnId, Origin};
use crate::protocol::header::Fields;
use crate::protocol::reply::body::encode_kv_table;
use crate::protocol::{ExtFields, RemotingCommand, ResponseCode};
use crate::settings::properties;

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
        check_name("namespace", &put.namespace)?;
        check_name("key", &put.key)?;
        let max = self.options.kv_max_value_bytes;
        if put.value.len() > max {
            return Err(LimitError::ValueTooLarge { len: put.value.len(), max }.into());
        }
        let (namespace, key) = (put.namespace.clone(), put.key.clone());
        self.actors.kv.ask(put).await??;
        info!(%namespace, %key, "kv config put");
        Ok(success())
    }

    pub(super) async fn get_kv_config(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        let f = Fields::of(req);
        if req.ext_fields.is_none() {
            // Java skips header checks without extFields; null fields find nothing.
            return Ok(RemotingCommand {
                ext_fields: Some(ExtFields::new()),
                ..RemotingCommand::response(
                    ResponseCode::QueryNotFound,
                    Some("No config item, Namespace: null Key: null".into()),
                )
            });
        }
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
        if req.ext_fields.is_none() {
            // Java deletes the null key of the null namespace: nothing, and answers SUCCESS.
            return Ok(success());
        }
        let f = Fields::of(req);
        let delete =
            DeleteKv { conn, namespace: f.required("namespace")?.to_owned(), key: f.required("key")?.to_owned() };
        let (namespace, key) = (delete.namespace.clone(), delete.key.clone());
        self.actors.kv.ask(delete).await??;
        info!(%namespace, %key, "kv config deleted");
        Ok(success())
    }

    pub(super) async fn get_kv_list(&self, conn: ConnId, req: &RemotingCommand) -> Outcome {
        if req.ext_fields.is_none() {
            let remark = "No config item, Namespace: null";
            return Ok(RemotingCommand::response(ResponseCode::QueryNotFound, Some(remark.into())));
        }
        let namespace = Fields::of(req).required("namespace")?.to_owned();
        // Held until the reply is built: the connection then admits it against its reply bounds.
        let _permit = self.large_replies.acquire().await?;
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

    pub(super) async fn update_config(&self, origin: Origin, req: &RemotingCommand) -> Outcome {
        let conn = origin.conn;
        let Some(body) = req.body.as_deref() else {
            return Ok(success());
        };
        let text = std::str::from_utf8(body).map_err(|_| RequestError::BadProperties)?;
        let changes = properties::parse(text).map_err(|_| RequestError::BadProperties)?;
        self.actors.config.ask(UpdateConfig { conn, peer: origin.peer, changes }).await??;
        Ok(success())
    }
}
