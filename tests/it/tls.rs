//! TLS on the remoting port with a tokio-rustls client of our own and certificates made at test
//! time: each mode, client certificates, certificate rotation with connections open, and
//! handshakes that stall. (Warnings and bad files: `tls_process`.)

use std::path::Path;
use std::time::Duration;

use crate::common::http::security_reloads;
use crate::common::security::{client_config, tls_client, Pki};
use crate::common::*;
use namesrv::protocol::RemotingCommand;
use namesrv::settings::TlsMode;

/// A server in `mode` with a certificate from `pki` (files in a fresh directory), serving HTTP
/// for its reload counters.
fn tls_server(
    mode: TlsMode,
    pki: &Pki,
    edit: impl FnOnce(&mut namesrv::settings::Settings),
) -> (TestServer, std::path::PathBuf) {
    let dir = temp_dir();
    let (cert, key) = pki.write_server(&dir, "namesrv-1");
    let server = TestServer::with_http(|s| {
        s.tls.tls_mode = mode;
        s.tls.tls_cert_file = cert.display().to_string();
        s.tls.tls_key_file = key.display().to_string();
        s.acl.security_reload_interval_ms = 50;
        edit(s);
    });
    (server, dir)
}

fn cluster_info() -> RemotingCommand {
    RemotingCommand::request(106, None)
}

#[test]
fn permissive_serves_plain_and_tls_clients_on_one_port() {
    let pki = Pki::new("test CA");
    let (server, _dir) = tls_server(TlsMode::Permissive, &pki, |_| {});
    let mut plain = server.client();
    assert_eq!(plain.register(&Broker::new("c", "b1", 0, "127.0.0.1:1").topics(&["T1", "T2"])).code, 0);
    let mut tls = tls_client(server.addr, client_config(pki.ca_der(), None)).expect("handshake");
    let route = tls.call(route_request("T1", 479));
    assert_eq!(route.code, 0);
    assert!(String::from_utf8_lossy(route.body.as_deref().unwrap()).contains("127.0.0.1:1"));
    assert_eq!(plain.call(cluster_info()).code, 0, "the plain connection still works");
}

#[test]
fn enforcing_closes_plain_connections_and_serves_tls() {
    let pki = Pki::new("test CA");
    let (server, _dir) = tls_server(TlsMode::Enforcing, &pki, |_| {});
    let mut plain = server.client();
    plain.send(&cluster_info());
    assert!(plain.closed_by_server(Duration::from_secs(3)), "a plain connection is closed");
    let mut tls = tls_client(server.addr, client_config(pki.ca_der(), None)).expect("handshake");
    assert_eq!(tls.call(cluster_info()).code, 0);
}

#[test]
fn a_client_that_does_not_trust_the_certificate_gets_nowhere() {
    let pki = Pki::new("test CA");
    let (server, _dir) = tls_server(TlsMode::Enforcing, &pki, |_| {});
    let stranger = Pki::new("another CA");
    assert!(tls_client(server.addr, client_config(stranger.ca_der(), None)).is_err());
    let mut tls = tls_client(server.addr, client_config(pki.ca_der(), None)).expect("server keeps serving");
    assert_eq!(tls.call(cluster_info()).code, 0);
}

#[test]
fn with_a_client_ca_only_clients_with_a_certificate_from_it_get_through() {
    let pki = Pki::new("server CA");
    let clients = Pki::new("client CA");
    let ca_file = temp_dir().join("clients.pem");
    std::fs::write(&ca_file, clients.ca_pem()).unwrap();
    let (server, _dir) =
        tls_server(TlsMode::Enforcing, &pki, |s| s.tls.tls_client_ca_file = ca_file.display().to_string());
    // With TLS 1.3 the client finishes its side before the server checks its certificate: the
    // refusal shows as a handshake error or as the connection closing on the first request.
    let attempt = |identity| {
        tls_client(server.addr, client_config(pki.ca_der(), identity)).and_then(|mut c| c.try_call(cluster_info()))
    };
    assert!(attempt(None).is_err(), "no client certificate");
    assert!(attempt(Some(pki.leaf("wrong-issuer"))).is_err(), "a certificate from another CA");
    let resp = attempt(Some(clients.leaf("app-1"))).expect("a certificate from the client CA");
    assert_eq!(resp.code, 0);
}

/// Replaces the server certificate and key in `dir` (each written aside and renamed over).
fn rotate(pki: &Pki, dir: &Path, cn: &str) {
    let (cert, key) = pki.leaf(cn);
    for (name, text) in [("server.key", key), ("server.pem", cert)] {
        let temp = dir.join(format!("{name}.new"));
        std::fs::write(&temp, text).unwrap();
        std::fs::rename(&temp, dir.join(name)).unwrap();
    }
}

#[test]
fn a_rotated_certificate_is_used_by_new_handshakes_while_open_connections_keep_working() {
    let pki = Pki::new("test CA");
    let (server, dir) = tls_server(TlsMode::Permissive, &pki, |_| {});
    let config = client_config(pki.ca_der(), None);
    let mut open = tls_client(server.addr, config.clone()).unwrap();
    let first = open.server_certificate();
    assert_eq!(open.call(cluster_info()).code, 0);
    rotate(&pki, &dir, "namesrv-2");
    let rotated = eventually(Duration::from_secs(5), || {
        tls_client(server.addr, config.clone()).is_ok_and(|c| c.server_certificate() != first)
    });
    assert!(rotated, "new handshakes present the new certificate");
    assert_eq!(open.call(cluster_info()).code, 0, "the connection opened before keeps working");
    let mut fresh = tls_client(server.addr, config).unwrap();
    assert_eq!(fresh.call(cluster_info()).code, 0);
}

#[test]
fn a_bad_certificate_on_rotation_keeps_the_one_in_use() {
    let pki = Pki::new("test CA");
    let (server, dir) = tls_server(TlsMode::Enforcing, &pki, |_| {});
    let config = client_config(pki.ca_der(), None);
    let first = tls_client(server.addr, config.clone()).unwrap().server_certificate();
    let refused = || security_reloads(server.http_addr.unwrap(), "tls", "refused");
    let before = refused();
    std::fs::write(dir.join("server.pem"), "-----BEGIN CERTIFICATE-----\nnot base64\n").unwrap();
    assert!(eventually(Duration::from_secs(5), || refused() > before), "the bad certificate was read and refused");
    let mut after = tls_client(server.addr, config).expect("still serving TLS");
    assert_eq!(after.server_certificate(), first);
    assert_eq!(after.call(cluster_info()).code, 0);
}

#[test]
fn stalled_handshakes_time_out_without_holding_up_anyone_else() {
    let pki = Pki::new("test CA");
    let (server, _dir) = tls_server(TlsMode::Permissive, &pki, |s| s.tls.tls_handshake_timeout_ms = 2_000);
    let mut stalled: Vec<Client> = (0..50)
        .map(|_| {
            let mut c = server.client();
            c.send_raw(&[0x16, 0x03, 0x01, 0x00, 0xc8]);
            c
        })
        .collect();
    let mut plain = server.client();
    assert_eq!(plain.call(cluster_info()).code, 0);
    let mut tls = tls_client(server.addr, client_config(pki.ca_der(), None)).unwrap();
    assert_eq!(tls.call(cluster_info()).code, 0);
    // Served while the stalled handshakes were still pending, not after they timed out.
    let last = stalled.last_mut().unwrap();
    assert!(!last.closed_by_server(Duration::from_millis(1)), "others were served before the stalled handshakes ended");
    for mut client in stalled {
        assert!(client.closed_by_server(Duration::from_secs(10)), "a stalled handshake is closed");
    }
}

#[test]
fn with_tls_disabled_a_tls_client_is_closed() {
    let pki = Pki::new("test CA");
    let server = TestServer::start();
    assert!(tls_client(server.addr, client_config(pki.ca_der(), None)).is_err());
    assert_eq!(server.client().call(cluster_info()).code, 0);
}

#[test]
fn an_account_pinned_to_a_client_certificate_is_refused_on_any_connection_without_it() {
    use crate::common::requests::request;
    use crate::common::security::{signed, write_accounts};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;

    let (pki, clients) = (Pki::new("server CA"), Pki::new("client CA"));
    let dir = temp_dir();
    let ca_file = dir.join("clients.pem");
    std::fs::write(&ca_file, clients.ca_pem()).unwrap();
    let (pinned, other) = (clients.leaf("ops-tool"), clients.leaf("another-tool"));
    let der = CertificateDer::from_pem_slice(pinned.0.as_bytes()).unwrap();
    let fingerprint = namesrv::origin::CertFingerprint::of_der(&der);
    let accounts = format!(
        "[[accounts]]\naccess_key = \"ops\"\nsecret_key = \"ops-secret\"\nrole = \"admin\"\ntls_identity = \"{fingerprint}\"\n\n\
         [[accounts]]\naccess_key = \"ops2\"\nsecret_key = \"ops2-secret\"\nrole = \"admin\"\n"
    );
    let accounts = write_accounts(&dir, &accounts);
    let (server, _certs) = tls_server(TlsMode::Permissive, &pki, |s| {
        s.tls.tls_client_ca_file = ca_file.display().to_string();
        s.acl.acl_enabled = true;
        s.acl.acl_accounts_file = accounts.display().to_string();
    });
    let put = |key: &str, secret: &str| {
        signed(request(100, &[("namespace", "ns"), ("key", "k"), ("value", "v")]), key, secret)
    };
    let over_tls = |identity| tls_client(server.addr, client_config(pki.ca_der(), Some(identity))).expect("handshake");

    let resp = server.client().call(put("ops", "ops-secret"));
    let remark = "AccessKey ops is pinned to a TLS client certificate this connection did not present";
    assert_eq!((resp.code, resp.remark.as_deref()), (16, Some(remark)), "plain TCP");
    let resp = over_tls(other).call(put("ops", "ops-secret"));
    assert_eq!((resp.code, resp.remark.as_deref()), (16, Some(remark)), "another client certificate");
    assert_eq!(over_tls(pinned).call(put("ops", "ops-secret")).code, 0, "the pinned certificate");
    assert_eq!(server.client().call(put("ops2", "ops2-secret")).code, 0, "an account without a pin, over plain TCP");
}

#[test]
fn with_admin_codes_over_tls_only_a_signed_admin_request_over_plain_tcp_is_refused() {
    use crate::common::requests::request;
    use crate::common::security::{signed, write_accounts, ACCOUNTS};

    let pki = Pki::new("server CA");
    let dir = temp_dir();
    let accounts = write_accounts(&dir, ACCOUNTS);
    let (server, _certs) = tls_server(TlsMode::Permissive, &pki, |s| {
        s.acl.acl_enabled = true;
        s.acl.acl_accounts_file = accounts.display().to_string();
        s.acl.acl_admin_requires_tls = true;
    });
    let put = || signed(request(100, &[("namespace", "ns"), ("key", "k"), ("value", "v")]), "ops", "ops-secret-1");
    let resp = server.client().call(put());
    let remark = "request code 100 is an admin code: accepted over TLS only (acl_admin_requires_tls)";
    assert_eq!((resp.code, resp.remark.as_deref()), (16, Some(remark)));
    let mut over_tls = tls_client(server.addr, client_config(pki.ca_der(), None)).expect("handshake");
    assert_eq!(over_tls.call(put()).code, 0, "the same request over TLS");
    assert_eq!(server.client().call(cluster_info()).code, 0, "reads stay open over plain TCP");
}
