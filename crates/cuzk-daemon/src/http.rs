//! HTTP `/metrics` (Prometheus text) and `/status` (JSON) for scrapers and
//! people, on their own address; the bearer token applies when configured.

use crate::engine::Engine;
use crate::server::BearerAuth;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

#[derive(Clone)]
struct AppState {
    engine: Engine,
    auth: BearerAuth,
}

pub fn router(engine: Engine, auth: BearerAuth) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/status", get(status))
        .with_state(AppState { engine, auth })
}

fn denied(s: &AppState, h: &HeaderMap) -> Option<Response> {
    let v = h.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    (!s.auth.allows(v)).then(|| {
        (
            StatusCode::UNAUTHORIZED,
            "missing or invalid bearer token\n",
        )
            .into_response()
    })
}

async fn metrics(State(s): State<AppState>, h: HeaderMap) -> Response {
    if let Some(r) = denied(&s, &h) {
        return r;
    }
    let body = crate::metrics::render(&s.engine.status());
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response()
}

async fn status(State(s): State<AppState>, h: HeaderMap) -> Response {
    if let Some(r) = denied(&s, &h) {
        return r;
    }
    axum::Json(s.engine.status()).into_response()
}
