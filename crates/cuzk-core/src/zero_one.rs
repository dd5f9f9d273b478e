//! The 0/1 form of a witness vector: most of a Filecoin witness is 0 or 1
//! (porep-like's aux measured 56.6% zeros and 29.4% ones), so a vector can
//! be held as two masks and a count per group of [`GROUP`] elements and
//! only its other ("big") elements.
//!
//! A GPU backend sends z this way (a sixth of its raw bytes) and expands it
//! on the device. Packing reads the whole vector once; made here, on the
//! synthesis side, right after a witness is generated ([`crate::compiled::Witness::prepare_zero_one`]),
//! it costs no time on the proving side, which then only copies the packed
//! bytes (cuzk-gpu's upload). Where it is not made, the upload packs as it
//! goes, on its own time.
//!
//! Each group's header is three words: the nonzero mask, the big mask (bit
//! i of each for element i of the group) and the big elements before the
//! group; element i of a group is 0 if its nonzero bit is clear, 1 if its
//! big bit is, and otherwise `big()[offset + popcount(big mask below i)]`.

use crate::Scalar;
use ff::Field;
use rayon::prelude::*;

/// Elements per group: one bit of a `u32` mask each.
pub const GROUP: usize = 32;
/// Header words per group: nonzero mask, big mask, big elements before.
pub const HEADER_WORDS: usize = 3;

/// Groups per parallel task: 1024 groups are 1 MiB of the vector.
const TASK_GROUPS: usize = 1024;

/// The decision reads about this many groups spread evenly over a vector or
/// a piece of one (every group of fewer), as the check against a vector
/// does: 512 of a 32 MiB upload piece's 32768 (~1.5% of a raw copy's
/// reads), enough to tell a Filecoin witness (~14% big) from random values
/// (all big). A fixed stride of 64 groups read only the first group of a
/// small witness (porep-like 2^10: 32 groups), whose first values are big,
/// and sent the whole witness raw (H200, 2026-12-04 call 30).
const SAMPLE_GROUPS: usize = 512;

/// The 0/1 form of a vector of scalars (see the module's description).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZeroOneForm {
    len: usize,
    header: Vec<u32>,
    big: Vec<Scalar>,
}

/// The masks (nonzero, big) of one group's elements. Without branches, on
/// the Montgomery limbs: a witness's 0, 1 and big values follow no pattern
/// a branch predictor could learn.
pub fn group_masks(group: &[Scalar]) -> (u32, u32) {
    let one = blst::blst_fr::from(Scalar::ONE).l;
    limb_masks(group.iter().map(|e| blst::blst_fr::from(*e).l), &one)
}

/// [`group_masks`] of elements given as their four Montgomery limbs (as a
/// byte copy of z reads them), `one` the Montgomery one's.
pub fn limb_masks(group: impl Iterator<Item = [u64; 4]>, one: &[u64; 4]) -> (u32, u32) {
    let (mut nonzero, mut big) = (0u32, 0u32);
    for (i, l) in group.enumerate() {
        let nz = (l[0] | l[1] | l[2] | l[3] != 0) as u32;
        let not_one =
            ((l[0] ^ one[0]) | (l[1] ^ one[1]) | (l[2] ^ one[2]) | (l[3] ^ one[3]) != 0) as u32;
        nonzero |= nz << i;
        big |= (nz & not_one) << i;
    }
    (nonzero, big)
}

/// Indices of about [`SAMPLE_GROUPS`] groups spread evenly over `groups`
/// (every group of fewer): what the decision to send a vector (or a piece
/// of one) in this form reads.
pub fn sample_groups(groups: usize) -> impl Iterator<Item = usize> {
    let stride = (groups / SAMPLE_GROUPS).max(1);
    (0..groups).step_by(stride)
}

/// Whether a vector with `big` big elements in `sampled` pays to send in
/// this form: at most half big. At half, packing on the way up moves 2.5
/// times the vector's bytes through host memory (read once, the big half
/// written twice and read once) against a raw copy's 2, for half the bytes
/// over the link: beyond that it no longer pays on the host, whose copy is
/// what limits the upload.
pub fn worth_sending(big: usize, sampled: usize) -> bool {
    2 * big <= sampled
}

impl ZeroOneForm {
    /// The form of `v`, or None when it does not pay (more than half of a
    /// sample of its groups' elements are big) or `v` has more than
    /// `u32::MAX` elements. Parallel over rayon's pool.
    pub fn of(v: &[Scalar]) -> Option<Self> {
        u32::try_from(v.len()).ok()?;
        let groups = v.len().div_ceil(GROUP);
        let (mut big, mut sampled) = (0usize, 0usize);
        for g in sample_groups(groups) {
            let group = &v[g * GROUP..((g + 1) * GROUP).min(v.len())];
            big += group_masks(group).1.count_ones() as usize;
            sampled += group.len();
        }
        if !worth_sending(big, sampled) {
            return None;
        }
        Self::of_any(v)
    }

    /// The form of `v` whether it pays or not; None only when `v` has more
    /// than `u32::MAX` elements.
    ///
    /// Two passes over rayon's pool, writing only memory allocated once
    /// (backed by huge pages where Linux allows, and first touched by the
    /// threads that fill it): the first reads `v` for the masks and counts
    /// each task's big elements, the second copies the big elements (only
    /// those: the masks say where) to the task's share. Per-task buffers
    /// grown as they went and concatenated after took ~1 s at 2^27 on the
    /// H200 machine's 16 cores (2026-12-04 call 40), most of it page
    /// faults of fresh memory taken by all threads at once.
    pub fn of_any(v: &[Scalar]) -> Option<Self> {
        u32::try_from(v.len()).ok()?;
        let groups = v.len().div_ceil(GROUP);
        let mut header = Vec::with_capacity(groups * HEADER_WORDS);
        crate::compiled::advise_huge_pages(&header);
        header.par_extend((0..groups * HEADER_WORDS).into_par_iter().map(|_| 0u32));
        // Pass 1: masks, offsets within the task, the task's count.
        let counts: Vec<usize> = header
            .par_chunks_mut(TASK_GROUPS * HEADER_WORDS)
            .zip(v.par_chunks(TASK_GROUPS * GROUP))
            .map(|(h, src)| {
                let mut count = 0usize;
                for (w, group) in h.chunks_exact_mut(HEADER_WORDS).zip(src.chunks(GROUP)) {
                    let (nz, bg) = group_masks(group);
                    w[0] = nz;
                    w[1] = bg;
                    w[2] = count as u32;
                    count += bg.count_ones() as usize;
                }
                count
            })
            .collect();
        let total: usize = counts.iter().sum();
        let mut big = Vec::with_capacity(total);
        crate::compiled::advise_huge_pages(&big);
        big.par_extend((0..total).into_par_iter().map(|_| Scalar::ZERO));
        // Pass 2: each task's big elements to its share, its offsets moved
        // by the big elements before it.
        let mut shares = Vec::with_capacity(counts.len());
        let mut free = &mut big[..];
        let mut before = 0usize;
        for &count in &counts {
            let (share, tail) = std::mem::take(&mut free).split_at_mut(count);
            shares.push((share, before));
            free = tail;
            before += count;
        }
        header
            .par_chunks_mut(TASK_GROUPS * HEADER_WORDS)
            .zip(v.par_chunks(TASK_GROUPS * GROUP))
            .zip(shares.into_par_iter())
            .for_each(|((h, src), (share, before))| {
                for (w, group) in h.chunks_exact_mut(HEADER_WORDS).zip(src.chunks(GROUP)) {
                    let at = w[2] as usize;
                    let mut bits = w[1];
                    let mut k = 0;
                    while bits != 0 {
                        let i = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        share[at + k] = group[i];
                        k += 1;
                    }
                    w[2] += before as u32;
                }
            });
        Some(ZeroOneForm {
            len: v.len(),
            header,
            big,
        })
    }

    /// Elements of the vector.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Groups (the last one may be partial).
    pub fn groups(&self) -> usize {
        self.len.div_ceil(GROUP)
    }
    /// [`HEADER_WORDS`] words per group (see the module's description).
    pub fn header(&self) -> &[u32] {
        &self.header
    }
    /// The big elements, in order.
    pub fn big(&self) -> &[Scalar] {
        &self.big
    }
    /// Big elements before group `g` (`g` up to [`Self::groups`]).
    pub fn big_before(&self, g: usize) -> usize {
        if g < self.groups() {
            self.header[HEADER_WORDS * g + 2] as usize
        } else {
            self.big.len()
        }
    }

    /// Whether this could be the form of `v`: the same length, and a sample
    /// of groups (about [`SAMPLE_GROUPS`], the first and last among them)
    /// with the masks and big values `v` has. A form made before `v` was
    /// changed is refused this way unless the change missed the sample.
    pub fn matches(&self, v: &[Scalar]) -> bool {
        if v.len() != self.len {
            return false;
        }
        let groups = self.groups();
        let last = groups.checked_sub(1);
        sample_groups(groups).chain(last).all(|g| {
            let group = &v[g * GROUP..((g + 1) * GROUP).min(v.len())];
            let h = &self.header[HEADER_WORDS * g..HEADER_WORDS * (g + 1)];
            let (nz, bg) = group_masks(group);
            if (nz, bg) != (h[0], h[1]) {
                return false;
            }
            let at = h[2] as usize;
            let mut bits = bg;
            let mut k = 0;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.big.get(at + k) != Some(&group[i]) {
                    return false;
                }
                k += 1;
            }
            true
        })
    }

    /// The vector back (tests; a backend expands on its device).
    pub fn expand(&self) -> Vec<Scalar> {
        let mut out = vec![Scalar::ZERO; self.len];
        for (g, group) in out.chunks_mut(GROUP).enumerate() {
            let h = &self.header[HEADER_WORDS * g..HEADER_WORDS * (g + 1)];
            let mut k = h[2] as usize;
            for (i, e) in group.iter_mut().enumerate() {
                let bit = 1u32 << i;
                if h[0] & bit == 0 {
                    continue;
                }
                if h[1] & bit == 0 {
                    *e = Scalar::ONE;
                } else {
                    *e = self.big[k];
                    k += 1;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::zero_one_mix as mixed;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn round_trips_at_every_size() {
        for n in [0usize, 1, 31, 32, 33, 1000, 3 * TASK_GROUPS * GROUP + 77] {
            for (zeros, ones) in [(0.566, 0.294), (1.0, 0.0), (0.0, 1.0), (0.3, 0.3)] {
                let v = mixed(n, zeros, ones, n as u64 + 11);
                let f = ZeroOneForm::of_any(&v).expect("short");
                assert_eq!(f.expand(), v, "{n} elements, {zeros} zeros, {ones} ones");
                assert!(f.matches(&v));
                let big = v
                    .iter()
                    .filter(|e| **e != Scalar::ZERO && **e != Scalar::ONE)
                    .count();
                assert_eq!(f.big().len(), big);
                assert_eq!(f.big_before(f.groups()), big);
                assert_eq!(f.header().len(), f.groups() * HEADER_WORDS);
                if n >= 1000 {
                    assert_eq!(ZeroOneForm::of(&v).as_ref(), Some(&f), "pays at {n}");
                }
            }
        }
    }

    #[test]
    fn random_values_are_not_worth_it() {
        let v = mixed(100_000, 0.0, 0.0, 5);
        assert!(ZeroOneForm::of(&v).is_none());
        // Forced, they still round-trip.
        assert_eq!(ZeroOneForm::of_any(&v).expect("short").expand(), v);
    }

    #[test]
    fn a_changed_vector_is_not_matched() {
        let n = 3 * TASK_GROUPS * GROUP + 5;
        let v = mixed(n, 0.566, 0.294, 9);
        let f = ZeroOneForm::of(&v).expect("pays");
        // The last element, a sampled group's big value, a length change.
        let mut w = v.clone();
        w[n - 1] = Scalar::random(&mut ChaCha8Rng::seed_from_u64(1));
        assert!(!f.matches(&w));
        let mut w = v.clone();
        let i = (0..GROUP)
            .find(|&i| v[i] != Scalar::ZERO && v[i] != Scalar::ONE)
            .expect("a big value in the first group");
        w[i] += Scalar::ONE;
        assert!(!f.matches(&w));
        assert!(!f.matches(&v[..n - 1]));
        assert!(f.matches(&v));
    }
}
