//! nsadmin against a NameServer that speaks TLS: `--tls-ca` (and a client certificate for mutual
//! TLS) reaches it; a plain attempt is told that the server expects TLS; the HTTP port is named
//! as such instead of failing with a framing error.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use namesrv::settings::TlsMode;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

/// A CA made at test time, and certificates it signs for 127.0.0.1.
struct Pki {
    ca: CertifiedIssuer<'static, KeyPair>,
}

impl Pki {
    fn new() -> Pki {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, "nsadmin test CA");
        Pki { ca: CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap() }
    }

    /// Writes the CA as `ca.pem` and a leaf named `name` as `name.pem` / `name.key` into `dir`.
    fn write(&self, dir: &Path, name: &str) -> (PathBuf, PathBuf, PathBuf) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.signed_by(&key, &self.ca).unwrap();
        let paths = (dir.join("ca.pem"), dir.join(format!("{name}.pem")), dir.join(format!("{name}.key")));
        std::fs::write(&paths.0, self.ca.pem()).unwrap();
        std::fs::write(&paths.1, cert.pem()).unwrap();
        std::fs::write(&paths.2, key.serialize_pem()).unwrap();
        paths
    }
}

fn tls_server(pki: &Pki, client_ca: bool) -> (TestServer, PathBuf) {
    let dir = temp_dir();
    let (ca, cert, key) = pki.write(&dir, "server");
    let server = TestServer::with(|s| {
        s.tls.tls_mode = TlsMode::Enforcing;
        s.tls.tls_cert_file = cert.display().to_string();
        s.tls.tls_key_file = key.display().to_string();
        if client_ca {
            s.tls.tls_client_ca_file = ca.display().to_string();
        }
    });
    (server, dir)
}

#[test]
fn tls_ca_reaches_a_tls_namesrv_and_a_plain_attempt_is_told_it_expects_tls() {
    let pki = Pki::new();
    let (server, dir) = tls_server(&pki, false);
    let ca = dir.join("ca.pem").display().to_string();
    let (ns, with_ca) = (server.ns(), ["--tls-ca", ca.as_str(), "-n"]);
    let put = ["updateKvConfig", "-s", "tls-ns", "-k", "greeting", "-v", "over-tls"];
    expect_exit(&nsadmin(&[&put[..], &with_ca, &[&ns]].concat()), 0);
    let got =
        expect_exit(&nsadmin(&[&["getKvConfig", "-s", "tls-ns", "-k", "greeting"][..], &with_ca, &[&ns]].concat()), 0);
    assert!(got.contains("over-tls"), "{got}");

    let plain = nsadmin(&["clusterList", "--timeout-ms", "2000", "-n", &server.ns()]);
    assert_eq!(code(&plain), 1);
    assert!(stderr(&plain).contains("expects TLS"), "{}", stderr(&plain));

    // A CA that did not sign the server's certificate: the handshake fails, and says so.
    let other = Pki::new();
    let other_dir = temp_dir();
    let (other_ca, _, _) = other.write(&other_dir, "other");
    let untrusted = nsadmin(&["clusterList", "--tls-ca", &other_ca.display().to_string(), "-n", &server.ns()]);
    assert_eq!(code(&untrusted), 1);
    assert!(stderr(&untrusted).contains("TLS handshake failed"), "{}", stderr(&untrusted));
}

#[test]
fn a_client_certificate_reaches_a_namesrv_that_asks_for_one() {
    let pki = Pki::new();
    let (server, dir) = tls_server(&pki, true);
    let (ca, cert, key) = pki.write(&dir, "admin");
    let (ca, cert, key) = (ca.display().to_string(), cert.display().to_string(), key.display().to_string());
    let ok =
        nsadmin(&["getNamesrvConfig", "--tls-ca", &ca, "--tls-cert", &cert, "--tls-key", &key, "-n", &server.ns()]);
    expect_exit(&ok, 0);
    let without = nsadmin(&["getNamesrvConfig", "--timeout-ms", "2000", "--tls-ca", &ca, "-n", &server.ns()]);
    assert_eq!(code(&without), 1, "{}", stdout(&without));
}

#[test]
fn the_http_port_is_named_instead_of_a_framing_error() {
    let server = TestServer::with_http(|_| {});
    let http = server.http_addr.expect("http").to_string();
    let out = nsadmin(&["clusterList", "-n", &http]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("answered HTTP"), "{}", stderr(&out));
}
