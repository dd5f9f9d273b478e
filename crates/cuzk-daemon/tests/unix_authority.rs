//! Calls on the unix socket addressed as gRPC's C-core clients (Python,
//! C++) address it, the percent-encoded socket path as `:authority`, and as
//! grpc-java does, the bare path, succeed; the same call on TCP is still
//! reset by h2 (the check the unix socket lifts, see src/authority.rs).
//!
//! No Rust client can send such an authority (`http::Uri` refuses it), so
//! this speaks HTTP/2 by hand: preface, SETTINGS, HPACK-encoded HEADERS
//! (with the dynamic table, as C-core's encoder uses it), DATA.

mod common;

use common::*;
use cuzk_daemon::proto;
use prost::Message;
use std::collections::HashMap;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const GOAWAY: u8 = 0x7;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

fn frame(ty: u8, flags: u8, sid: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.push(ty);
    f.push(flags);
    f.extend_from_slice(&sid.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// What came back on one stream.
#[derive(Default, Debug)]
struct Reply {
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    data: Vec<u8>,
    reset: Option<u32>,
    ended: bool,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n == name.as_bytes())
            .map(|(_, v)| &v[..])
    }
}

/// Send a GetStatus call per authority, each on its own stream of one
/// connection, and collect the replies.
async fn get_status_calls<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    authorities: &[Vec<u8>],
    token: Option<&str>,
) -> Vec<Reply> {
    let mut out = PREFACE.to_vec();
    out.extend(frame(SETTINGS, 0, 0, &[]));
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut last_indexed: Option<&[u8]> = None;
    for (i, auth) in authorities.iter().enumerate() {
        let sid = 1 + 2 * i as u32;
        let mut h: Vec<(&str, &str)> = vec![
            (":method", "POST"),
            (":scheme", "http"),
            (":path", "/cuzk.daemon.v1.ProofService/GetStatus"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ];
        if let Some(b) = &bearer {
            h.push(("authorization", b.as_str()));
        }
        let mut block = Vec::new();
        if last_indexed == Some(&auth[..]) {
            // Indexed: the newest dynamic-table entry (62).
            block.push(0x80 | 62);
        } else {
            // Literal with incremental indexing, name `:authority` (static 1).
            block.push(0x40 | 1);
            literal(auth, &mut block);
            last_indexed = Some(&auth[..]);
        }
        for (n, v) in h {
            block.push(0x00);
            literal(n.as_bytes(), &mut block);
            literal(v.as_bytes(), &mut block);
        }
        out.extend(frame(HEADERS, END_HEADERS, sid, &block));
        // An empty GetStatusRequest: uncompressed, length 0.
        out.extend(frame(DATA, END_STREAM, sid, &[0, 0, 0, 0, 0]));
    }
    s.write_all(&out).await.unwrap();

    let mut dec = loona_hpack::Decoder::new();
    let mut replies: HashMap<u32, Reply> = HashMap::new();
    let done = |r: &HashMap<u32, Reply>| {
        (0..authorities.len()).all(|i| {
            r.get(&(1 + 2 * i as u32))
                .is_some_and(|x| x.ended || x.reset.is_some())
        })
    };
    while !done(&replies) {
        let mut h = [0u8; 9];
        s.read_exact(&mut h).await.expect("server closed early");
        let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
        let (ty, flags) = (h[3], h[4]);
        let sid = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
        let mut p = vec![0u8; len];
        s.read_exact(&mut p).await.unwrap();
        match ty {
            SETTINGS if flags & 0x1 == 0 => {
                s.write_all(&frame(SETTINGS, 0x1, 0, &[])).await.unwrap();
            }
            HEADERS => {
                // The daemon sends neither padding nor priority, and its
                // header blocks fit in one frame.
                assert_ne!(flags & END_HEADERS, 0);
                let r = replies.entry(sid).or_default();
                r.headers.extend(dec.decode(&p).unwrap());
                r.ended |= flags & END_STREAM != 0;
            }
            DATA => {
                let r = replies.entry(sid).or_default();
                r.data.extend_from_slice(&p);
                r.ended |= flags & END_STREAM != 0;
            }
            RST_STREAM => {
                replies.entry(sid).or_default().reset =
                    Some(u32::from_be_bytes(p[..4].try_into().unwrap()));
            }
            GOAWAY => panic!("GOAWAY from the daemon: {p:?}"),
            _ => {}
        }
    }
    (0..authorities.len())
        .map(|i| replies.remove(&(1 + 2 * i as u32)).unwrap())
        .collect()
}

/// A raw HPACK string (lengths under 127 only, as here).
fn literal(b: &[u8], out: &mut Vec<u8>) {
    assert!(b.len() < 127);
    out.push(b.len() as u8);
    out.extend_from_slice(b);
}

fn percent_encode_path(p: &std::path::Path) -> Vec<u8> {
    let mut v = Vec::new();
    for &b in std::os::unix::ffi::OsStrExt::as_bytes(p.as_os_str()) {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            v.push(b);
        } else {
            v.extend(format!("%{b:02X}").bytes());
        }
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_core_style_authority_accepted_on_unix_socket() {
    let t = TestDaemon::start(|_| {}).await;
    let encoded = percent_encode_path(&t.sock);
    assert!(encoded.contains(&b'%'));
    let bare = std::os::unix::ffi::OsStrExt::as_bytes(t.sock.as_os_str()).to_vec();
    // The encoded path twice: the second call's `:authority` comes from the
    // encoder's dynamic table (an indexed field), as C-core sends it.
    let auths = vec![
        encoded.clone(),
        encoded.clone(),
        bare,
        b"localhost".to_vec(),
    ];
    let conn = tokio::net::UnixStream::connect(&t.sock).await.unwrap();
    let replies = get_status_calls(conn, &auths, None).await;
    for (auth, r) in auths.iter().zip(&replies) {
        let auth = String::from_utf8_lossy(auth);
        assert_eq!(r.reset, None, "{auth}: stream reset");
        assert_eq!(r.header(":status"), Some(&b"200"[..]), "{auth}: {r:?}");
        assert_eq!(r.header("grpc-status"), Some(&b"0"[..]), "{auth}: {r:?}");
        assert!(r.data.len() >= 5 && r.data[0] == 0, "{auth}: {r:?}");
        let n = u32::from_be_bytes(r.data[1..5].try_into().unwrap()) as usize;
        assert_eq!(r.data.len(), 5 + n);
        let st = proto::GetStatusResponse::decode(&r.data[5..]).unwrap();
        assert_eq!(st.backend, "cpu", "{auth}");
    }

    // TCP keeps h2's check: the same authority is reset with
    // PROTOCOL_ERROR (1), a valid one on the same connection answers.
    let addr = t.daemon().tcp_addr.unwrap();
    let conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    let auths = vec![encoded, format!("127.0.0.1:{}", addr.port()).into_bytes()];
    let replies = get_status_calls(conn, &auths, Some(TOKEN)).await;
    assert_eq!(replies[0].reset, Some(1), "{:?}", replies[0]);
    assert_eq!(
        replies[1].header("grpc-status"),
        Some(&b"0"[..]),
        "{:?}",
        replies[1]
    );
    t.stop().await;
}
