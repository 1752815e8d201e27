//! Where nsadmin finds the NameServers when `-n` does not say: `NSADMIN_NAMESRV_ADDR`, then
//! `NAMESRV_ADDR` as mqadmin reads it, then 127.0.0.1:9876; writes included.

mod common;

use std::process::{Command, Output};

use common::*;

/// nsadmin with `args` and only these NameServer variables set.
fn nsadmin_with_env(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nsadmin"));
    for name in
        ["NSADMIN_ACCESS_KEY", "NSADMIN_SECRET_KEY", "NSADMIN_SECURITY_TOKEN", "NSADMIN_NAMESRV_ADDR", "NAMESRV_ADDR"]
    {
        cmd.env_remove(name);
    }
    cmd.args(args).envs(vars.iter().copied()).output().expect("run nsadmin")
}

#[test]
fn namesrv_addr_names_the_namesrvs_for_reads_and_writes_when_n_does_not() {
    let (a, b) = (TestServer::start(), TestServer::start());
    let list = format!("{};{}", a.ns(), b.ns());
    let put = nsadmin_with_env(&["updateKvConfig", "-s", "NS", "-k", "key", "-v", "v1"], &[("NAMESRV_ADDR", &list)]);
    assert_eq!(expect_exit(&put, 0), format!("{}  OK\n{}  OK\n", a.ns(), b.ns()));
    for server in [&a, &b] {
        let answer = server.client().request(101, &[("namespace", "NS"), ("key", "key")]);
        assert_eq!(answer.ext("value"), Some("v1"), "the write reached {}", server.ns());
    }
    let got = nsadmin_with_env(&["getKvConfig", "-s", "NS", "-k", "key", "--all"], &[("NAMESRV_ADDR", &list)]);
    let text = expect_exit(&got, 0);
    assert!(text.contains(&a.ns()) && text.contains(&b.ns()), "{text}");
}

#[test]
fn n_and_nsadmin_namesrv_addr_win_over_namesrv_addr() {
    let server = TestServer::start();
    let dead = dead_addr();
    let env = [("NAMESRV_ADDR", dead.as_str())];
    let flag = nsadmin_with_env(&["updateKvConfig", "-s", "NS", "-k", "k", "-v", "1", "-n", &server.ns()], &env);
    assert_eq!(expect_exit(&flag, 0), format!("{}  OK\n", server.ns()));
    let ours = [("NAMESRV_ADDR", dead.as_str()), ("NSADMIN_NAMESRV_ADDR", &server.ns())];
    let named = nsadmin_with_env(&["updateKvConfig", "-s", "NS", "-k", "k", "-v", "2"], &ours);
    assert_eq!(expect_exit(&named, 0), format!("{}  OK\n", server.ns()));
    let unreachable = nsadmin_with_env(&["updateKvConfig", "-s", "NS", "-k", "k", "-v", "3"], &env);
    assert_eq!(code(&unreachable), 1, "NAMESRV_ADDR alone is used: {}", stdout(&unreachable));
    assert!(stdout(&unreachable).contains(&dead) || stderr(&unreachable).contains(&dead), "{}", stderr(&unreachable));
}
