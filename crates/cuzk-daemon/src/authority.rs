//! Any `:authority` accepted on the unix socket.
//!
//! gRPC's C-core clients (Python, C++, and the languages built on it) send
//! the percent-encoded socket path as the `:authority` of a call over a
//! unix socket (`%2Frun%2Fcuzk%2Fcuzk.sock`); grpc-java sends the bare path.
//! Neither is a valid URI authority, and h2 resets such a stream with
//! PROTOCOL_ERROR while decoding its HEADERS frame, before any tower layer
//! sees the request, so the fix has to sit below h2: [`AuthorityFix`] wraps
//! the socket and rewrites, on the way in, the header blocks whose
//! `:authority` does not parse as one to `localhost`. On a unix socket the
//! authority carries nothing (the path already names the peer), so nothing
//! is lost. Only the unix listener is wrapped; TCP keeps h2's checks.
//!
//! How: the client's frames are read as they come. HEADERS and CONTINUATION
//! frames are collected to a whole header block, decoded with an HPACK
//! decoder that follows the client's dynamic table, and encoded again
//! without any indexing (literal names and values, so the server's table
//! stays empty and can never disagree with ours), in frames of at most
//! [`MAX_OUT_FRAME`] bytes. Every other frame (DATA: the bulk of a request)
//! passes through untouched, read straight into the caller's buffer. The
//! server's frames are written through as they are.

use loona_hpack::Decoder;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The authority a rejected one is replaced with.
pub const REPLACEMENT: &[u8] = b"localhost";

/// HTTP/2's client connection preface.
const PREFACE_LEN: usize = 24;
const FRAME_HEADER: usize = 9;
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// h2's default SETTINGS_MAX_FRAME_SIZE (the daemon does not raise it):
/// the largest frame re-encoded blocks are cut into, and the largest header
/// frame accepted from the client.
pub const MAX_OUT_FRAME: usize = 16_384;
/// h2's default SETTINGS_HEADER_TABLE_SIZE, which bounds the client's
/// encoder table and so the decoder's.
const TABLE_SIZE: usize = 4096;
/// A header block larger than this (summed over its CONTINUATION frames) is
/// refused: h2's own default limit on a header list is 16 MiB, far above
/// what any gRPC client sends; this only bounds what is buffered here.
const MAX_BLOCK: usize = 1 << 20;

/// Whether `value` is an authority h2 accepts.
pub fn is_valid_authority(value: &[u8]) -> bool {
    tonic::codegen::http::uri::Authority::try_from(value).is_ok()
}

struct PendingBlock {
    stream_id: [u8; 4],
    end_stream: bool,
    priority: Option<[u8; 5]>,
    block: Vec<u8>,
}

/// A unix-socket connection whose incoming header blocks have a valid
/// `:authority` (see the module's documentation).
pub struct AuthorityFix<S> {
    inner: S,
    decoder: Decoder<'static>,
    /// Bytes read from the socket and not yet looked at.
    inbuf: Vec<u8>,
    /// Bytes ready for the reader (h2), and how far it has read them.
    out: Vec<u8>,
    out_pos: usize,
    /// Preface bytes still to pass through.
    preface_left: usize,
    /// Payload bytes of the current non-header frame still to pass through.
    passthrough: usize,
    pending: Option<PendingBlock>,
    /// Header blocks whose authority was replaced (for tests and logs).
    rewritten: u64,
}

impl<S> AuthorityFix<S> {
    pub fn new(inner: S) -> Self {
        let mut decoder = Decoder::new();
        decoder.set_max_allowed_table_size(TABLE_SIZE);
        Self {
            inner,
            decoder,
            inbuf: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            preface_left: PREFACE_LEN,
            passthrough: 0,
            pending: None,
            rewritten: 0,
        }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// How many header blocks had their authority replaced so far.
    pub fn rewritten(&self) -> u64 {
        self.rewritten
    }

    /// Move what can be decided from `inbuf` to `out`. Returns false when
    /// more input is needed.
    fn process(&mut self) -> io::Result<bool> {
        if self.preface_left > 0 {
            if self.inbuf.is_empty() {
                return Ok(false);
            }
            let n = self.preface_left.min(self.inbuf.len());
            self.out.extend(self.inbuf.drain(..n));
            self.preface_left -= n;
            return Ok(true);
        }
        if self.passthrough > 0 {
            if self.inbuf.is_empty() {
                return Ok(false);
            }
            let n = self.passthrough.min(self.inbuf.len());
            self.out.extend(self.inbuf.drain(..n));
            self.passthrough -= n;
            return Ok(true);
        }
        if self.inbuf.len() < FRAME_HEADER {
            return Ok(false);
        }
        let h = &self.inbuf[..FRAME_HEADER];
        let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
        let (ty, flags) = (h[3], h[4]);
        let mut stream_id = [0u8; 4];
        stream_id.copy_from_slice(&h[5..9]);
        let is_header = ty == HEADERS || (ty == CONTINUATION && self.pending.is_some());
        if !is_header {
            // Anything else (a stray CONTINUATION included) goes to h2 as it
            // came, which judges it.
            self.out.extend(self.inbuf.drain(..FRAME_HEADER));
            self.passthrough = len;
            return Ok(true);
        }
        if len > MAX_OUT_FRAME {
            return Err(invalid(format!(
                "header frame of {len} bytes, over the {MAX_OUT_FRAME}-byte frame limit"
            )));
        }
        if self.inbuf.len() < FRAME_HEADER + len {
            return Ok(false);
        }
        let payload: Vec<u8> = self
            .inbuf
            .drain(..FRAME_HEADER + len)
            .skip(FRAME_HEADER)
            .collect();
        let fragment = if ty == HEADERS {
            let mut p = &payload[..];
            let mut pad = 0;
            if flags & PADDED != 0 {
                let (&n, rest) = p
                    .split_first()
                    .ok_or_else(|| invalid("empty padded HEADERS"))?;
                pad = n as usize;
                p = rest;
            }
            let mut priority = None;
            if flags & PRIORITY != 0 {
                if p.len() < 5 {
                    return Err(invalid("HEADERS too short for its priority"));
                }
                priority = Some(p[..5].try_into().expect("5 bytes"));
                p = &p[5..];
            }
            if pad > p.len() {
                return Err(invalid("HEADERS padding longer than the frame"));
            }
            let fragment = p[..p.len() - pad].to_vec();
            self.pending = Some(PendingBlock {
                stream_id,
                end_stream: flags & END_STREAM != 0,
                priority,
                block: Vec::new(),
            });
            fragment
        } else {
            payload
        };
        let pending = self.pending.as_mut().expect("set above or checked");
        if pending.block.len() + fragment.len() > MAX_BLOCK {
            return Err(invalid(format!("header block over {MAX_BLOCK} bytes")));
        }
        pending.block.extend_from_slice(&fragment);
        if flags & END_HEADERS != 0 {
            let p = self.pending.take().expect("pending");
            self.emit_block(p)?;
        }
        Ok(true)
    }

    /// Decode a whole header block, fix its authority, and append it to
    /// `out` re-encoded without indexing.
    fn emit_block(&mut self, p: PendingBlock) -> io::Result<()> {
        let mut encoded = Vec::with_capacity(p.block.len() + 64);
        let mut replaced = false;
        self.decoder
            .decode_with_cb(&p.block, |name, value| {
                let value: &[u8] = if &name[..] == b":authority" && !is_valid_authority(&value) {
                    replaced = true;
                    REPLACEMENT
                } else {
                    &value
                };
                encode_literal(&name, value, &mut encoded);
            })
            .map_err(|e| invalid(format!("HPACK: {e:?}")))?;
        if replaced {
            self.rewritten += 1;
            tracing::debug!("unix socket: replaced a call's :authority with localhost");
        }
        // HEADERS (with the priority, if any, and without the padding),
        // then CONTINUATION frames; END_HEADERS on the last.
        let first_room = MAX_OUT_FRAME - if p.priority.is_some() { 5 } else { 0 };
        let mut rest = &encoded[..];
        let mut first = true;
        loop {
            let room = if first { first_room } else { MAX_OUT_FRAME };
            let n = room.min(rest.len());
            let (chunk, tail) = rest.split_at(n);
            rest = tail;
            let mut flags = if rest.is_empty() { END_HEADERS } else { 0 };
            let (ty, prio) = if first {
                if p.end_stream {
                    flags |= END_STREAM;
                }
                if p.priority.is_some() {
                    flags |= PRIORITY;
                }
                (HEADERS, p.priority)
            } else {
                (CONTINUATION, None)
            };
            let len = chunk.len() + prio.map_or(0, |_| 5);
            self.out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
            self.out.push(ty);
            self.out.push(flags);
            self.out.extend_from_slice(&p.stream_id);
            if let Some(pr) = prio {
                self.out.extend_from_slice(&pr);
            }
            self.out.extend_from_slice(chunk);
            first = false;
            if rest.is_empty() {
                return Ok(());
            }
        }
    }
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("unix socket HTTP/2: {}", msg.into()),
    )
}

/// An HPACK integer with an `n`-bit prefix (RFC 7541 section 5.1); `first`
/// holds the representation's high bits.
fn encode_int(mut v: usize, n: u8, first: u8, out: &mut Vec<u8>) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// A literal header field without indexing, new name, raw (not Huffman)
/// strings (RFC 7541 section 6.2.2).
fn encode_literal(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.push(0x00);
    encode_int(name.len(), 7, 0, out);
    out.extend_from_slice(name);
    encode_int(value.len(), 7, 0, out);
    out.extend_from_slice(value);
}

impl<S: AsyncRead + Unpin> AsyncRead for AuthorityFix<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            if this.out_pos < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.out_pos);
                buf.put_slice(&this.out[this.out_pos..this.out_pos + n]);
                this.out_pos += n;
                if this.out_pos == this.out.len() {
                    this.out.clear();
                    this.out_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.process()? {
                continue;
            }
            // A DATA frame's payload (or any other passed-through frame's)
            // is read straight into the caller's buffer: no copy here.
            if this.passthrough > 0 && this.inbuf.is_empty() {
                let want = buf.remaining().min(this.passthrough);
                let before = buf.filled().len();
                let dst = buf.initialize_unfilled_to(want);
                let mut sub = ReadBuf::new(dst);
                std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, &mut sub))?;
                let n = sub.filled().len();
                buf.set_filled(before + n);
                this.passthrough -= n;
                return Poll::Ready(Ok(()));
            }
            let start = this.inbuf.len();
            this.inbuf.resize(start + MAX_OUT_FRAME + FRAME_HEADER, 0);
            let mut rb = ReadBuf::new(&mut this.inbuf[start..]);
            let r = Pin::new(&mut this.inner).poll_read(cx, &mut rb);
            let n = rb.filled().len();
            this.inbuf.truncate(start + n);
            std::task::ready!(r)?;
            if n == 0 {
                // End of input: what is left (a truncated frame) goes to h2
                // as it came, and then the end.
                if this.inbuf.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                this.out.append(&mut this.inbuf);
                this.pending = None;
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for AuthorityFix<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl<S: tonic::transport::server::Connected> tonic::transport::server::Connected
    for AuthorityFix<S>
{
    type ConnectInfo = S::ConnectInfo;
    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn frame(ty: u8, flags: u8, sid: u32, payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.push(ty);
        f.push(flags);
        f.extend_from_slice(&sid.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    /// Split a byte stream into frames (after the preface).
    fn frames(b: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
        let mut b = &b[PREFACE_LEN..];
        let mut v = Vec::new();
        while !b.is_empty() {
            let len = u32::from_be_bytes([0, b[0], b[1], b[2]]) as usize;
            let sid = u32::from_be_bytes([b[5], b[6], b[7], b[8]]);
            v.push((b[3], b[4], sid, b[9..9 + len].to_vec()));
            b = &b[9 + len..];
        }
        v
    }

    async fn run(input: Vec<u8>) -> (Vec<u8>, u64) {
        let (mut client, server) = tokio::io::duplex(64);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            client.write_all(&input).await.unwrap();
            client.shutdown().await.unwrap();
            client
        });
        let mut fix = AuthorityFix::new(server);
        let mut out = Vec::new();
        fix.read_to_end(&mut out).await.unwrap();
        drop(writer.await.unwrap());
        (out, fix.rewritten())
    }

    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    #[tokio::test]
    async fn percent_authority_replaced_across_continuation_and_dynamic_table() {
        let bad = b"%2Frun%2Fcuzk%2Fcuzk.sock";
        let mut enc = loona_hpack::Encoder::new();
        let rest = [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", "/cuzk.daemon.v1.ProofService/GetStatus"),
            ("content-type", "application/grpc"),
        ];
        let bytes = |h: &[(&'static str, &'static str)]| -> Vec<(&'static [u8], &'static [u8])> {
            h.iter()
                .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
                .collect()
        };
        // The authority as C-core sends it: a literal with incremental
        // indexing (name: static 1), then, in the next block, the index of
        // that dynamic-table entry. (The encoder adds only the other
        // headers, none of which enter its table, so indices agree.)
        let mut block1 = vec![0x41, bad.len() as u8];
        block1.extend_from_slice(bad);
        block1.extend(enc.encode(bytes(&rest[..])));
        let mut block2 = vec![0x80 | 62];
        block2.extend(enc.encode(bytes(&rest[..])));
        let data = vec![7u8; 40_000];
        let mut input = PREFACE.to_vec();
        // Block 1: padded + priority HEADERS, then a CONTINUATION.
        let (a, b) = block1.split_at(10);
        let mut p = vec![3u8];
        p.extend_from_slice(&[0, 0, 0, 0, 16]);
        p.extend_from_slice(a);
        p.extend_from_slice(&[0, 0, 0]);
        input.extend(frame(HEADERS, PADDED | PRIORITY, 1, &p));
        input.extend(frame(CONTINUATION, END_HEADERS, 1, b));
        input.extend(frame(0x0, END_STREAM, 1, &data));
        input.extend(frame(HEADERS, END_HEADERS | END_STREAM, 3, &block2));
        let (out, rewritten) = run(input).await;
        assert_eq!(rewritten, 2);
        assert_eq!(&out[..PREFACE_LEN], PREFACE);
        let fr = frames(&out);
        assert_eq!(fr.len(), 3);
        let mut dec = Decoder::new();
        for (i, (ty, flags, sid, payload)) in [&fr[0], &fr[2]].into_iter().enumerate() {
            assert_eq!(*ty, HEADERS);
            let mut block = &payload[..];
            if i == 0 {
                assert_eq!(*flags, END_HEADERS | PRIORITY);
                assert_eq!(&block[..5], &[0, 0, 0, 0, 16]);
                block = &block[5..];
                assert_eq!(*sid, 1);
            } else {
                assert_eq!(*flags, END_HEADERS | END_STREAM);
                assert_eq!(*sid, 3);
            }
            let got = dec.decode(block).unwrap();
            let auth = got.iter().find(|(n, _)| n == b":authority").unwrap();
            assert_eq!(auth.1, REPLACEMENT);
            let path = got.iter().find(|(n, _)| n == b":path").unwrap();
            assert_eq!(path.1, b"/cuzk.daemon.v1.ProofService/GetStatus");
            assert_eq!(got.len(), 5);
        }
        assert_eq!(fr[1], (0x0, END_STREAM, 1, data));
    }

    #[tokio::test]
    async fn valid_authority_kept_and_large_block_split() {
        let mut enc = loona_hpack::Encoder::new();
        let big = vec![b'a'; 40_000];
        let h: [(&[u8], &[u8]); 3] = [
            (&b":method"[..], &b"POST"[..]),
            (&b":authority"[..], &b"localhost:1234"[..]),
            (&b"x-big"[..], &big[..]),
        ];
        let block = enc.encode(h.iter().copied());
        let mut input = PREFACE.to_vec();
        for (i, c) in block.chunks(MAX_OUT_FRAME).enumerate() {
            let last = (i + 1) * MAX_OUT_FRAME >= block.len();
            let ty = if i == 0 { HEADERS } else { CONTINUATION };
            input.extend(frame(ty, if last { END_HEADERS } else { 0 }, 1, c));
        }
        let (out, rewritten) = run(input).await;
        assert_eq!(rewritten, 0);
        let fr = frames(&out);
        assert!(fr.len() >= 3);
        let mut block = Vec::new();
        for (i, (ty, flags, _, p)) in fr.iter().enumerate() {
            assert!(p.len() <= MAX_OUT_FRAME);
            assert_eq!(*ty, if i == 0 { HEADERS } else { CONTINUATION });
            assert_eq!(*flags & END_HEADERS != 0, i + 1 == fr.len());
            block.extend_from_slice(p);
        }
        let got = Decoder::new().decode(&block).unwrap();
        assert_eq!(got[1], (b":authority".to_vec(), b"localhost:1234".to_vec()));
        assert_eq!(got[2].1, big);
    }

    #[test]
    fn validity() {
        assert!(is_valid_authority(b"localhost"));
        assert!(!is_valid_authority(b"%2Frun%2Fcuzk.sock"));
        assert!(!is_valid_authority(b"/run/cuzk.sock"));
    }
}
