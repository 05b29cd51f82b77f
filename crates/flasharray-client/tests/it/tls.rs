//! TLS against a loopback HTTPS array whose certificate is signed by a test CA.

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use flasharray::{Error, FlashArray, RestArray, RetryConfig};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use secrecy::SecretString;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::common::{API_TOKEN, SESSION, fixture};

struct Pki {
    ca_pem: String,
    server_der: CertificateDer<'static>,
    server_key: PrivateKeyDer<'static>,
}

fn pki() -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "pxfa test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let server_key = KeyPair::generate().unwrap();
    let server_params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let server_cert = server_params.signed_by(&server_key, &issuer).unwrap();
    Pki {
        ca_pem: ca_cert.pem(),
        server_der: server_cert.der().clone(),
        server_key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
    }
}

async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let p = req.uri().path().to_string();
    let mut resp = Response::builder().header("content-type", "application/json");
    let body = if p == "/api/api_version" {
        fixture("api_version.json")
    } else if p.ends_with("/login") {
        resp = resp.header("x-auth-token", SESSION);
        fixture("login.json")
    } else if p == "/api/2.26/arrays" {
        fixture("arrays/list.json")
    } else {
        resp = resp.status(404);
        serde_json::json!({"errors": [{"context": null, "message": "Not found"}]})
    };
    Ok(resp
        .body(Full::new(Bytes::from(serde_json::to_vec(&body).unwrap())))
        .unwrap())
}

async fn serve(pki: &Pki) -> SocketAddr {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![pki.server_der.clone()], pki.server_key.clone_key())
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // Handshakes refused by an untrusting client end here.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service_fn(handle))
                    .await;
            });
        }
    });
    addr
}

fn builder(addr: SocketAddr) -> flasharray::RestArrayBuilder {
    RestArray::builder(format!("localhost:{}", addr.port()))
        .api_token(SecretString::from(API_TOKEN))
        .retry(RetryConfig::none())
}

#[tokio::test]
async fn trusted_with_ca_file_refused_without_accepted_insecure() {
    let pki = pki();
    let addr = serve(&pki).await;

    let mut ca = tempfile::NamedTempFile::new().unwrap();
    ca.write_all(pki.ca_pem.as_bytes()).unwrap();
    let trusted = builder(addr).ca_file(ca.path()).build().unwrap();
    assert_eq!(trusted.get_array().await.unwrap().name, "fa-x70-1");

    let from_pem = builder(addr).ca_pem(pki.ca_pem.clone()).build().unwrap();
    assert_eq!(from_pem.get_array().await.unwrap().name, "fa-x70-1");

    let untrusting = builder(addr).build().unwrap();
    let err = untrusting.get_array().await.unwrap_err();
    match &err {
        Error::Transport(t) => {
            assert!(!t.maybe_applied, "{t:?}");
            assert_eq!(t.operation, "GET /api/api_version");
        }
        other => panic!("expected a TLS failure, got {other:?}"),
    }

    // A different CA is not enough either: trust is limited to the given CA.
    let other = pki_other_ca();
    let wrong_ca = builder(addr).ca_pem(other).build().unwrap();
    assert!(matches!(
        wrong_ca.get_array().await,
        Err(Error::Transport(_))
    ));

    let insecure = builder(addr).insecure(true).build().unwrap();
    assert_eq!(insecure.get_array().await.unwrap().name, "fa-x70-1");
}

fn pki_other_ca() -> String {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.self_signed(&key).unwrap().pem()
}

#[tokio::test]
async fn untrusted_certificate_is_final_not_retried() {
    let pki = pki();
    let addr = serve(&pki).await;
    // Default retry policy (5 retries, 1 s doubling): a retried certificate failure
    // would take well over a second.
    let client = RestArray::builder(format!("localhost:{}", addr.port()))
        .api_token(SecretString::from(API_TOKEN))
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let err = client.get_array().await.unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_millis(900),
        "took {:?}",
        started.elapsed()
    );
    match &err {
        Error::Transport(t) => {
            assert_eq!(
                t.kind,
                flasharray::TransportErrorKind::UntrustedCertificate,
                "{}",
                t.message
            );
            assert!(
                t.message.starts_with("TLS certificate not trusted"),
                "{}",
                t.message
            );
        }
        other => panic!("expected a TLS failure, got {other:?}"),
    }
}
