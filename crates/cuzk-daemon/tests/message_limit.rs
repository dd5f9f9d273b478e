//! A request over `server.max_message_bytes` is refused with OUT_OF_RANGE
//! naming the setting and the limit (src/size_limit.rs), on the unix socket
//! and on TCP; one just under the limit is taken.

mod common;

use common::*;
use cuzk_daemon::config::ByteSize;
use cuzk_daemon::proto::Priority as P;
use prost::Message;
use tonic::Code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_request_names_the_limit_and_setting() {
    const LIMIT: u64 = 4096;
    let t = TestDaemon::start(|c| c.server.max_message_bytes = ByteSize(LIMIT)).await;
    let sized = |n: usize| {
        // A valid request of exactly `n` encoded bytes: padded in
        // `client_id` (the input must parse; the client id is only a key,
        // cut to 128 characters), whose length prefix is 2 bytes here.
        let mut r = req(6, 1, 1, P::Normal);
        r.client_id = "x".repeat(n - r.encoded_len() - 3);
        assert_eq!(r.encoded_len(), n);
        r
    };
    for (name, mut c) in [("unix", t.unix().await), ("tcp", t.tcp(Some(TOKEN)).await)] {
        // Just under: decoded and answered (the job is taken).
        let ok = c.submit_proof(sized(LIMIT as usize)).await;
        assert!(ok.is_ok(), "{name}: {ok:?}");
        // Just over.
        let e = c.submit_proof(sized(LIMIT as usize + 1)).await.unwrap_err();
        assert_eq!(e.code(), Code::OutOfRange, "{name}: {e}");
        let m = e.message();
        assert!(m.contains("server.max_message_bytes"), "{name}: {m}");
        assert!(
            m.contains(&format!("the limit is: {LIMIT} bytes")),
            "{name}: {m}"
        );
        assert!(
            m.contains(&format!("found {} bytes", LIMIT + 1)),
            "{name}: {m}"
        );
    }
    t.stop().await;
}
