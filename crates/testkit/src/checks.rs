//! Response and route inspection shared by the acceptance, admin, topic-list and zone tests.

use namesrv::protocol::RemotingCommand;
use serde_json::Value;

/// Asserts a SUCCESS response, showing the remark otherwise.
pub fn assert_success(resp: &RemotingCommand) {
    assert_eq!(resp.code, 0, "remark: {:?}", resp.remark);
}

/// The body of a response as text.
pub fn body_text(resp: &RemotingCommand) -> String {
    String::from_utf8(resp.body.as_deref().expect("response body").to_vec()).expect("utf-8 body")
}

/// The `topicList` of a SUCCESS TopicList response.
pub fn topic_list(resp: &RemotingCommand) -> Vec<String> {
    assert_success(resp);
    let body: Value = serde_json::from_slice(resp.body.as_deref().expect("topic list body")).expect("topic list json");
    body["topicList"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect()
}

/// The sorted names of a route's BrokerDatas.
pub fn broker_names(route: &Value) -> Vec<String> {
    let mut names: Vec<String> =
        route["brokerDatas"].as_array().unwrap().iter().map(|b| b["brokerName"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

/// The sorted broker names of a route's QueueDatas.
pub fn queue_names(route: &Value) -> Vec<String> {
    let mut names: Vec<String> =
        route["queueDatas"].as_array().unwrap().iter().map(|q| q["brokerName"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

/// The commit a `--version` line names (`PROGRAM VERSION (commit C)`), checked to be a commit of
/// this repository: the binary was built inside it, so git knows the commit (a tarball build
/// says "unknown").
pub fn version_commit(line: &str, program: &str, version: &str) -> String {
    let commit = line
        .strip_prefix(&format!("{program} {version} (commit "))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("--version names the version and commit: {line}"));
    let known = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", &format!("{commit}^{{commit}}")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git");
    assert!(known.status.success() && commit.len() >= 7, "{commit} is a commit of this repository");
    commit.to_owned()
}
