//! The witness z packed by 0/1 on its way up (upload.rs): most of a
//! Filecoin witness is 0 or 1 (porep-like's aux measured 56.6% zeros and
//! 29.4% ones), so a piece of it goes up as two masks and an offset per 32
//! elements and only the other ("big") elements' bytes, about a sixth of
//! its raw size, and a kernel expands it on the device. The layout and the
//! kernel's model are cuzk-cuda's (`cuzk_cuda::zpack`); this module writes
//! it, on the copy pool, and decides per piece whether it pays.
//!
//! Writing it is two passes, each task a run of groups: the first reads
//! the piece once, writes each group's masks and its offset within the
//! task, and copies the task's big elements (while they are in cache) to a
//! scratch buffer of its own; after a prefix sum over the tasks' counts the
//! second copies each scratch buffer to the task's share of the data and
//! adds the big elements before the task to its offsets. Against a raw
//! copy (the piece read and written once) that is the piece read once and
//! its big elements, about a sixth of it, written twice and read once.

use cuzk_core::zero_one::{self, ZeroOneForm};
use cuzk_cuda::host::{scalars_as_bytes, FR_BYTES};
use cuzk_cuda::zpack::{data_offset, groups, one_bytes, packed_bytes, GROUP, HEADER_WORDS};
use rayon::prelude::*;
use std::sync::Mutex;

/// Groups per copy-pool task: 1024 groups are 1 MiB of z, the copy pool's
/// piece (copy.rs), so a 32 MiB ring piece is 32 tasks for its 12 threads.
const TASK_GROUPS: usize = 1024;

/// Groups ahead of the one being classified whose memory is asked for
/// (8 KiB). The classification is bound by how fast one thread's reads
/// arrive, not by its arithmetic: measured on a 2-core build machine
/// (512 MB of a porep-like mix, best of 10, the machine shared), one
/// thread classified in-cache data at 19 GB/s but streamed it from memory
/// at 6 GB/s; packing took 73-84 ms without prefetching, 59-65 ms with 4
/// or 8 groups ahead, worse again at 32 (the raw copy 56-61 ms there).
const PREFETCH_GROUPS: usize = 8;

/// Asks for the 1 KiB group at `at` in `src` (if any) to be brought into
/// the cache.
#[inline(always)]
fn prefetch(src: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(g) = src.get(at..at + GROUP * FR_BYTES) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for line in g.chunks(64) {
            // SAFETY: a prefetch is a hint that reads nothing and cannot
            // fault; sse, the feature it needs, is part of x86_64.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (src, at);
}

/// One element's 32 bytes as four native-order words.
type Limbs = [u64; 4];

fn limbs(e: &[u8]) -> Limbs {
    let mut out = [0u64; 4];
    for (w, b) in out.iter_mut().zip(e.chunks_exact(8)) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(b);
        *w = u64::from_ne_bytes(bytes);
    }
    out
}

/// The masks (nonzero, big) of one group's elements, read as limbs
/// (cuzk-core's `limb_masks`, without branches: with branches, 512 MB took
/// 145 ms against 120 ms on the build machine).
fn masks(group: &[u8], one: &Limbs) -> (u32, u32) {
    zero_one::limb_masks(group.chunks_exact(FR_BYTES).map(limbs), one)
}

fn word(h: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([h[4 * i], h[4 * i + 1], h[4 * i + 2], h[4 * i + 3]])
}

fn set_word(h: &mut [u8], i: usize, v: u32) {
    h[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

/// Whether `piece` (whole elements) should go packed, from a sample of
/// its groups.
fn sample_says_pack(piece: &[u8], one: &Limbs) -> bool {
    let (mut big, mut sampled) = (0usize, 0usize);
    let groups = piece.len().div_ceil(GROUP * FR_BYTES);
    for g in zero_one::sample_groups(groups) {
        let group = &piece[g * GROUP * FR_BYTES..((g + 1) * GROUP * FR_BYTES).min(piece.len())];
        big += masks(group, one).1.count_ones() as usize;
        sampled += group.len() / FR_BYTES;
    }
    zero_one::worth_sending(big, sampled)
}

/// The packed form of `piece` (whole Montgomery scalars, at most
/// `u32::MAX` of them) into the start of `dst`, on the copy pool: its
/// length, or None (nothing meaningful written) when packing does not pay
/// (the sample's decision), when it would not fit `dst`, or when the piece
/// is not whole elements. The caller then sends the piece raw.
pub(crate) fn pack_piece(piece: &[u8], dst: &mut [u8]) -> Option<usize> {
    let one = limbs(&one_bytes());
    if !piece.len().is_multiple_of(FR_BYTES) || !sample_says_pack(piece, &one) {
        return None;
    }
    pack_into(piece, dst, &one)
}

/// [`pack_piece`] without the decision: None only when the piece is not
/// whole elements, has more than `u32::MAX` of them, or does not fit.
fn pack_into(piece: &[u8], dst: &mut [u8], one: &Limbs) -> Option<usize> {
    if !piece.len().is_multiple_of(FR_BYTES) {
        return None;
    }
    let n = piece.len() / FR_BYTES;
    u32::try_from(n).ok()?;
    let data = data_offset(n);
    if dst.len() < data {
        return None;
    }
    let (header, rest) = dst.split_at_mut(data);
    let (header, pad) = header.split_at_mut(groups(n) * HEADER_WORDS * 4);
    pad.fill(0);
    let task_src = TASK_GROUPS * GROUP * FR_BYTES;
    let task_header = TASK_GROUPS * HEADER_WORDS * 4;

    // Pass 1: each group's masks and its offset within its task; each
    // task's big values into a scratch buffer of its own, read from the
    // piece while they are in cache.
    let scratch: Vec<Vec<u8>> = crate::copy::on_copy_pool(|| {
        header
            .par_chunks_mut(task_header)
            .zip(piece.par_chunks(task_src))
            .map(|(h, src)| {
                let mut values = take_scratch();
                for (g, group) in src.chunks(GROUP * FR_BYTES).enumerate() {
                    prefetch(src, (g + PREFETCH_GROUPS) * GROUP * FR_BYTES);
                    let (nz, bg) = masks(group, one);
                    set_word(h, HEADER_WORDS * g, nz);
                    set_word(h, HEADER_WORDS * g + 1, bg);
                    // At most u32::MAX elements (checked above).
                    set_word(h, HEADER_WORDS * g + 2, (values.len() / FR_BYTES) as u32);
                    let mut bits = bg;
                    while bits != 0 {
                        let i = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        values.extend_from_slice(&group[i * FR_BYTES..(i + 1) * FR_BYTES]);
                    }
                }
                values
            })
            .collect()
    });
    let big: usize = scratch.iter().map(|v| v.len() / FR_BYTES).sum();
    if big * FR_BYTES > rest.len() {
        scratch.into_iter().for_each(give_scratch);
        return None;
    }

    // Pass 2: each task's values to its share of the data, at the big
    // elements before it, and that count added to its offsets.
    let mut shares = Vec::with_capacity(scratch.len());
    let mut free = &mut rest[..big * FR_BYTES];
    let mut before = 0usize;
    for values in scratch {
        let (share, tail) = std::mem::take(&mut free).split_at_mut(values.len());
        let count = values.len() / FR_BYTES;
        shares.push((share, values, before));
        free = tail;
        before += count;
    }
    crate::copy::on_copy_pool(|| {
        header
            .par_chunks_mut(task_header)
            .zip(shares.into_par_iter())
            .for_each(|(h, (share, values, before))| {
                share.copy_from_slice(&values);
                for g in 0..h.len() / (HEADER_WORDS * 4) {
                    let at = HEADER_WORDS * g + 2;
                    // At most u32::MAX elements in all.
                    set_word(h, at, word(h, at) + before as u32);
                }
                give_scratch(values);
            })
    });
    Some(packed_bytes(n, big))
}

// A prepared form (cuzk-core's zero_one, made on the synthesis side) goes
// up in pieces of this layout: the groups and header words must agree.
const _: () = assert!(cuzk_core::zero_one::GROUP == GROUP);
const _: () = assert!(cuzk_core::zero_one::HEADER_WORDS == HEADER_WORDS);

/// The end (exclusive) of the piece of `form` that starts at group `g0`
/// (below `form.groups()`): the most groups whose packed piece fits `room`
/// bytes, at least one (None when not even one group fits).
pub(crate) fn form_piece_end(form: &ZeroOneForm, g0: usize, room: usize) -> Option<usize> {
    let fits = |g1: usize| {
        let n = (g1 * GROUP).min(form.len()) - g0 * GROUP;
        packed_bytes(n, form.big_before(g1) - form.big_before(g0)) <= room
    };
    if !fits(g0 + 1) {
        return None;
    }
    // fits is monotone: the largest g1 in (g0, groups] that fits.
    let (mut lo, mut hi) = (g0 + 1, form.groups());
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

/// Writes groups `g0..g1` of `form` into the start of `dst` as a packed
/// piece (the layout `expand_z` reads, offsets counted from the piece's
/// first big element), on the copy pool; returns its length and its
/// elements. `dst` must hold it ([`form_piece_end`] chose `g1` so).
pub(crate) fn write_form_piece(
    form: &ZeroOneForm,
    g0: usize,
    g1: usize,
    dst: &mut [u8],
) -> (usize, usize) {
    let n = (g1 * GROUP).min(form.len()) - g0 * GROUP;
    let (b0, b1) = (form.big_before(g0), form.big_before(g1));
    let data = data_offset(n);
    let len = packed_bytes(n, b1 - b0);
    let (header, rest) = dst[..len].split_at_mut(data);
    let (header, pad) = header.split_at_mut((g1 - g0) * HEADER_WORDS * 4);
    pad.fill(0);
    let words = &form.header()[g0 * HEADER_WORDS..g1 * HEADER_WORDS];
    crate::copy::on_copy_pool(|| {
        header
            .par_chunks_mut(TASK_GROUPS * HEADER_WORDS * 4)
            .zip(words.par_chunks(TASK_GROUPS * HEADER_WORDS))
            .for_each(|(h, w)| {
                for (i, (out, &v)) in h.chunks_exact_mut(4).zip(w).enumerate() {
                    // The offset word counts from the piece's first big
                    // element (at most u32::MAX: the form's length is).
                    let v = if i % HEADER_WORDS == 2 {
                        v - b0 as u32
                    } else {
                        v
                    };
                    out.copy_from_slice(&v.to_le_bytes());
                }
            })
    });
    crate::copy::parallel_copy(rest, scalars_as_bytes(&form.big()[b0..b1]));
    (len, n)
}

/// One piece of a 0/1 form written ahead into one buffer (upload.rs's
/// `StagedForm`): groups `g0..g1`, `len` bytes from byte `at`, for the
/// `n` elements from element `first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StagedPiece {
    pub at: usize,
    pub len: usize,
    pub n: usize,
    pub first: usize,
    g0: usize,
    g1: usize,
}

/// How `form` lies in one buffer as packed pieces of at most `room` bytes
/// each (at least one group: `room` must hold one), each starting on a
/// multiple of `align`; and the buffer's length.
pub(crate) fn staged_layout(
    form: &ZeroOneForm,
    room: usize,
    align: usize,
) -> (Vec<StagedPiece>, usize) {
    let mut pieces = Vec::new();
    let (mut g0, mut at) = (0, 0usize);
    while g0 < form.groups() {
        let g1 = form_piece_end(form, g0, room).expect("a staged piece holds one group");
        let first = g0 * GROUP;
        let n = (g1 * GROUP).min(form.len()) - first;
        let len = packed_bytes(n, form.big_before(g1) - form.big_before(g0));
        pieces.push(StagedPiece {
            at,
            len,
            n,
            first,
            g0,
            g1,
        });
        at = (at + len).next_multiple_of(align.max(1));
        g0 = g1;
    }
    (pieces, at)
}

/// Writes `form`'s pieces (laid out by [`staged_layout`]) into `out`, on
/// the copy pool.
pub(crate) fn write_staged(form: &ZeroOneForm, pieces: &[StagedPiece], out: &mut [u8]) {
    for p in pieces {
        let (len, n) = write_form_piece(form, p.g0, p.g1, &mut out[p.at..p.at + p.len]);
        debug_assert_eq!((len, n), (p.len, p.n));
    }
}

/// The tasks' scratch buffers, kept between pieces (a fresh 1 MiB buffer
/// per task would be a fresh mapping, page faults included, 32 times a
/// piece). At most [`SCRATCH_KEPT`] are kept: two workers' pieces of 32
/// tasks, each buffer the size of a task's big values (about 150 KB of a
/// Filecoin witness's 1 MiB, at most 1 MiB), so at most 64 MiB.
static SCRATCH: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
const SCRATCH_KEPT: usize = 64;

fn take_scratch() -> Vec<u8> {
    let mut v = SCRATCH
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .pop()
        .unwrap_or_default();
    v.clear();
    v
}

fn give_scratch(v: Vec<u8>) {
    // A buffer is whole or not in the list; poisoning leaves nothing half
    // done.
    let mut kept = SCRATCH.lock().unwrap_or_else(|p| p.into_inner());
    if kept.len() < SCRATCH_KEPT {
        kept.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_core::testing::zero_one_mix as witness;
    use cuzk_cuda::host::scalars_as_bytes;
    use cuzk_cuda::zpack::expand;

    /// What z holds on the device after `src` went up in pieces of
    /// `piece_bytes` as upload.rs sends them: each packed where pack_piece
    /// says so (expanded by the kernel's model), else raw. Also returns the
    /// bytes sent and the pieces that went packed.
    fn through_pieces(src: &[u8], piece_bytes: usize) -> (Vec<u8>, usize, usize) {
        let mut z = Vec::with_capacity(src.len());
        let mut buf = vec![0xA5u8; piece_bytes];
        let (mut sent, mut packed) = (0, 0);
        for piece in src.chunks(piece_bytes) {
            match pack_piece(piece, &mut buf) {
                Some(len) => {
                    z.extend(expand(&buf[..len], piece.len() / FR_BYTES).expect("expands"));
                    sent += len;
                    packed += 1;
                }
                None => {
                    z.extend_from_slice(piece);
                    sent += piece.len();
                }
            }
        }
        (z, sent, packed)
    }

    #[test]
    fn round_trips_at_every_size() {
        for n in [0usize, 1, 31, 32, 33, 1000, 3 * TASK_GROUPS * GROUP + 77] {
            for (name, zeros, ones) in [
                ("mixed", 0.566, 0.294),
                ("all zero", 1.0, 0.0),
                ("all one", 0.0, 1.0),
                ("40% big", 0.3, 0.3),
            ] {
                let w = witness(n, zeros, ones, n as u64);
                let src = scalars_as_bytes(&w);
                let mut buf = vec![0xA5u8; src.len() + 4096];
                let one = limbs(&one_bytes());
                let len = pack_into(src, &mut buf, &one).expect("fits");
                let got = expand(&buf[..len], n).expect("expands");
                assert!(got == src, "{name}, {n} elements");
                // The decision packs all of them but small random draws.
                let decided = pack_piece(src, &mut buf);
                if n >= 1000 || zeros + ones == 1.0 {
                    assert_eq!(decided, Some(len), "{name} {n}: packed");
                }
                if n >= 1000 && name != "40% big" {
                    assert!(len * 4 < src.len(), "{name} {n}: {len} bytes packed");
                }
            }
        }
    }

    /// A prepared form sent in pieces of at most `room` bytes: what z holds
    /// on the device (each piece expanded by the kernel's model) and the
    /// pieces it took.
    fn form_through_pieces(form: &ZeroOneForm, room: usize) -> (Vec<u8>, usize) {
        let mut z = Vec::new();
        let mut buf = vec![0xA5u8; room];
        let (mut g, mut pieces) = (0, 0);
        while g < form.groups() {
            let end = form_piece_end(form, g, room).expect("a group fits");
            assert!(end > g);
            let (len, n) = write_form_piece(form, g, end, &mut buf);
            assert!(len <= room);
            z.extend(expand(&buf[..len], n).expect("expands"));
            g = end;
            pieces += 1;
        }
        (z, pieces)
    }

    #[test]
    fn prepared_forms_round_trip_in_pieces() {
        for n in [1usize, 31, 33, 1000, 3 * TASK_GROUPS * GROUP + 77] {
            for (zeros, ones) in [(0.566, 0.294), (1.0, 0.0), (0.0, 1.0), (0.3, 0.3)] {
                let w = witness(n, zeros, ones, 40 + n as u64);
                let form = ZeroOneForm::of_any(&w).expect("short");
                let src = scalars_as_bytes(&w);
                // One piece; pieces of a few groups; the smallest room one
                // group of big values needs.
                for room in [packed_bytes(n, n), 4096, packed_bytes(GROUP, GROUP)] {
                    let (z, pieces) = form_through_pieces(&form, room);
                    assert!(z == src, "{n} elements, {zeros} zeros, room {room}");
                    if room >= packed_bytes(n, n) {
                        assert_eq!(pieces, 1);
                    }
                }
            }
        }
        // Too small for one group's header and data.
        let form = ZeroOneForm::of(&witness(64, 0.5, 0.5, 3)).expect("pays");
        assert!(form_piece_end(&form, 0, 8).is_none());
    }

    #[test]
    fn staged_forms_round_trip_from_one_buffer() {
        for n in [0usize, 1, 33, 1000, 3 * TASK_GROUPS * GROUP + 77] {
            for (zeros, ones) in [(0.566, 0.294), (0.0, 1.0), (0.3, 0.3)] {
                let w = witness(n, zeros, ones, 70 + n as u64);
                let form = ZeroOneForm::of_any(&w).expect("short");
                let src = scalars_as_bytes(&w);
                for (room, align) in [(packed_bytes(n, n).max(64), 256), (4096, 256), (1000, 1)] {
                    let (pieces, total) = staged_layout(&form, room, align);
                    let mut out = vec![0xA5u8; total];
                    write_staged(&form, &pieces, &mut out);
                    // Each piece from its place, expanded into its own.
                    let mut z = vec![0x5Au8; src.len()];
                    let mut next = 0;
                    for p in &pieces {
                        assert!(p.len <= room && p.at % align == 0, "{p:?}");
                        assert_eq!(p.first, next, "pieces in order, none missed");
                        let got = expand(&out[p.at..p.at + p.len], p.n).expect("expands");
                        z[p.first * FR_BYTES..(p.first + p.n) * FR_BYTES].copy_from_slice(&got);
                        next = p.first + p.n;
                    }
                    assert_eq!(next, n);
                    assert!(z == src, "{n} elements, {zeros} zeros, room {room}");
                    if n > 0 && room >= packed_bytes(n, n) {
                        assert_eq!(pieces.len(), 1);
                    }
                }
            }
        }
    }

    #[test]
    fn all_big_round_trips_when_packed_anyway() {
        for n in [1usize, 33, 1000, 2 * TASK_GROUPS * GROUP + 5] {
            let w = witness(n, 0.0, 0.0, 7 + n as u64);
            let src = scalars_as_bytes(&w);
            let mut buf = vec![0u8; packed_bytes(n, n)];
            let one = limbs(&one_bytes());
            let len = pack_into(src, &mut buf, &one).expect("fits");
            assert_eq!(len, packed_bytes(n, n));
            assert!(expand(&buf[..len], n).expect("expands") == src, "{n}");
            // One byte less: it does not fit and says so.
            let short = buf.len() - 1;
            assert_eq!(pack_into(src, &mut buf[..short], &one), None);
        }
    }

    #[test]
    fn several_pieces_with_a_partial_last_one() {
        // Pieces of 2 tasks and change; the last is short and not a
        // multiple of 32 elements; one piece in the middle is random.
        let piece_elems = 2 * TASK_GROUPS * GROUP + 96;
        let mut w = witness(3 * piece_elems + 45, 0.566, 0.294, 11);
        let random = witness(piece_elems, 0.0, 0.0, 12);
        w[piece_elems..2 * piece_elems].copy_from_slice(&random);
        let src = scalars_as_bytes(&w);
        let (z, sent, packed) = through_pieces(src, piece_elems * FR_BYTES);
        assert!(z == src);
        assert_eq!(packed, 3, "the random piece goes raw, the others packed");
        assert!(sent < src.len() / 2, "{sent} of {} bytes sent", src.len());
    }

    #[test]
    fn random_values_go_raw() {
        for n in [1usize, 32, 1000, TASK_GROUPS * GROUP] {
            let w = witness(n, 0.0, 0.0, 99 + n as u64);
            let src = scalars_as_bytes(&w);
            let mut buf = vec![0u8; 2 * src.len() + 4096];
            assert_eq!(pack_piece(src, &mut buf), None, "{n} random elements");
            let (z, sent, packed) = through_pieces(src, 1 << 20);
            assert!(z == src);
            assert_eq!((sent, packed), (src.len(), 0));
        }
        // Mostly big (70%): raw as well.
        let w = witness(10_000, 0.2, 0.1, 5);
        assert_eq!(
            pack_piece(scalars_as_bytes(&w), &mut vec![0u8; 1 << 20]),
            None
        );
    }

    #[test]
    fn what_does_not_fit_or_is_not_whole_elements_goes_raw() {
        let w = witness(1000, 0.566, 0.294, 3);
        let src = scalars_as_bytes(&w);
        // Room for the header only.
        assert_eq!(pack_piece(src, &mut vec![0u8; data_offset(1000)]), None);
        assert_eq!(
            pack_piece(&src[..src.len() - 1], &mut vec![0u8; 1 << 20]),
            None
        );
    }
}
