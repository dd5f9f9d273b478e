//! The 0/1 split of an MSM's scalars, in parallel: the same result as
//! cuzk-cuda's single-threaded `host::split_zero_one`, computed on every
//! core and before a worker takes its device, so that at 2^27 (three splits
//! of ~10^8 scalars) the CPU work overlaps another worker's kernels instead
//! of holding the GPU idle.

use blstrs::Scalar;
use cuzk_cuda::ZeroOneSplit;
use ff::Field;
use rayon::prelude::*;

/// Scalars per parallel piece: a multiple of 32 (whole mask words), large
/// enough that rayon's per-task cost vanishes (~50 µs of work).
const PIECE: usize = 1 << 14;

/// Splits `scalars` into the ones (a bit mask), the zeros (dropped) and
/// the rest (positions and values, increasing).
pub fn split_zero_one_par(scalars: &[Scalar]) -> ZeroOneSplit {
    let mut out = ZeroOneSplit::default();
    split_zero_one_into(scalars, &mut out);
    out
}

/// [`split_zero_one_par`] into `out`, whose vectors are cleared and reused:
/// a caller that keeps one across partitions writes memory already mapped
/// instead of faulting in fresh pages (several times slower; at 2^27 a
/// split's vectors hold about a gigabyte).
pub fn split_zero_one_into(scalars: &[Scalar], out: &mut ZeroOneSplit) {
    out.ones.clear();
    out.ones.resize(scalars.len().div_ceil(32), 0);
    // Each piece sets its own mask words in place and keeps its other
    // scalars (a few hundred KB at most) for the ordered concatenation.
    let pieces: Vec<(usize, usize, Vec<u32>, Vec<Scalar>)> = out
        .ones
        .par_chunks_mut(PIECE / 32)
        .zip(scalars.par_chunks(PIECE))
        .enumerate()
        .map(|(k, (words, chunk))| {
            let base = (k * PIECE) as u32;
            let (mut zeros, mut ones) = (0, 0);
            let (mut ids, mut rest) = (Vec::new(), Vec::new());
            for (i, v) in chunk.iter().enumerate() {
                if *v == Scalar::ZERO {
                    zeros += 1;
                } else if *v == Scalar::ONE {
                    words[i / 32] |= 1 << (i % 32);
                    ones += 1;
                } else {
                    ids.push(base + i as u32);
                    rest.push(*v);
                }
            }
            (zeros, ones, ids, rest)
        })
        .collect();
    let rest: usize = pieces.iter().map(|p| p.2.len()).sum();
    out.zeros_count = 0;
    out.ones_count = 0;
    out.rest_ids.clear();
    out.rest_scalars.clear();
    out.rest_ids.reserve(rest);
    out.rest_scalars.reserve(rest);
    for (zeros, ones, ids, rest) in pieces {
        out.zeros_count += zeros;
        out.ones_count += ones;
        out.rest_ids.extend_from_slice(&ids);
        out.rest_scalars.extend_from_slice(&rest);
    }
}

/// The split of `scalars[lo..hi]`, cut out of `split` (the split of all of
/// `scalars`) instead of recomputed: the streamed MSMs take one per chunk
/// of bases. `lo` must be a multiple of 32 (whole mask words); otherwise,
/// or if the range is past the split, None.
pub fn split_range(split: &ZeroOneSplit, lo: usize, hi: usize) -> Option<ZeroOneSplit> {
    if !lo.is_multiple_of(32) || lo > hi || hi > split.len() {
        return None;
    }
    let words = (hi - lo).div_ceil(32);
    let mut ones = split.ones[lo / 32..lo / 32 + words].to_vec();
    let tail = (hi - lo) % 32;
    if tail != 0 {
        // Bits past `hi` belong to the next chunk.
        *ones.last_mut().expect("tail != 0 implies a word") &= (1u32 << tail) - 1;
    }
    let ones_count = ones.iter().map(|w| w.count_ones() as usize).sum();
    let a = split.rest_ids.partition_point(|&i| (i as usize) < lo);
    let b = split.rest_ids.partition_point(|&i| (i as usize) < hi);
    let rest_ids: Vec<u32> = split.rest_ids[a..b]
        .iter()
        .map(|&i| i - lo as u32)
        .collect();
    let rest_scalars = split.rest_scalars[a..b].to_vec();
    Some(ZeroOneSplit {
        ones,
        ones_count,
        zeros_count: (hi - lo) - ones_count - rest_ids.len(),
        rest_ids,
        rest_scalars,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Every field of two splits equal.
    fn assert_same(got: &ZeroOneSplit, want: &ZeroOneSplit, ctx: &str) {
        assert_eq!(got.ones, want.ones, "{ctx}");
        assert_eq!(got.ones_count, want.ones_count, "{ctx}");
        assert_eq!(got.zeros_count, want.zeros_count, "{ctx}");
        assert_eq!(got.rest_ids, want.rest_ids, "{ctx}");
        assert_eq!(got.rest_scalars, want.rest_scalars, "{ctx}");
    }

    /// `n` scalars, each 0, 1 or random with equal odds.
    fn mixed(rng: &mut impl Rng, n: usize) -> Vec<Scalar> {
        (0..n)
            .map(|_| match rng.gen_range(0..3) {
                0 => Scalar::ZERO,
                1 => Scalar::ONE,
                _ => Scalar::random(&mut *rng),
            })
            .collect()
    }

    #[test]
    fn equals_the_sequential_split() {
        let seed: u64 = rand::random();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        for n in [
            0usize,
            1,
            2,
            3,
            7,
            31,
            32,
            33,
            100,
            1000,
            PIECE - 1,
            PIECE,
            PIECE + 1,
            3 * PIECE + 77,
        ] {
            let v = mixed(&mut rng, n);
            let a = split_zero_one_par(&v);
            let b = cuzk_cuda::split_zero_one(&v);
            assert_same(&a, &b, &format!("n={n} seed={seed}"));
            assert_eq!(a.len(), n);
        }
    }

    #[test]
    fn a_reused_split_equals_a_fresh_one() {
        let seed: u64 = rand::random();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let mut reused = ZeroOneSplit::default();
        // Larger, then smaller, then larger inputs: nothing of an earlier
        // split may survive into a later one.
        for n in [3 * PIECE + 77, 100, 0, 33, 2 * PIECE] {
            let v = mixed(&mut rng, n);
            split_zero_one_into(&v, &mut reused);
            let want = cuzk_cuda::split_zero_one(&v);
            assert_same(&reused, &want, &format!("n={n} seed={seed}"));
        }
    }

    #[test]
    fn ranges_equal_the_split_of_the_range() {
        let seed: u64 = rand::random();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        for n in [0usize, 1, 31, 32, 33, 100, 1000, 5000] {
            let v = mixed(&mut rng, n);
            let all = split_zero_one_par(&v);
            for chunk in [1usize, 32, 64, 96, 1000] {
                for lo in (0..n).step_by(chunk) {
                    let hi = (lo + chunk).min(n);
                    let cut = split_range(&all, lo, hi);
                    if lo % 32 != 0 {
                        assert!(cut.is_none(), "n={n} lo={lo}");
                        continue;
                    }
                    let cut = cut.expect("aligned range");
                    let want = split_zero_one_par(&v[lo..hi]);
                    assert_same(&cut, &want, &format!("n={n} lo={lo} hi={hi} seed={seed}"));
                }
            }
            assert!(split_range(&all, 0, n + 1).is_none());
        }
    }
}
