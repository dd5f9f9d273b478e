//! Staging plans: given a partition's sizes and the bytes the budget has
//! left, decide what lives on the device at once. Pure arithmetic, no CUDA,
//! so every branch is unit-tested with made-up memory sizes.
//!
//! Two independent choices, tried from the fastest down:
//! - H: a, b and c resident together (three inverse NTTs, three coset NTTs,
//!   the pointwise step and the coset inverse NTT all on the device); or one
//!   vector at a time (each transformed on the device and read back, the
//!   pointwise step on the host, the result uploaded for the last
//!   transform); or, when not even one vector and its twiddles fit, H on the
//!   host.
//! - Bases: the parameters' five point vectors resident across proofs; or
//!   uploaded before each MSM and freed after it; or streamed in chunks of
//!   points whose partial MSMs are summed (an MSM is linear in its points,
//!   so a chunked MSM equals the whole one).
//!
//! cuzk-cuda states the bytes its MSMs and NTTs allocate
//! (`cuzk_cuda::host::msm_scratch_bytes`, `ntt_scratch_bytes`, next to the
//! constants its kernels use); the plans add what this crate allocates
//! itself (a/b/c, bases, chunk buffers). The GPU test compares the sums
//! with the driver pool's measured high-water mark.

/// Bytes of one Fr element on the device.
pub const FR: u64 = 32;
pub const G1_POINT: u64 = 96;
pub const G2_POINT: u64 = 192;

/// Smallest chunk the streaming path uses: below this an MSM's fixed costs
/// (window sums, readback) dominate and the card is too full to be useful.
pub const MIN_CHUNK_POINTS: usize = 1 << 10;

/// The sizes of one partition that decide its memory use: the type of the
/// device seam, which the daemon reads from a parameter file's headers.
pub use cuzk_core::accel::PartitionSizes;

/// Where H is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HStaging {
    /// a, b, c on the device together.
    AllResident,
    /// One vector on the device at a time; pointwise step on the host.
    OneAtATime,
    /// On the host (cuzk-core's CPU NTT).
    Host,
}

/// Where the MSM bases are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseStaging {
    /// All five vectors on the device, kept across proofs.
    Resident,
    /// Each MSM's vector uploaded before it, freed after it.
    PerMsm,
    /// Streamed in chunks of at most this many points (G1, G2; the H MSM
    /// over coefficients left on the device, 0 when they must go back to
    /// the host first).
    Chunked {
        g1_points: usize,
        g2_points: usize,
        h_points: usize,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagingPlan {
    pub h: HStaging,
    pub bases: BaseStaging,
}

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error(
    "not even the streaming path fits: {available} bytes available, a {MIN_CHUNK_POINTS}-point \
     G2 chunk needs {needed}"
)]
pub struct PlanError {
    pub available: u64,
    pub needed: u64,
}

/// What a partition of these sizes holds on the device, step by step, as
/// this crate and cuzk-cuda allocate it.
pub trait Footprint {
    /// Bytes of the five base vectors.
    fn params_bytes(&self) -> u64;
    /// Device bytes the H step holds at its peak under `h`.
    fn h_bytes(&self, h: HStaging) -> u64;
    /// The largest MSM's scratch.
    fn max_msm_scratch(&self) -> u64;
    /// The largest bases-plus-scratch of one MSM (the per-MSM upload's peak).
    fn max_msm_with_bases(&self) -> u64;
}

/// The five MSMs of a partition: (scalars, in G2).
fn msms(s: &PartitionSizes) -> [(usize, bool); 5] {
    [
        (s.a, false),
        (s.b, false),
        (s.b, true),
        (s.l, false),
        (s.h, false),
    ]
}

impl Footprint for PartitionSizes {
    /// Bytes of the five base vectors.
    fn params_bytes(&self) -> u64 {
        (self.a + self.b + self.l + self.h) as u64 * G1_POINT + self.b as u64 * G2_POINT
    }

    fn h_bytes(&self, h: HStaging) -> u64 {
        let n = self.domain as u64;
        // The twiddle table cuzk-cuda caches and the power tables of a
        // coset step, as cuzk-cuda states them.
        let tables = cuzk_cuda::host::ntt_scratch_bytes(ceil_log2(n));
        match h {
            HStaging::AllResident => 3 * n * FR + tables,
            HStaging::OneAtATime => n * FR + tables,
            HStaging::Host => 0,
        }
    }

    fn max_msm_scratch(&self) -> u64 {
        msms(self)
            .iter()
            .map(|&(m, g2)| msm_scratch(m, g2))
            .max()
            .unwrap_or(0)
    }

    fn max_msm_with_bases(&self) -> u64 {
        msms(self)
            .iter()
            .map(|&(m, g2)| msm_scratch(m, g2) + m as u64 * if g2 { G2_POINT } else { G1_POINT })
            .max()
            .unwrap_or(0)
    }
}

fn ceil_log2(n: u64) -> u32 {
    64 - n.saturating_sub(1).leading_zeros()
}

/// Peak device bytes of one cuzk-cuda MSM of `m` scalars (bases
/// excluded), as cuzk-cuda states them.
pub fn msm_scratch(m: usize, g2: bool) -> u64 {
    cuzk_cuda::host::msm_scratch_bytes(m, g2)
}

/// Peak device bytes of an MSM of `n` scalars by their 0/1 split, at most
/// `rest` of them neither 0 nor 1 (bases and the split excluded): the 0/1
/// sum's scratch, freed before the MSM of the rest starts, or that MSM's
/// (at any count up to `rest`: [`msm_scratch`] does not decrease with the
/// count, across the window widths' changes too).
pub fn split_msm_scratch(n: usize, rest: usize, g2: bool) -> u64 {
    cuzk_cuda::host::zero_one_scratch_bytes(n, g2).max(msm_scratch(rest.min(n), g2))
}

/// Points per chunk of a streamed MSM: the whole MSM when its bases and
/// scratch fit `available` at once (nothing to overlap), otherwise the
/// largest multiple of 32 whose scratch and *two* chunk buffers fit (chunk
/// k+1 is copied while chunk k is summed), or None below
/// [`MIN_CHUNK_POINTS`]. `scalars_on_device`: the scalars are already on
/// the device (H's coefficients), so the scratch holds no copy of them.
fn chunk_points(available: u64, g2: bool, cap: usize, scalars_on_device: bool) -> Option<usize> {
    // What streaming the whole vector (`cap` points) in chunks of `m` holds:
    // one buffer for a single chunk, two below `cap`.
    let need = |m: usize| streamed_bytes(cap, m, g2, scalars_on_device);
    if need(cap) <= available {
        return Some(cap.max(1));
    }
    if cap <= MIN_CHUNK_POINTS || need(MIN_CHUNK_POINTS) > available {
        return None;
    }
    let (mut lo, mut hi) = (MIN_CHUNK_POINTS, cap);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if need(mid) <= available {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Whole words of the 0/1 mask, so a chunk's split is cut out of the
    // MSM's split (`split::split_range`) instead of recomputed.
    Some(lo & !31)
}

/// Device bytes a streamed MSM of `m` points in chunks of `chunk` holds:
/// the scratch of one chunk and one chunk buffer, or two when there is
/// more than one chunk (see [`chunk_points`]).
pub fn streamed_bytes(m: usize, chunk: usize, g2: bool, scalars_on_device: bool) -> u64 {
    let chunk = chunk.clamp(1, m.max(1));
    let point = if g2 { G2_POINT } else { G1_POINT };
    let scratch = msm_scratch(chunk, g2);
    let scratch = if scalars_on_device {
        scratch.saturating_sub(chunk as u64 * FR)
    } else {
        scratch
    };
    let buffers = if chunk < m { 2 } else { 1 };
    scratch + buffers * chunk as u64 * point
}

impl StagingPlan {
    /// The most device bytes a partition under this plan holds at once
    /// beside resident parameters (those are the residency table's): the
    /// largest of its steps, the step of H, each MSM with its bases where
    /// they are not resident, and H's coefficients kept beside the H MSM.
    /// The backend reserves this as the partition's grant before it
    /// starts, so its steps never wait.
    pub fn working_bytes(&self, s: &PartitionSizes) -> u64 {
        let h = s.h_bytes(self.h);
        match self.bases {
            BaseStaging::Resident => h.max(s.max_msm_scratch()),
            BaseStaging::PerMsm => h.max(s.max_msm_with_bases()),
            BaseStaging::Chunked {
                g1_points,
                g2_points,
                h_points,
            } => {
                // Every G1 MSM (the H MSM too when its coefficients go
                // back to the host) streams in chunks of `g1_points`.
                let g1_cap = s.a.max(s.b).max(s.l).max(s.h);
                let g1 = streamed_bytes(g1_cap, g1_points, false, false);
                let g2 = streamed_bytes(s.b, g2_points, true, false);
                let on_device = if h_points > 0 && self.h == HStaging::AllResident {
                    s.domain as u64 * FR + streamed_bytes(s.h, h_points, false, true)
                } else {
                    0
                };
                h.max(g1).max(g2).max(on_device)
            }
        }
    }
}

/// The plan for one partition. `available` is what the budget has free;
/// `resident_bytes` what this partition's parameters already hold on the
/// device (0 when they are not resident), which a plan may keep.
pub fn plan(
    sizes: &PartitionSizes,
    available: u64,
    resident_bytes: u64,
) -> Result<StagingPlan, PlanError> {
    let usable = available + resident_bytes;
    let params = sizes.params_bytes();
    let scratch = sizes.max_msm_scratch();
    for h in [HStaging::AllResident, HStaging::OneAtATime] {
        if params + sizes.h_bytes(h).max(scratch) <= usable {
            return Ok(StagingPlan {
                h,
                bases: BaseStaging::Resident,
            });
        }
    }
    // The bases do not stay; what is not resident must leave first, so the
    // rest of the plan works with `usable` too.
    let h = [HStaging::AllResident, HStaging::OneAtATime]
        .into_iter()
        .find(|&h| sizes.h_bytes(h) <= usable)
        .unwrap_or(HStaging::Host);
    if sizes.max_msm_with_bases() <= usable {
        return Ok(StagingPlan {
            h,
            bases: BaseStaging::PerMsm,
        });
    }
    let g1_cap = sizes.a.max(sizes.b).max(sizes.l).max(sizes.h).max(1);
    let g2_cap = sizes.b.max(1);
    let err = || PlanError {
        available: usable,
        needed: msm_scratch(MIN_CHUNK_POINTS, true) + 2 * MIN_CHUNK_POINTS as u64 * G2_POINT,
    };
    let g1_points = chunk_points(usable, false, g1_cap, false).ok_or_else(err)?;
    let g2_points = chunk_points(usable, true, g2_cap, false).ok_or_else(err)?;
    // H's coefficients stay on the device from the NTTs into the H MSM
    // (n Fr beside its chunks) where that fits; otherwise they go back to
    // the host first and the H MSM streams like the others.
    let h_points = if h == HStaging::AllResident {
        let left = usable.saturating_sub(sizes.domain as u64 * FR);
        chunk_points(left, false, sizes.h.max(1), true).unwrap_or(0)
    } else {
        0
    };
    Ok(StagingPlan {
        h,
        bases: BaseStaging::Chunked {
            g1_points,
            g2_points,
            h_points,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    /// A porep-like partition of 2^log constraints: about one aux variable
    /// per constraint, most of them in A and B.
    fn porep_like(log: u32) -> PartitionSizes {
        let n = 1usize << log;
        PartitionSizes {
            domain: n,
            a: n - n / 8,
            b: n / 2,
            l: n - 64,
            h: n - 1,
        }
    }

    /// A split MSM's scratch is budgeted by a bound on its count: the
    /// scratch must not fall as the count grows, where the window width
    /// changes (the model's below 2^17, 16 bits to 20 at 2^23) included.
    #[test]
    fn scratch_never_falls_as_the_count_grows() {
        let mut sizes: Vec<usize> = (1..1usize << 24).step_by(997).collect();
        for b in [17u32, 23] {
            sizes.extend([(1 << b) - 2, (1 << b) - 1, 1 << b, (1 << b) + 1]);
        }
        sizes.extend(1..4096);
        sizes.sort_unstable();
        sizes.dedup();
        for g2 in [false, true] {
            for w in sizes.windows(2) {
                let (a, b) = (msm_scratch(w[0], g2), msm_scratch(w[1], g2));
                assert!(
                    a <= b,
                    "g2 {g2}: {} scalars {a} bytes, {} scalars {b}",
                    w[0],
                    w[1]
                );
            }
        }
    }

    #[test]
    fn scratch_grows_with_size_and_group() {
        assert_eq!(msm_scratch(0, false), 0);
        let mut last = 0;
        for log in [0u32, 1, 2, 5, 10, 16, 20, 24, 26, 27] {
            let s = msm_scratch(1 << log, false);
            assert!(s > last, "2^{log}: {s} <= {last}");
            assert!(msm_scratch(1 << log, true) > s);
            last = s;
        }
        // 2^26 G1: W·m u32 keys and entries plus one XYZZ item per 64
        // points and per bucket: around 10-20 GB (the kernels' real use).
        let s26 = msm_scratch(1 << 26, false);
        assert!((8 * GIB..24 * GIB).contains(&s26), "{s26}");
    }

    #[test]
    fn roomy_card_keeps_everything_resident() {
        let s = porep_like(20);
        let p = plan(&s, 140 * GIB, 0).unwrap();
        assert_eq!(
            p,
            StagingPlan {
                h: HStaging::AllResident,
                bases: BaseStaging::Resident
            }
        );
    }

    #[test]
    fn resident_parameters_count_as_usable() {
        let s = porep_like(20);
        let need = s.params_bytes() + s.h_bytes(HStaging::AllResident).max(s.max_msm_scratch());
        // Exactly enough with the parameters already on the device.
        let p = plan(&s, need - s.params_bytes(), s.params_bytes()).unwrap();
        assert_eq!(p.bases, BaseStaging::Resident);
        assert_eq!(p.h, HStaging::AllResident);
        // One byte short: the bases cannot stay in the same way.
        let p = plan(&s, need - s.params_bytes() - 1, s.params_bytes()).unwrap();
        assert_ne!(
            p,
            StagingPlan {
                h: HStaging::AllResident,
                bases: BaseStaging::Resident
            }
        );
    }

    #[test]
    fn every_tier_is_reached_as_memory_shrinks() {
        let s = porep_like(26);
        let mut seen = Vec::new();
        let mut avail = 200 * GIB;
        while avail > 64 << 20 {
            match plan(&s, avail, 0) {
                Ok(p) => {
                    // Whatever is chosen fits.
                    if let BaseStaging::Chunked {
                        g1_points,
                        g2_points,
                        h_points,
                    } = p.bases
                    {
                        assert!(g1_points >= MIN_CHUNK_POINTS && g2_points >= MIN_CHUNK_POINTS);
                        assert_eq!(g1_points % 32, 0);
                        if h_points > 0 {
                            assert_eq!(p.h, HStaging::AllResident);
                            assert_eq!(h_points % 32, 0);
                        }
                    }
                    let resident = if p.bases == BaseStaging::Resident {
                        s.params_bytes()
                    } else {
                        0
                    };
                    let peak = resident + p.working_bytes(&s);
                    assert!(peak <= avail, "{p:?} needs {peak} of {avail}");
                    if !seen.contains(&p) {
                        seen.push(p);
                    }
                }
                Err(e) => {
                    assert!(avail < 64 << 20, "{avail}: {e}");
                }
            }
            avail = avail * 7 / 8;
        }
        let has = |f: &dyn Fn(&StagingPlan) -> bool| seen.iter().any(f);
        assert!(has(
            &|p| p.bases == BaseStaging::Resident && p.h == HStaging::AllResident
        ));
        // (Resident bases with H one vector at a time needs H's three
        // vectors to outweigh the largest MSM's scratch, which porep-like
        // shapes never do: see `h_one_at_a_time_keeps_bases_resident`.)
        assert!(has(&|p| p.bases == BaseStaging::PerMsm));
        assert!(has(&|p| matches!(p.bases, BaseStaging::Chunked { .. })));
        assert!(has(
            &|p| p.h == HStaging::OneAtATime && p.bases != BaseStaging::Resident
        ));
        assert!(has(&|p| p.h == HStaging::Host));
    }

    #[test]
    fn capped_h200_budgets_for_2_26_and_2_27() {
        // The caps: a 2^26 and 2^27 porep-like partition must plan
        // (never "does not fit") at 16, 8 and 4 GiB, with the bases staged
        // (they do not fit resident), chunked wherever one MSM's bases and
        // scratch exceed the cap. (At 2^26 and 16 GiB one MSM at a time
        // fits since the windows are at most 20 bits: 2^26 scalars' scratch
        // is ~7.6 GB at c = 20 against ~11 GB at c = 22.)
        for log in [26u32, 27] {
            let s = porep_like(log);
            for cap in [16u64, 8, 4] {
                let p = plan(&s, cap * GIB - (512 << 20), 0).unwrap();
                let chunked = matches!(p.bases, BaseStaging::Chunked { .. });
                let expect_chunked = !(log == 26 && cap == 16);
                assert!(
                    chunked == expect_chunked && p.bases != BaseStaging::Resident,
                    "2^{log} {cap} GiB: {p:?}"
                );
            }
        }
        // Uncapped on an H200 (~139 GiB free) 2^26 stays fully resident.
        let p = plan(&porep_like(26), 139 * GIB, 0).unwrap();
        assert_eq!(p.bases, BaseStaging::Resident);
    }

    #[test]
    fn chunks_cover_tiny_and_odd_sizes() {
        for m in [0usize, 1, 2, 3, 7, 100, 1000, 1023, 1025, 4097] {
            let s = PartitionSizes {
                domain: m.next_power_of_two().max(1),
                a: m,
                b: m,
                l: m,
                h: m,
            };
            // Plenty of room: resident; nothing: an error naming the need.
            assert_eq!(plan(&s, 64 * GIB, 0).unwrap().bases, BaseStaging::Resident);
            // 1 MiB is below even one MSM's fixed slack.
            if m > 0 {
                assert!(plan(&s, 1 << 20, 0).is_err());
            }
        }
        assert!(chunk_points(0, false, 1 << 20, false).is_none());
        // Two chunk buffers beside one chunk's scratch, the largest
        // multiple of 32 that fits.
        let c = chunk_points(4 * GIB, true, 1 << 26, false).unwrap();
        assert_eq!(c % 32, 0);
        assert!(streamed_bytes(1 << 26, c, true, false) <= 4 * GIB);
        assert!(streamed_bytes(1 << 26, c + 32, true, false) > 4 * GIB);
        // Scalars already on the device leave room for at least as large a
        // chunk (the window width steps the scratch, so often no larger).
        let h = chunk_points(4 * GIB, false, 1 << 26, true).unwrap();
        let g = chunk_points(4 * GIB, false, 1 << 26, false).unwrap();
        assert!(h >= g, "{h} {g}");
        assert!(streamed_bytes(1 << 26, h, false, true) <= 4 * GIB);
        // One chunk (the whole MSM) holds one buffer only.
        let whole = streamed_bytes(1000, 1000, false, false);
        assert_eq!(chunk_points(whole, false, 1000, false), Some(1000));
        assert_eq!(whole, msm_scratch(1000, false) + 1000 * G1_POINT);
    }

    #[test]
    fn capped_2_27_keeps_h_on_the_device() {
        // At 16 GiB H's 4 GiB of coefficients fit beside its chunks.
        let s = porep_like(27);
        let avail = 16 * GIB - (512 << 20);
        match plan(&s, avail, 0).unwrap().bases {
            BaseStaging::Chunked { h_points, .. } => {
                assert!(h_points >= MIN_CHUNK_POINTS, "{h_points}");
                let held = s.domain as u64 * FR + streamed_bytes(s.h, h_points, false, true);
                assert!(held <= avail);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn h_one_at_a_time_keeps_bases_resident() {
        // A wide domain with few variables: H dominates the MSM scratch.
        let s_small_h = PartitionSizes {
            domain: 1 << 24,
            a: 1 << 10,
            b: 1 << 10,
            l: 1 << 10,
            h: 1 << 10,
        };
        let need = s_small_h.params_bytes()
            + s_small_h
                .h_bytes(HStaging::OneAtATime)
                .max(s_small_h.max_msm_scratch());
        assert!(s_small_h.h_bytes(HStaging::AllResident) > s_small_h.max_msm_scratch());
        let p = plan(&s_small_h, need, 0).unwrap();
        assert_eq!(
            p,
            StagingPlan {
                h: HStaging::OneAtATime,
                bases: BaseStaging::Resident
            }
        );
    }

    #[test]
    fn nothing_fits_is_an_error() {
        let e = plan(&porep_like(20), 1 << 20, 0).unwrap_err();
        assert_eq!(e.available, 1 << 20);
        assert!(e.needed > 1 << 20);
    }
}
