//! Admin changes: WIPE/ADD_WRITE_PERM_OF_BROKER (205/327), DELETE_TOPIC_IN_NAMESRV (216),
//! REGISTER_TOPIC_IN_NAMESRV (217), PUT/DELETE_KV_CONFIG (100/102), and the answers to
//! requests that carry no extFields at all (`RemotingCommand.decodeCommandCustomHeader` then
//! returns a header whose fields are all null).

use std::collections::BTreeMap;

use serde_json::json;

use super::answer::topic_not_exist_remark;
use super::register::PERM_WRITE;
use super::{Answer, Body, Model, QueueData};

/// `PermName.PERM_READ | PermName.PERM_WRITE`.
const PERM_READ_WRITE: i32 = 6;

impl Model {
    /// WIPE_WRITE_PERM_OF_BROKER: clears the write bit of the group's queues in every topic
    /// (`operateWritePermOfBroker`); counts every topic holding them.
    pub fn wipe_write_perm(&mut self, name: &str) -> Answer {
        let count = self.edit_perms(name, |perm| perm & !PERM_WRITE);
        Answer::with_ext(&[("wipeTopicCount", count.to_string())])
    }

    /// ADD_WRITE_PERM_OF_BROKER: sets the perm to read|write, dropping other bits.
    pub fn add_write_perm(&mut self, name: &str) -> Answer {
        let count = self.edit_perms(name, |_| PERM_READ_WRITE);
        Answer::with_ext(&[("addTopicCount", count.to_string())])
    }

    /// Applies `edit` to the group's queues in every topic; returns how many topics.
    fn edit_perms(&mut self, name: &str, edit: impl Fn(i32) -> i32) -> usize {
        let queues = self.tables.topics.values_mut().filter_map(|q| q.get_mut(name));
        queues.map(|q| q.perm = edit(q.perm)).count()
    }

    /// DELETE_TOPIC_IN_NAMESRV: with a non-empty cluster, the queues of the names in its set
    /// (`deleteTopic(topic, cluster)`; an unknown or empty set changes nothing); else the topic.
    pub fn delete_topic(&mut self, topic: &str, cluster: Option<&str>) -> Answer {
        let t = &mut self.tables;
        match cluster.filter(|c| !c.is_empty()) {
            None => {
                t.topics.remove(topic);
            }
            Some(cluster) => {
                let names = t.clusters.get(cluster).cloned().unwrap_or_default();
                if let Some(queues) = t.topics.get_mut(topic).filter(|_| !names.is_empty()) {
                    queues.retain(|name, _| !names.contains(name));
                    if queues.is_empty() {
                        t.topics.remove(topic);
                    }
                }
            }
        }
        Answer::success()
    }

    /// REGISTER_TOPIC_IN_NAMESRV (`RouteInfoManager.registerTopic`): an existing topic takes the
    /// queue data in order until the first broker name with no group; a new topic is stored
    /// only if every name has a group. Always SUCCESS.
    pub fn register_topic(&mut self, topic: &str, queues: &[(String, QueueData)]) -> Answer {
        let t = &mut self.tables;
        let known = queues.iter().take_while(|(name, _)| t.brokers.contains_key(name)).count();
        let exists = t.topics.contains_key(topic);
        let all_known = known == queues.len();
        if !queues.is_empty() && (exists || all_known || self.pending.register_topic_new_topic_partial) {
            let mut stored = t.topics.remove(topic).unwrap_or_default();
            stored.extend(queues[..known].iter().cloned());
            if !stored.is_empty() {
                t.topics.insert(topic.to_owned(), stored);
            }
        }
        Answer::success()
    }

    /// PUT_KV_CONFIG: creates the namespace if needed.
    pub fn put_kv(&mut self, namespace: &str, key: &str, value: &str) -> Answer {
        self.tables.kv.entry(namespace.to_owned()).or_default().insert(key.to_owned(), value.to_owned());
        Answer::success()
    }

    /// DELETE_KV_CONFIG: removes the key; an emptied namespace stays.
    pub fn delete_kv(&mut self, namespace: &str, key: &str) -> Answer {
        if let Some(table) = self.tables.kv.get_mut(namespace) {
            table.remove(key);
        }
        Answer::success()
    }

    /// GET_KVLIST_BY_NAMESPACE: the namespace as a `KVTable`, or QUERY_NOT_FOUND.
    pub fn kv_list(&self, namespace: &str) -> Answer {
        match self.tables.kv.get(namespace) {
            Some(table) => Answer::json(json!({ "table": table })),
            None => Answer::error(22, &format!("No config item, Namespace: {namespace}")),
        }
    }

    /// A request of `code` with no extFields at all, changing nothing.
    pub fn without_ext_fields(&self, code: i32) -> Answer {
        let no_config = |what: &str| Answer::error(22, &format!("No config item, Namespace: null{what}"));
        match code {
            100 => Answer::error(1, "namespace or key is null"),
            101 => Answer { ext: Some(BTreeMap::new()), ..no_config(" Key: null") },
            205 => Answer::with_ext(&[("wipeTopicCount", "0".into())]),
            327 => Answer::with_ext(&[("addTopicCount", "0".into())]),
            219 => no_config(""),
            224 => Answer::json(json!({ "topicList": [] })),
            105 => Answer::error(17, &topic_not_exist_remark("null")),
            104 if self.pending.required_fields_checked_without_ext_fields => {
                Answer::error(1, "the custom field <brokerName> is null")
            }
            217 if self.pending.required_fields_checked_without_ext_fields => {
                Answer::error(1, "the custom field <topic> is null")
            }
            // 102, 104 (NPE on the batch thread, nothing applied), 216 (NPE caught), 217.
            _ => Answer { body: Body::None, ..Answer::success() },
        }
    }
}
