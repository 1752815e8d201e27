//! IPv6 end to end with the real binary: listening on `[::1]` and dual-stack `::`, bracketed
//! addresses in flags, files and the environment, and brokers registering IPv6 addresses
//! (RocketMQ users have hit IPv6 breakage repeatedly: apache/rocketmq#805, #6923, #9987).

use std::net::{Ipv6Addr, SocketAddr};

use crate::common::process::{namesrv_command, run_to_exit, Proc};
use crate::common::*;
use serde_json::json;

/// Whether this machine has IPv6 loopback; without it the tests say so and pass, except under
/// `CI=true`, where a skipped check is a failure.
fn ipv6_loopback() -> bool {
    let ok = std::net::TcpListener::bind("[::1]:0").is_ok();
    if !ok {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "no IPv6 loopback on this machine: CI must run these tests"
        );
        eprintln!("skipped: no IPv6 loopback on this machine");
    }
    ok
}

#[test]
fn brokers_register_ipv6_addresses_over_an_ipv6_listener_and_are_routed() {
    if !ipv6_loopback() {
        return;
    }
    let dir = temp_dir();
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "[::1]:0"]);
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    assert_eq!(addr.ip(), Ipv6Addr::LOCALHOST, "listening on {addr}");
    let mut client = Client::connect(addr);

    let mut master = Broker::new("DefaultCluster", "broker-v6", 0, "[fd00::5]:10911").topics(&["TopicV6", "TopicV6b"]);
    master.ha_addr = "[fd00::5]:10912".into();
    let resp = client.register(&master);
    assert_eq!(resp.code, 0, "{:?}", resp.remark);
    let slave = Broker::new("DefaultCluster", "broker-v6", 1, "[fd00::6]:10911").topics(&["TopicV6", "TopicV6b"]);
    let resp = client.register(&slave);
    assert_eq!(resp.code, 0);
    assert_eq!(resp.ext("masterAddr"), Some("[fd00::5]:10911"), "the slave is given the master's IPv6 address");
    assert_eq!(resp.ext("haServerAddr"), Some("[fd00::5]:10912"));

    let route = client.route("TopicV6").expect("routed");
    assert_eq!(route_addrs(&route, "broker-v6"), json!({"0": "[fd00::5]:10911", "1": "[fd00::6]:10911"}));
    let info = client.cluster_info();
    assert_eq!(info["brokerAddrTable"]["broker-v6"]["brokerAddrs"]["0"], "[fd00::5]:10911", "{info}");
}

#[test]
fn bind_address_colons_alone_listens_dual_stack() {
    if !ipv6_loopback() {
        return;
    }
    let dir = temp_dir();
    let file = dir.join("namesrv.toml");
    std::fs::write(&file, "bind_address = \"::\"\nlisten_port = 0\n").unwrap();
    let mut cmd = namesrv_command(&dir);
    cmd.arg("-c").arg(&file);
    let mut proc = Proc::spawn(cmd);
    let addr = proc.addr();
    assert!(addr.ip().is_unspecified() && addr.is_ipv6(), "listening on {addr}");
    for client_addr in
        [SocketAddr::from(([127, 0, 0, 1], addr.port())), SocketAddr::from((Ipv6Addr::LOCALHOST, addr.port()))]
    {
        let mut client = Client::connect(client_addr);
        assert_eq!(client.call(namesrv::protocol::RemotingCommand::request(106, None)).code, 0, "over {client_addr}");
    }
}

#[test]
fn bracketed_ipv6_addresses_are_accepted_wherever_an_address_is_configured() {
    let dir = temp_dir();
    let file = dir.join("namesrv.toml");
    std::fs::write(&file, "bind_address = \"[::1]\"\n").unwrap();
    /// (flags, environment, the `-p` line it gives)
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (vec!["--listen", "[::1]:0"], vec![], "bind_address = \"::1\""),
        (vec!["--listen", "[::]:0"], vec![], "bind_address = \"::\""),
        (vec!["--set", "bindAddress=fd00::1"], vec![], "bind_address = \"fd00::1\""),
        (vec![], vec![("NAMESRV_BIND_ADDRESS", "[::]")], "bind_address = \"[::]\""),
        (vec!["-c", file.to_str().unwrap()], vec![], "bind_address = \"[::1]\""),
    ];
    for (args, env, line) in cases {
        let mut cmd = namesrv_command(&dir);
        // Port 0: --check-config binds the address, and 9876 may be taken on this host.
        cmd.env("NAMESRV_LISTEN_PORT", "0").args(&args).envs(env.iter().copied()).arg("--check-config");
        let (status, stdout, stderr) = run_to_exit(cmd);
        if args.contains(&"bindAddress=fd00::1") {
            // Parsed, and then refused by the bind: fd00::1 is no address of this host.
            let refused = "listen address fd00::1:0: cannot listen on [fd00::1]:0";
            assert!(!status.success() && stderr.contains(refused), "{args:?}: stdout {stdout}\nstderr:\n{stderr}");
        } else {
            assert!(status.success(), "{args:?} {env:?}: stdout {stdout}\nstderr:\n{stderr}");
        }
        let mut cmd = namesrv_command(&dir);
        cmd.args(&args).envs(env.iter().copied()).arg("-p");
        let (_, stdout, _) = run_to_exit(cmd);
        assert!(stdout.lines().any(|l| l == line), "{args:?} {env:?}: {line} in\n{stdout}");
    }
    let mut cmd = namesrv_command(&dir);
    cmd.args(["--listen", "::1:9876", "-p"]);
    let (status, _, stderr) = run_to_exit(cmd);
    assert_eq!(status.code(), Some(2), "an unbracketed IPv6 address with a port is ambiguous");
    assert!(stderr.contains("IPv6 addresses go in brackets"), "{stderr}");
}
