//! The connection's byte stream as hyper sees it (after TLS), with two additions:
//!
//! * It records when bytes last arrived, so that the server can close connections
//!   that stay silent ([`super::SimConfig::idle_timeout`]).
//! * It replaces hyper's own answers to oversized requests. For a request line over
//!   64 KiB hyper answers `414` (and `431` for a head over its buffer) with an empty
//!   body before any handler runs; an array answers errors in its JSON shape, so the
//!   simulator swaps those heads for a FlashArray-shaped `414`/`431` with the same
//!   status. Only hyper's automatic answers match (`content-length: 0`); the
//!   simulator's own answers always have a JSON body. Writes are never vectored,
//!   so a response head reaches [`AsyncWrite::poll_write`] in one buffer.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// When the connection last received bytes, in milliseconds since it opened.
#[derive(Debug, Clone)]
pub(crate) struct LastRead {
    opened: Instant,
    ms: Arc<AtomicU64>,
}

impl LastRead {
    fn new() -> LastRead {
        LastRead {
            opened: Instant::now(),
            ms: Arc::new(AtomicU64::new(0)),
        }
    }

    fn touch(&self) {
        let ms = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.ms.store(ms, Ordering::Relaxed);
    }

    /// When bytes last arrived.
    pub(crate) fn at(&self) -> Instant {
        self.opened + std::time::Duration::from_millis(self.ms.load(Ordering::Relaxed))
    }
}

/// Wraps the stream hyper serves.
pub(crate) struct Guarded<I> {
    inner: I,
    last_read: LastRead,
    /// A replacement answer still to be written, and how much of it was.
    pending: Option<(Vec<u8>, usize)>,
}

impl<I> Guarded<I> {
    pub(crate) fn new(inner: I) -> (Guarded<I>, LastRead) {
        let last_read = LastRead::new();
        (
            Guarded {
                inner,
                last_read: last_read.clone(),
                pending: None,
            },
            last_read,
        )
    }
}

/// The FlashArray-shaped replacement for one of hyper's automatic error heads.
fn replacement(head: &[u8]) -> Option<Vec<u8>> {
    let (status, message) = if head.starts_with(b"HTTP/1.1 414 ") {
        ("414 URI Too Long", "The request URI is too long.")
    } else if head.starts_with(b"HTTP/1.1 431 ") {
        (
            "431 Request Header Fields Too Large",
            "The request headers are too large.",
        )
    } else {
        return None;
    };
    let automatic = head
        .windows(b"content-length: 0\r\n".len())
        .any(|w| w.eq_ignore_ascii_case(b"content-length: 0\r\n"));
    if !automatic {
        return None;
    }
    let body = serde_json::json!({"errors": [{"context": null, "message": message}]}).to_string();
    Some(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl<I: AsyncWrite + Unpin> Guarded<I> {
    /// Writes what is left of a replacement; Ready once it is all out.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, done)) = &mut self.pending {
            if *done == bytes.len() {
                self.pending = None;
                break;
            }
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*done..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *done += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Guarded<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.last_read.touch();
        }
        polled
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Guarded<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        if let Some(bytes) = replacement(buf) {
            self.pending = Some((bytes, 0));
            // hyper's head counts as written; the replacement goes out instead.
            let _ = self.drain(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_empty_error_heads_are_replaced() {
        let auto = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let out = String::from_utf8(replacement(auto).unwrap()).unwrap();
        assert!(out.starts_with("HTTP/1.1 414 URI Too Long\r\n"), "{out}");
        assert!(out.ends_with(
            r#"{"errors":[{"context":null,"message":"The request URI is too long."}]}"#
        ));
        let ours = b"HTTP/1.1 414 URI Too Long\r\ncontent-type: application/json\r\ncontent-length: 60\r\n\r\n";
        assert!(replacement(ours).is_none());
        assert!(replacement(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(
            replacement(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n"
            )
            .is_some()
        );
    }
}
