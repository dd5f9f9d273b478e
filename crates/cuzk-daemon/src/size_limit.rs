//! The message-size limit named in the error a client gets.
//!
//! tonic refuses a request larger than the service's
//! `max_decoding_message_size` with OUT_OF_RANGE "Error, decoded message
//! length too large: found N bytes, the limit is: M bytes", which says
//! neither that the limit is the daemon's nor how to raise it. tonic offers
//! no hook for that message, so [`SizeLimitNote`], a tower layer on every
//! gRPC listener, rewrites it on the way out: the status keeps its code and
//! tonic's figures, and gains the setting's name, `server.max_message_bytes`;
//! the daemon logs the same at WARN. It sees the trailers-only responses
//! tonic sends when a unary request (every call of the daemon's and Curio's
//! services) fails to decode, which is where this error is reported.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::codegen::http::{Request, Response};
use tonic::{Code, Status};

/// The prefix of tonic's message for a request over the limit.
const TONIC_TOO_LARGE: &str = "Error, decoded message length too large";

/// The setting the limit comes from.
pub const SETTING: &str = "server.max_message_bytes";

/// The message a client gets for a request over the limit, from tonic's.
pub fn explain(tonic_message: &str) -> String {
    format!(
        "request too large for the daemon: {}; the limit is the daemon's {SETTING} setting \
         (raise it in cuzk.toml [server], e.g. max_message_bytes = \"512MiB\")",
        tonic_message
            .strip_prefix("Error, ")
            .unwrap_or(tonic_message)
    )
}

/// The layer: `Server::builder().layer(SizeLimitNote)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SizeLimitNote;

impl<S> tower::Layer<S> for SizeLimitNote {
    type Service = SizeLimitNoteService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        SizeLimitNoteService { inner }
    }
}

#[derive(Clone, Debug)]
pub struct SizeLimitNoteService<S> {
    inner: S,
}

impl<S, ReqB, ResB> tower::Service<Request<ReqB>> for SizeLimitNoteService<S>
where
    S: tower::Service<Request<ReqB>, Response = Response<ResB>>,
    S::Future: Send + 'static,
{
    type Response = Response<ResB>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<ResB>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqB>) -> Self::Future {
        let path = req.uri().path().to_owned();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let mut resp = fut.await?;
            note(&path, &mut resp);
            Ok(resp)
        })
    }
}

/// Rewrite a too-large status in `resp`'s headers (a trailers-only reply).
fn note<B>(path: &str, resp: &mut Response<B>) {
    let Some(status) = Status::from_header_map(resp.headers()) else {
        return;
    };
    if status.code() != Code::OutOfRange || !status.message().starts_with(TONIC_TOO_LARGE) {
        return;
    }
    let message = explain(status.message());
    tracing::warn!(method = path, "{message}");
    let h = resp.headers_mut();
    h.remove("grpc-status");
    h.remove("grpc-message");
    h.remove("grpc-status-details-bin");
    if Status::out_of_range(message).add_header(h).is_err() {
        // Cannot happen (the message is plain text); tonic's status stays.
        let _ = status.add_header(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tonic_message_rewritten_with_setting_and_limit() {
        let tonic = "Error, decoded message length too large: found 2000 bytes, the limit is: \
                     1024 bytes";
        let mut resp = Response::new(());
        Status::out_of_range(tonic)
            .add_header(resp.headers_mut())
            .unwrap();
        note("/x/Y", &mut resp);
        let s = Status::from_header_map(resp.headers()).unwrap();
        assert_eq!(s.code(), Code::OutOfRange);
        assert!(
            s.message().contains("server.max_message_bytes"),
            "{}",
            s.message()
        );
        assert!(
            s.message().contains("the limit is: 1024 bytes"),
            "{}",
            s.message()
        );
        assert!(s.message().contains("found 2000 bytes"), "{}", s.message());

        // Other statuses are left alone.
        let mut resp = Response::new(());
        Status::out_of_range("index out of range")
            .add_header(resp.headers_mut())
            .unwrap();
        note("/x/Y", &mut resp);
        let s = Status::from_header_map(resp.headers()).unwrap();
        assert_eq!(s.message(), "index out of range");
    }
}
