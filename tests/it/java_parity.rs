//! Answers that follow Java's processor where the header checks are skipped (requests with no
//! extFields at all) and the topic lists that read Java's tables, over real TCP.

use crate::common::checks::{assert_success, body_text};
use crate::common::requests::request;
use crate::common::*;
use namesrv::protocol::RemotingCommand;
use serde_json::json;

/// A request with no extFields at all (`"extFields"` absent from the JSON header).
fn bare(code: i32) -> RemotingCommand {
    RemotingCommand::request(code, None)
}

#[test]
fn requests_without_ext_fields_get_what_java_answers_for_null_fields() {
    let server = TestServer::start();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"])));
    let mut client = server.client();

    let get = client.call(bare(101));
    assert_eq!((get.code, get.remark.as_deref()), (22, Some("No config item, Namespace: null Key: null")));
    assert_eq!(get.ext_fields.map(|f| f.len()), Some(0), "an empty extFields, as the attached response header");
    assert_success(&client.call(bare(102)));
    let list = client.call(bare(219));
    assert_eq!((list.code, list.remark.as_deref()), (22, Some("No config item, Namespace: null")));

    let wipe = client.call(bare(205));
    assert_success(&wipe);
    assert_eq!(wipe.ext("wipeTopicCount"), Some("0"));
    let add = client.call(bare(327));
    assert_success(&add);
    assert_eq!(add.ext("addTopicCount"), Some("0"));
    assert_success(&client.call(bare(216)));
    let by_cluster = client.call(bare(224));
    assert_success(&by_cluster);
    assert_eq!(body_text(&by_cluster), r#"{"topicList":[]}"#);

    assert_eq!(client.route("T1").unwrap()["queueDatas"][0]["perm"], 6, "nothing changed");
}

#[test]
fn topics_by_cluster_without_ext_fields_is_still_refused_when_the_list_is_disabled() {
    let server = TestServer::with(|s| s.routing.enable_topic_list = false);
    let resp = server.client().call(bare(224));
    assert_eq!((resp.code, resp.remark.as_deref()), (1, Some("disable")));
}

#[test]
fn the_system_topic_list_reads_the_cluster_table_as_java_does() {
    let server = TestServer::start();
    let mut conn = server.client();
    let broker = Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["T1", "T2"]);
    assert_success(&conn.register(&broker));
    let mut wrong = broker.clone();
    wrong.cluster = "elsewhere".into();
    assert_success(&conn.unregister(&wrong));
    let mut client = server.client();
    assert_eq!(client.route("T1"), Err(17), "the group is found by name");
    let resp = client.call(bare(304));
    let list: serde_json::Value = serde_json::from_slice(resp.body.as_deref().unwrap()).unwrap();
    assert_eq!(list, json!({"topicList": ["b", "c"]}), "the name stays in its cluster's set, as in Java");
}

// ---------------------------------------------------------------------------------------------
// Topic names: Java's RouteInfoManager.registerBroker and DefaultRequestProcessor.registerTopicToNamesrv
// call no TopicValidator, so every name is routed as sent.

#[test]
fn a_first_registration_with_dotted_spaced_and_plain_topics_routes_all_three() {
    let server = TestServer::start();
    let mut conn = server.client();
    // The single-topic guard counts the table as sent: three topics, not the one left over.
    assert_success(&conn.register(&Broker::new("c", "b", 0, "127.0.0.1:10911").topics(&["Odd.T", "Odd T2", "OkT"])));
    let mut client = server.client();
    for name in ["Odd.T", "Odd T2", "OkT"] {
        assert!(client.route(name).is_ok(), "{name} is routed");
    }
}

#[test]
fn register_topic_in_namesrv_accepts_what_java_accepts() {
    let server = TestServer::start();
    let mut conn = server.client();
    assert_success(&conn.register(&Broker::new("c", "broker-a", 0, "127.0.0.1:10911").topics(&["T1", "T2"])));
    let long = "t".repeat(200);
    let body = json!({"brokerDatas": [], "filterServerTable": {}, "queueDatas": [
        {"brokerName": "broker-a", "perm": 6, "readQueueNums": 4, "topicSysFlag": 0, "writeQueueNums": 4}
    ]});
    let mut client = server.client();
    for name in ["a.b", "x y", long.as_str()] {
        let req = request(217, &[("topic", name)]).with_body(serde_json::to_vec(&body).unwrap());
        assert_success(&client.call(req));
        assert!(client.route(name).is_ok(), "{name} is routed after REGISTER_TOPIC_IN_NAMESRV");
    }
}
