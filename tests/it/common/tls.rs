//! A TLS front on 127.0.0.1 for the HTTPS download tests: it terminates TLS
//! with rustls, using a server certificate for `127.0.0.1` and `localhost`
//! signed by a test CA made fresh for each front (rcgen), and passes each
//! request to a plain [`super::http::TestServer`]. The CA's PEM file is what
//! a client must trust (`SSL_CERT_FILE`), as behind a company's TLS proxy.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The running front; it serves until the test process ends.
pub struct TlsFront {
    port: u16,
    /// The test CA's certificate (PEM).
    pub ca_pem: PathBuf,
}

impl TlsFront {
    /// Starts a front for the plain server on `backend_port`, writing the
    /// CA certificate to `dir/test-ca.pem`.
    pub fn start(backend_port: u16, dir: &Path) -> TlsFront {
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "cudnnm test CA");
        let ca_key = KeyPair::generate().unwrap();
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca, ca_key);
        let mut leaf =
            CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()]).unwrap();
        leaf.distinguished_name
            .push(DnType::CommonName, "127.0.0.1");
        let leaf_key = KeyPair::generate().unwrap();
        let leaf_cert = leaf.signed_by(&leaf_key, &issuer).unwrap();
        let ca_pem = dir.join("test-ca.pem");
        std::fs::write(&ca_pem, ca_cert.pem()).unwrap();

        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(leaf_cert.der().to_vec())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
            )
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);

        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let config = config.clone();
                thread::spawn(move || {
                    let _ = relay(conn, config, backend_port);
                });
            }
        });
        TlsFront { port, ca_pem }
    }

    /// `https://127.0.0.1:PORT/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!(
            "https://127.0.0.1:{}/{}",
            self.port,
            path.trim_start_matches('/')
        )
    }
}

/// One connection: the request head (the tests only GET), passed on to the
/// plain server; its whole answer (it closes after each) passed back.
fn relay(conn: TcpStream, config: Arc<rustls::ServerConfig>, backend: u16) -> std::io::Result<()> {
    let server = rustls::ServerConnection::new(config).map_err(std::io::Error::other)?;
    let mut tls = rustls::StreamOwned::new(server, conn);
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tls.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let mut plain = TcpStream::connect(("127.0.0.1", backend))?;
    plain.write_all(&head)?;
    let mut answer = Vec::new();
    plain.read_to_end(&mut answer)?;
    tls.write_all(&answer)?;
    tls.conn.send_close_notify();
    tls.flush()?;
    Ok(())
}
