//! HTTP `/metrics` (Prometheus text), `/status` (JSON),
//! `/trace?seconds=N` (a Chrome trace of the last N seconds) and the status
//! page `/` with its data `/status/history` (the last hour, crate::history)
//! for scrapers and people, on their own address; the bearer token applies
//! when configured, except to the page itself, which holds no data (its
//! script sends the token it is given). In cluster mode `/metrics` adds
//! this daemon's cluster metrics (`cuzk_cluster_*`) and `/status` has a
//! `cluster` section: this daemon's node and claims, and the queue's
//! nodes, job and partition counts and queues as `cuzk status --cluster`
//! shows them.

use crate::engine::Engine;
use crate::server::BearerAuth;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

#[derive(Clone)]
struct AppState {
    engine: Engine,
    auth: BearerAuth,
    cluster: Option<Arc<crate::cluster::ClusterNode>>,
    history: crate::history::History,
}

/// The status page: self-contained (inline script, style and SVG), so it
/// works offline and behind any proxy.
const STATUS_PAGE: &str = include_str!("status_page.html");

pub fn router(
    engine: Engine,
    auth: BearerAuth,
    cluster: Option<Arc<crate::cluster::ClusterNode>>,
    history: crate::history::History,
) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/metrics", get(metrics))
        .route("/status", get(status))
        .route("/status/history", get(history_json))
        .route("/trace", get(trace))
        .with_state(AppState {
            engine,
            auth,
            cluster,
            history,
        })
}

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            // Nothing from elsewhere: the page's own script and style only.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 connect-src 'self'; img-src data:",
            ),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        STATUS_PAGE,
    )
        .into_response()
}

/// `/status/history[?since=T]`: T in ms since the Unix epoch, the time of
/// the last sample the page has.
async fn history_json(State(s): State<AppState>, h: HeaderMap, uri: axum::http::Uri) -> Response {
    if let Some(r) = denied(&s, &h) {
        return r;
    }
    let since = uri
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("since=")));
    let since = match since.map(str::parse::<u64>) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(_)) => {
            return (
                StatusCode::BAD_REQUEST,
                "since must be a time in ms since the Unix epoch\n",
            )
                .into_response()
        }
    };
    axum::Json(s.history.json(since)).into_response()
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
    let mut body = crate::metrics::render(&s.engine.status());
    if let Some(node) = &s.cluster {
        body.push_str(&crate::metrics::render_cluster(&node.metrics()));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response()
}

async fn status(State(s): State<AppState>, h: HeaderMap) -> Response {
    if let Some(r) = denied(&s, &h) {
        return r;
    }
    let mut v = status_value(&s.engine.status());
    if let Some(node) = &s.cluster {
        // As `cuzk status --cluster --json` shows it (one owner of the
        // layout).
        v["cluster"] = crate::report::cluster_json(&node.status(true).await);
    }
    axum::Json(v).into_response()
}

/// The engine's status as JSON for people and scripts: a budget without
/// limit (`u64::MAX` inside) is `null`, and the prover backend's time is
/// `prove_s` whatever the backend.
pub fn status_value(s: &crate::engine::EngineStatus) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap_or_default();
    if let Some(tiers) = v["tiers"].as_array_mut() {
        for t in tiers {
            if t["budget_bytes"].as_u64() == Some(u64::MAX) {
                t["budget_bytes"] = serde_json::Value::Null;
            }
        }
    }
    if let Some(p) = v["phase_sums"].as_object_mut() {
        if let Some(g) = p.remove("gpu_s") {
            p.insert("prove_s".into(), g);
        }
    }
    v
}

/// `seconds=N` from a query string (absent: 0, the status window).
fn seconds_param(query: Option<&str>) -> Option<f64> {
    let Some(q) = query else { return Some(0.0) };
    match q.split('&').find_map(|kv| kv.strip_prefix("seconds=")) {
        Some(v) => v.parse().ok(),
        None => Some(0.0),
    }
}

async fn trace(State(s): State<AppState>, h: HeaderMap, uri: axum::http::Uri) -> Response {
    if let Some(r) = denied(&s, &h) {
        return r;
    }
    let Some(secs) = seconds_param(uri.query()) else {
        return (StatusCode::BAD_REQUEST, "seconds must be a number\n").into_response();
    };
    let Some(window) = crate::service::trace_window(secs) else {
        return (
            StatusCode::BAD_REQUEST,
            format!("seconds = {secs}: a window of 0 to 1e6 s\n"),
        )
            .into_response();
    };
    axum::Json(s.engine.trace(window).0).into_response()
}
