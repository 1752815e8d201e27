//! Access control and TLS on the controller port (Java's is open to anyone:
//! apache/rocketmq#10956): every protection level against every role and class of code, brokers
//! that sign as Java's AclClientRPCHook signs (an unsigned Java-shaped broker is refused where
//! the broker codes are protected), peers that sign their Raft frames with a peer account, and
//! TLS between brokers, peers and the controller.

use std::path::PathBuf;
use std::time::Duration;

use namesrv::protocol::controller::header::{CleanBrokerDataHeader, ElectMasterHeader, GetNextBrokerIdHeader};
use namesrv::protocol::signature::SessionCredentials;
use namesrv::protocol::RemotingCommand;
use namesrv::settings::{AclProtect, Settings, TlsMode};
use namesrv_client::ConnectOptions;
use namesrv_testkit::controller::ControllerCluster;
use namesrv_testkit::controller_broker::BrokerConfig;
use namesrv_testkit::security::{client_config, signed, write_accounts, Pki};
use namesrv_testkit::{temp_dir, Client, Incoming};

use super::history::check;
use super::{broker, master_and_slave_with, wait_role, WAIT};

const NO_PERMISSION: i32 = 16;

/// One account of each role; the broker accounts list group `cb` and another group.
const ACCOUNTS: &str = r#"
[[accounts]]
access_key = "ops"
secret_key = "ops-secret"
role = "admin"

[[accounts]]
access_key = "cb-key"
secret_key = "cb-secret"
role = "broker"
brokers = ["cb"]

[[accounts]]
access_key = "other-key"
secret_key = "other-secret"
role = "broker"
brokers = ["other"]

[[accounts]]
access_key = "app"
secret_key = "app-secret"
role = "client"

[[accounts]]
access_key = "peer"
secret_key = "peer-secret"
role = "peer"
"#;

/// (access key, secret) of each caller: unsigned, admin, broker of `cb`, broker of another
/// group, client, peer.
const CALLERS: [Option<(&str, &str)>; 6] = [
    None,
    Some(("ops", "ops-secret")),
    Some(("cb-key", "cb-secret")),
    Some(("other-key", "other-secret")),
    Some(("app", "app-secret")),
    Some(("peer", "peer-secret")),
];

fn credentials(key: &str, secret: &str) -> SessionCredentials {
    SessionCredentials { access_key: key.into(), secret_key: secret.into(), security_token: None }
}

/// `n` peers with access control at `protect` (the peers sign as `peer`).
fn acl_cluster(n: usize, protect: AclProtect, edit: impl Fn(&mut Settings)) -> (ControllerCluster, PathBuf) {
    let dir = temp_dir();
    let accounts = write_accounts(&dir, ACCOUNTS);
    let cluster = ControllerCluster::start(n, |s| {
        s.acl.acl_enabled = true;
        s.acl.acl_accounts_file = accounts.display().to_string();
        s.acl.acl_protect = protect;
        s.controller.controller_peer_access_key = "peer".into();
        edit(s);
    });
    // The cluster's own calls (metadata, leader) sign as the admin.
    let admin = ConnectOptions { credentials: Some(credentials("ops", "ops-secret")), ..ConnectOptions::default() };
    (cluster.with_client(admin), dir)
}

/// One request of each class, for group `cb`: metadata, a heartbeat (sent two-way: answered
/// only when refused), the next broker id, an election a broker asks for, an election an admin
/// designates, cleaning, the controller config, a Raft frame.
fn class_requests() -> Vec<RemotingCommand> {
    let next = GetNextBrokerIdHeader { cluster_name: "c".into(), broker_name: "cb".into() };
    let elect = |designate_elect| ElectMasterHeader {
        cluster_name: "c".into(),
        broker_name: "cb".into(),
        broker_id: 1,
        designate_elect,
        invoke_time: None,
    };
    let clean = CleanBrokerDataHeader {
        cluster_name: Some("c".into()),
        broker_name: "cb".into(),
        broker_controller_ids_to_clean: None,
        is_clean_living_broker: Some(false),
        invoke_time: None,
    };
    let beat = [("clusterName", "c"), ("brokerAddr", "127.0.0.1:1"), ("brokerName", "cb"), ("brokerId", "1")];
    vec![
        RemotingCommand::request(1005, None),
        RemotingCommand::request(904, Some(beat.into_iter().collect())),
        RemotingCommand::request(1012, Some(next.to_ext())),
        RemotingCommand::request(1002, Some(elect(false).to_ext())),
        RemotingCommand::request(1002, Some(elect(true).to_ext())),
        RemotingCommand::request(1011, Some(clean.to_ext())),
        RemotingCommand::request(1010, None),
        RemotingCommand::request(1901, None),
    ]
}

/// 'R' when `request` is refused with NO_PERMISSION, '.' when it gets any other answer (or,
/// for the heartbeat, none).
fn seen(client: &mut Client, request: RemotingCommand) -> char {
    let opaque = request.opaque;
    client.send(&request);
    match client.read_frame_within(Duration::from_millis(if request.code == 904 { 300 } else { 5000 })) {
        Incoming::Frame(answer) if answer.code == NO_PERMISSION => 'R',
        Incoming::Frame(answer) => {
            assert_eq!(answer.opaque, opaque, "the answer to this request");
            assert_ne!(request.code, 904, "an admitted heartbeat is never answered");
            '.'
        }
        Incoming::Silent if request.code == 904 => '.',
        other => panic!("no answer to {}: {other:?}", request.code),
    }
}

#[test]
fn every_level_refuses_exactly_what_it_protects_from_every_role_on_the_controller_port() {
    // Rows: unsigned, admin, broker of cb, broker of another group, client, peer. Columns:
    // 1005, 904, 1012, 1002, 1002 designated, 1011, 1010, 1901.
    let expected = [
        // What brokers send needs a broker account of its group at every level (with access
        // control on, nobody speaks for a replica unsigned).
        (AclProtect::Admin, [".RRRRRRR", ".......R", "....RRRR", ".RRRRRRR", ".RRRRRRR", ".RRRRRR."]),
        (AclProtect::Broker, [".RRRRRRR", ".......R", "....RRRR", ".RRRRRRR", ".RRRRRRR", ".RRRRRR."]),
        (AclProtect::All, ["RRRRRRRR", ".......R", "....RRRR", ".RRRRRRR", ".RRRRRRR", "RRRRRRR."]),
    ];
    for (level, rows) in expected {
        let (cluster, _dir) = acl_cluster(1, level, |_| {});
        cluster.wait_leader(WAIT);
        for (caller, row) in CALLERS.iter().zip(rows) {
            let mut client = Client::connect(cluster.addr(0));
            let line: String = class_requests()
                .into_iter()
                .enumerate()
                .map(|(i, req)| {
                    let mut req = req;
                    req.opaque = 100 + i as i32;
                    seen(&mut client, caller.map_or(req.clone(), |(key, secret)| signed(req, key, secret)))
                })
                .collect();
            assert_eq!(line, row, "level {level}, caller {:?}", caller.map(|c| c.0));
        }
    }
}

#[test]
fn an_unsigned_java_shaped_broker_is_refused_and_signed_brokers_fail_over_on_three_signing_peers() {
    let (cluster, _dir) = acl_cluster(3, AclProtect::Broker, |_| {});
    cluster.wait_leader(WAIT);
    // A broker as Java's sends its requests without an RPC hook: its first request is refused,
    // and it never gets an id.
    let unsigned = broker(&cluster, |_| {});
    let next = GetNextBrokerIdHeader { cluster_name: "c".into(), broker_name: "cb".into() };
    let leader = cluster.wait_leader(WAIT);
    let refused = Client::connect(cluster.addr(leader)).call(RemotingCommand::request(1012, Some(next.to_ext())));
    assert_eq!(refused.code, NO_PERMISSION);
    assert!(refused.remark.as_deref().unwrap_or_default().contains("no AccessKey"), "{:?}", refused.remark);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(unsigned.id(), None, "an unsigned broker got an id");
    drop(unsigned);
    // Brokers signing with their group's account register, heartbeat (the slave joins the
    // in-sync set only while alive), and fail over; the writes commit on three peers that sign
    // their Raft frames.
    let signing = |c: &mut BrokerConfig| c.credentials = Some(credentials("cb-key", "cb-secret"));
    let (mut first, second) = master_and_slave_with(&cluster, &signing);
    let killed = first.kill();
    wait_role(&second, true);
    check(&[&second], &[killed]);
}

#[test]
fn a_peer_without_a_peer_account_refuses_to_start_when_access_control_is_on() {
    use crate::common::process::{namesrv_command, run_to_exit};
    let dir = temp_dir();
    let accounts = write_accounts(&dir, ACCOUNTS);
    for key in ["", "ops"] {
        let mut cmd = namesrv_command(&dir);
        cmd.env("NAMESRV_CONTROLLER_MODE", "embedded")
            .env("NAMESRV_CONTROLLER_PEERS", "n0-127.0.0.1:0;n1-127.0.0.1:1")
            .env("NAMESRV_CONTROLLER_SELF_ID", "n0")
            .env("NAMESRV_CONTROLLER_PEER_ACCESS_KEY", key)
            .env("NAMESRV_ACL_ENABLED", "true")
            .env("NAMESRV_ACL_ACCOUNTS_FILE", &accounts)
            .args(["--listen", "127.0.0.1:0"]);
        let (status, _, stderr) = run_to_exit(cmd);
        assert!(!status.success(), "started without a peer account ({key:?})");
        assert!(stderr.contains("controller_peer_access_key must name an account of role peer"), "{stderr}");
    }
}

#[test]
fn with_mutual_tls_peers_brokers_and_tools_meet_only_over_tls() {
    let pki = Pki::new("controller CA");
    let dir = temp_dir();
    let (cert, key) = pki.write_server(&dir, "controller");
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, pki.ca_pem()).unwrap();
    let cluster = ControllerCluster::start(3, |s| {
        s.tls.tls_mode = TlsMode::Enforcing;
        s.tls.tls_cert_file = cert.display().to_string();
        s.tls.tls_key_file = key.display().to_string();
        // Clients must present a certificate from this CA; the peers trust it too (no
        // controller_peer_tls_ca_file) and present their own server certificate.
        s.tls.tls_client_ca_file = ca.display().to_string();
    });
    let tls = client_config(pki.ca_der(), Some(pki.leaf("tool")));
    let options = ConnectOptions { tls: Some(tls.clone()), ..ConnectOptions::default() };
    let cluster = cluster.with_client(options);
    // A leader is elected and serves: the peers' Raft links run over TLS.
    cluster.wait_leader(WAIT);
    let mut plain = Client::connect(cluster.addr(0));
    plain.send(&RemotingCommand::request(1005, None));
    assert!(plain.closed_by_server(Duration::from_secs(3)), "a plain connection is closed");
    let broker_tls = client_config(pki.ca_der(), Some(pki.leaf("broker")));
    let with_tls = |c: &mut BrokerConfig| c.tls = Some(broker_tls.clone());
    let (mut first, second) = master_and_slave_with(&cluster, &with_tls);
    let killed = first.kill();
    wait_role(&second, true);
    check(&[&second], &[killed]);
}

#[test]
fn with_admin_codes_over_tls_only_an_admin_signed_config_change_over_plain_tcp_is_refused_on_the_controller_port() {
    let pki = Pki::new("controller CA");
    let dir = temp_dir();
    let (cert, key) = pki.write_server(&dir, "controller");
    let (cluster, _accounts) = acl_cluster(1, AclProtect::Admin, |s| {
        s.tls.tls_mode = TlsMode::Permissive;
        s.tls.tls_cert_file = cert.display().to_string();
        s.tls.tls_key_file = key.display().to_string();
        s.acl.acl_admin_requires_tls = true;
    });
    cluster.wait_leader(WAIT);
    let update = || {
        let req = RemotingCommand::request(1009, None).with_body(&b"enableElectUncleanMaster=true"[..]);
        signed(req, "ops", "ops-secret")
    };
    let refused = Client::connect(cluster.addr(0)).call(update());
    let remark = "request code 1009 is an admin code: accepted over TLS only (acl_admin_requires_tls)";
    assert_eq!((refused.code, refused.remark.as_deref()), (NO_PERMISSION, Some(remark)), "plain TCP");
    let config = |client: &mut Client| {
        let text = client.call(signed(RemotingCommand::request(1010, None), "ops", "ops-secret")).body;
        String::from_utf8(text.unwrap_or_default().to_vec()).unwrap()
    };
    let mut over_tls =
        namesrv_testkit::security::tls_client(cluster.addr(0), client_config(pki.ca_der(), None)).expect("handshake");
    assert!(config(&mut over_tls).contains("enableElectUncleanMaster=false"), "nothing applied");
    assert_eq!(over_tls.call(update()).code, 0, "the same change over TLS");
    assert!(config(&mut over_tls).contains("enableElectUncleanMaster=true"));
    let metadata = Client::connect(cluster.addr(0)).call(RemotingCommand::request(1005, None));
    assert_eq!(metadata.code, 0, "reads stay open over plain TCP");
}
