//! The controller's HTTP endpoints on `--metrics-address`: `/healthz` (liveness),
//! `/readyz` (readiness, see [`crate::health`]) and `/metrics` (Prometheus text
//! exposition format). Plain HTTP: they carry no secret and are meant for the
//! kubelet and an in-cluster scraper.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;

use crate::health::Health;
use crate::metrics::Metrics;

#[derive(Clone)]
struct Shared {
    health: Arc<Health>,
    metrics: Arc<Metrics>,
}

async fn healthz(State(s): State<Shared>) -> Response {
    match s.health.live() {
        Ok(()) => (StatusCode::OK, "ok\n").into_response(),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")).into_response(),
    }
}

async fn readyz(State(s): State<Shared>) -> Response {
    match s.health.ready() {
        Ok(role) => (StatusCode::OK, format!("ok: {role}\n")).into_response(),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")).into_response(),
    }
}

async fn metrics(State(s): State<Shared>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        s.metrics.render(),
    )
        .into_response()
}

/// A bound endpoint server; [`Endpoints::serve`] runs it.
pub struct Endpoints {
    listener: TcpListener,
    shared: Shared,
}

impl Endpoints {
    /// Binds `addr` (port 0 picks a free one; see [`Endpoints::local_addr`]).
    pub async fn bind(
        addr: SocketAddr,
        health: Arc<Health>,
        metrics: Arc<Metrics>,
    ) -> std::io::Result<Self> {
        Ok(Endpoints {
            listener: TcpListener::bind(addr).await?,
            shared: Shared { health, metrics },
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) {
        let app = Router::new()
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics))
            .with_state(self.shared);
        if let Err(e) = axum::serve(self.listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::warn!(error = %e, "the health and metrics endpoints stopped");
        }
    }
}
