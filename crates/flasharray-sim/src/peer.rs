//! The client half of the replication link: one JSON `POST` to another
//! simulator's `/_sim/replication/*` endpoints over HTTPS (or plain HTTP when this
//! simulator runs without TLS), HTTP/1.1, one connection per call.
//!
//! The peer's self-signed certificate is not verified (arrays ship self-signed
//! management certificates, and Pure's tools skip verification by default); the
//! peer is authenticated instead by the connection key it issued, and later by the
//! link secret. Handshake signatures are still checked with the ring provider.

use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// A whole call (connect, TLS, request, answer) gives up after this long.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest answer read from a peer.
const MAX_ANSWER: usize = 1024 * 1024;

/// `host` and `port` of a management address: `10.0.0.1`, `a.example:8443`,
/// `[::1]:443`; without a port, 443 (80 without TLS).
fn split_address(address: &str, tls: bool) -> Result<(String, u16), String> {
    let default_port = if tls { 443 } else { 80 };
    let bad = || format!("invalid management address {address:?}");
    if let Some(rest) = address.strip_prefix('[') {
        let (host, tail) = rest.split_once(']').ok_or_else(bad)?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().map_err(|_| bad())?,
            None if tail.is_empty() => default_port,
            None => return Err(bad()),
        };
        return Ok((host.to_string(), port));
    }
    match address.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => {
            Ok((host.to_string(), port.parse().map_err(|_| bad())?))
        }
        Some(_) => Ok((address.to_string(), default_port)),
        None if address.is_empty() => Err(bad()),
        None => Ok((address.to_string(), default_port)),
    }
}

/// `POST path` with `body` to the simulator at `address`; the status and the JSON
/// answer (`null` when empty), or why the peer could not be reached.
pub(crate) async fn post(
    tls: bool,
    address: &str,
    path: &str,
    body: &Value,
) -> Result<(u16, Value), String> {
    tokio::time::timeout(CALL_TIMEOUT, post_inner(tls, address, path, body))
        .await
        .map_err(|_| format!("no answer from {address} within {CALL_TIMEOUT:?}"))?
}

async fn post_inner(
    tls: bool,
    address: &str,
    path: &str,
    body: &Value,
) -> Result<(u16, Value), String> {
    let (host, port) = split_address(address, tls)?;
    let tcp = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| format!("cannot connect to {address}: {e}"))?;
    let payload = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    );
    if !tls {
        return exchange(tcp, &request).await;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS versions: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PeerCertificate(provider)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let name = ServerName::try_from(host.clone()).map_err(|e| format!("{host:?}: {e}"))?;
    let stream = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS with {address}: {e}"))?;
    exchange(stream, &request).await
}

async fn exchange<S>(mut stream: S, request: &str) -> Result<(u16, Value), String>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("sending to the peer: {e}"))?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some((status, body)) = parse_answer(&buf)? {
            let value = if body.iter().all(u8::is_ascii_whitespace) {
                Value::Null
            } else {
                serde_json::from_slice(body).map_err(|e| format!("peer answer: {e}"))?
            };
            return Ok((status, value));
        }
        let n = match stream.read(&mut chunk).await {
            Ok(n) => n,
            // A peer closing TLS without close_notify after a complete answer was
            // handled above; here the answer is incomplete.
            Err(e) => return Err(format!("reading the peer's answer: {e}")),
        };
        if n == 0 {
            return Err("the peer closed the connection before answering".into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_ANSWER {
            return Err("the peer's answer is too large".into());
        }
    }
}

/// The status and body once the whole answer (by `Content-Length`) is in `buf`.
fn parse_answer(buf: &[u8]) -> Result<Option<(u16, &[u8])>, String> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| "peer headers are not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or("the peer's answer has no status line")?;
    let length = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.trim().parse::<usize>())
        .transpose()
        .map_err(|_| "invalid Content-Length from the peer")?
        .unwrap_or(0);
    let body = &buf[end + 4..];
    Ok((body.len() >= length).then(|| (status, &body[..length])))
}

/// Accepts the peer's certificate (see the module doc) but checks signatures.
#[derive(Debug)]
struct PeerCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for PeerCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(
            split_address("10.0.0.1", true).unwrap(),
            ("10.0.0.1".into(), 443)
        );
        assert_eq!(
            split_address("a.example:8443", true).unwrap(),
            ("a.example".into(), 8443)
        );
        assert_eq!(split_address("[::1]:9", true).unwrap(), ("::1".into(), 9));
        assert_eq!(split_address("[::1]", false).unwrap(), ("::1".into(), 80));
        assert_eq!(
            split_address("fe80::1", true).unwrap(),
            ("fe80::1".into(), 443)
        );
        assert!(split_address("", true).is_err());
        assert!(split_address("h:x", true).is_err());
    }

    #[test]
    fn answers_are_complete_only_with_their_body() {
        let head = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 4\r\n\r\n";
        assert_eq!(parse_answer(head).unwrap(), None);
        let mut full = head.to_vec();
        full.extend_from_slice(b"null");
        assert_eq!(parse_answer(&full).unwrap(), Some((400, &b"null"[..])));
        assert!(parse_answer(b"garbage\r\n\r\n").is_err());
    }
}
