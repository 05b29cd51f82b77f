//! The simulator's self-signed certificate, made fresh at every start.
//!
//! Real arrays ship self-signed management certificates too; clients either trust
//! the PEM we hand out ([`super::RunningSim::cert_pem`]) or skip verification (Pure's
//! SDK does by default). The `ring` provider is the workspace's one provider.

use std::net::IpAddr;
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::SimError;

/// A server TLS configuration plus the certificate in PEM form.
pub(crate) struct Identity {
    pub(crate) config: Arc<ServerConfig>,
    pub(crate) cert_pem: String,
}

/// Makes a certificate for `127.0.0.1`, `localhost` and the listen address (when it
/// is a concrete address), and a rustls server configuration offering HTTP/2 and
/// HTTP/1.1 by ALPN (HTTP/1.1 only when `http1_only`).
pub(crate) fn self_signed(listen_ip: IpAddr, http1_only: bool) -> Result<Identity, SimError> {
    let mut names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    if !listen_ip.is_unspecified() && !listen_ip.is_loopback() {
        names.push(listen_ip.to_string());
    }
    let certified = rcgen::generate_simple_self_signed(names)
        .map_err(|e| SimError::Tls(format!("cannot generate the certificate: {e}")))?;
    let cert_pem = certified.cert.pem();
    let cert_der: CertificateDer<'static> = certified.cert.der().clone();
    let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| SimError::Tls(format!("TLS versions: {e}")))?
        .with_no_client_auth()
        .with_single_cert(vec![cert_der], key_der)
        .map_err(|e| SimError::Tls(format!("certificate refused by rustls: {e}")))?;
    config.alpn_protocols = if http1_only {
        vec![b"http/1.1".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    Ok(Identity {
        config: Arc::new(config),
        cert_pem,
    })
}
