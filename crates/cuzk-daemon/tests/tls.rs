//! The TCP listener with TLS (rustls) and the bearer token: a client that
//! trusts the certificate and has the token proves; a plain-text client or
//! one without the token is refused.

mod common;

use common::*;
use cuzk_daemon::client::{connect, ConnectOptions};
use cuzk_daemon::proto::{self, Priority as P};
use tonic::Code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_listener_with_token() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cert_path = dir.path().join("cert.pem");
    let key_path = dir.path().join("key.pem");
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.key_pair.serialize_pem()).unwrap();
    let (c2, k2) = (cert_path.clone(), key_path.clone());
    let t = TestDaemon::start(move |c| {
        c.server.tls_cert = Some(c2);
        c.server.tls_key = Some(k2);
    })
    .await;
    let addr = t.daemon().tcp_addr.unwrap();
    let opts = |token: Option<&str>| ConnectOptions {
        target: format!("https://localhost:{}", addr.port()),
        token: token.map(str::to_owned),
        tls_ca: Some(cert_path.clone()),
        tls_domain: Some("localhost".into()),
        max_message_bytes: None,
    };
    let mut ok = connect(&opts(Some(TOKEN))).await.unwrap();
    let r = ok
        .prove(req(6, 3, 1, P::Normal))
        .await
        .unwrap()
        .into_inner();
    check_proofs(&t.pvk(6), 6, 3, 1, &r);

    let mut no_token = connect(&opts(None)).await.unwrap();
    let e = no_token
        .get_status(proto::GetStatusRequest {})
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated);

    // Plain text against the TLS port fails to connect or to call.
    let plain = connect(&ConnectOptions {
        target: format!("http://127.0.0.1:{}", addr.port()),
        token: Some(TOKEN.into()),
        ..Default::default()
    })
    .await;
    if let Ok(mut p) = plain {
        assert!(p.get_status(proto::GetStatusRequest {}).await.is_err());
    }
    // Still serving.
    status(&mut ok).await;
    t.stop().await;
}
