//! nsadmin's read subcommands against the rocketmq-rust NameServer (`rocketmq-namesrv` 1.0.0,
//! binary `rocketmq-namesrv-rust`), and `diff` between it and namesrv holding the same broker.
//!
//! The binary is looked up in `$ROCKETMQ_PEERS/bin`, default `~/.cache/rocketmq-peers/bin`
//! (`scripts/interop.sh` installs it there and runs this test with `--ignored`). The test is
//! ignored otherwise, so a run without the peer reports it as ignored, never as passed; run
//! without the binary, it fails.

mod common;

use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// The peer binary, if installed.
fn peer_binary() -> Option<PathBuf> {
    let root = std::env::var_os("ROCKETMQ_PEERS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/rocketmq-peers")))?;
    let bin = root.join("bin/rocketmq-namesrv-rust");
    bin.is_file().then_some(bin)
}

/// The rocketmq-rust NameServer as a child process, killed on drop.
struct PeerNamesrv {
    child: Child,
    addr: SocketAddr,
}

impl PeerNamesrv {
    /// Starts the peer on a free loopback port. It binds the port itself, so the port is found
    /// by binding 0 and closing (the one place a port is picked then re-bound: a foreign binary
    /// takes no listener); start-up is retried on a fresh port if it does not listen.
    fn start(bin: &PathBuf) -> PeerNamesrv {
        for _ in 0..3 {
            let dir = temp_dir();
            let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
            let toml = format!(
                "rocketmqHome = \"{d}\"\nkvConfigPath = \"{d}/kvConfig.json\"\nconfigStorePath = \"{d}/namesrv.properties\"\nlistenPort = {port}\nbindAddress = \"127.0.0.1\"\n",
                d = dir.display()
            );
            std::fs::write(dir.join("ns.toml"), toml).expect("write ns.toml");
            let log = std::fs::File::create(dir.join("peer.log")).expect("log file");
            let child = Command::new(bin)
                .arg("-c")
                .arg(dir.join("ns.toml"))
                .current_dir(&dir)
                .env("ROCKETMQ_HOME", &dir)
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("log"))
                .stderr(log)
                .spawn()
                .expect("spawn rocketmq-namesrv-rust");
            let mut peer = PeerNamesrv { child, addr: SocketAddr::from(([127, 0, 0, 1], port)) };
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if TcpStream::connect(peer.addr).is_ok() {
                    return peer;
                }
                if let Ok(Some(_)) = peer.child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            eprintln!("rocketmq-namesrv-rust did not listen on {port}; log in {}", dir.display());
        }
        panic!("rocketmq-namesrv-rust did not start");
    }
}

impl Drop for PeerNamesrv {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs rocketmq-namesrv-rust: scripts/interop.sh installs it and runs this with --ignored"]
fn read_subcommands_work_against_the_rocketmq_rust_namesrv() {
    let bin = peer_binary().expect("rocketmq-namesrv-rust in $ROCKETMQ_PEERS/bin or ~/.cache/rocketmq-peers/bin");
    let peer = PeerNamesrv::start(&bin);
    let ns = peer.addr.to_string();
    let broker = Broker::new("PeerCluster", "broker-p", 0, "127.0.0.1:10911").topics(&["PeerTopic", "Other"]);
    let mut conn = Client::connect(peer.addr);
    conn.register(&broker);
    let answer = conn.request(100, &[("namespace", "NS"), ("key", "k"), ("value", "v")]);
    assert_eq!(answer.code, 0, "put kv: {:?}", answer.remark);

    let info = json_ok(&nsadmin(&["clusterList", "--json", "-n", &ns]));
    assert_eq!(info["brokerAddrTable"]["broker-p"]["brokerAddrs"]["0"], "127.0.0.1:10911", "{info}");
    let table = expect_exit(&nsadmin(&["clusterList", "-n", &ns]), 0);
    assert!(table.lines().any(|l| l.starts_with("PeerCluster") && l.contains("127.0.0.1:10911")), "{table}");

    let route = json_ok(&nsadmin(&["topicRoute", "-t", "PeerTopic", "--json", "-n", &ns]));
    assert_eq!(route["queueDatas"][0]["brokerName"], "broker-p", "{route}");
    assert_eq!(route["queueDatas"][0]["writeQueueNums"], 8, "{route}");
    let missing = nsadmin(&["topicRoute", "-t", "NoSuchTopic", "-n", &ns]);
    assert_eq!(code(&missing), 1, "{}", stdout(&missing));
    assert!(stderr(&missing).contains(&ns), "{}", stderr(&missing));

    for args in [&["topicList"][..], &["topicList", "-c", "PeerCluster"][..]] {
        let topics = expect_exit(&nsadmin(&[args, &["-n", &ns]].concat()), 0);
        assert!(topics.lines().any(|l| l == "PeerTopic"), "{args:?}: {topics}");
    }
    let members = json_ok(&nsadmin(&["brokerMembers", "-b", "broker-p", "--json", "-n", &ns]));
    assert_eq!(members["brokerMemberGroup"]["brokerAddrs"]["0"], "127.0.0.1:10911", "{members}");
    let config = expect_exit(&nsadmin(&["getNamesrvConfig", "-n", &ns]), 0);
    assert!(config.lines().count() > 5, "{config}");
    let kv = expect_exit(&nsadmin(&["getKvConfig", "-s", "NS", "-k", "k", "-n", &ns]), 0);
    assert_eq!(kv, format!("== {ns}\nv\n"));

    // The same broker on namesrv: the two implementations tell clients the same thing.
    let ours = TestServer::start();
    ours.register(&broker);
    let diff = nsadmin(&["diff", "-n", &format!("{ns};{}", ours.ns())]);
    println!("diff rocketmq-rust vs namesrv:\n{}{}", stdout(&diff), stderr(&diff));
    assert_eq!(code(&diff), 0, "{}", stdout(&diff));
}
