//! NTT over Fr (kernels/ntt.cuh): twiddle and power tables, the pass
//! kernels, the bit reversal, the coset transforms and H's pointwise step.

use blstrs::Scalar;
use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{CudaSlice, DriverError, LaunchConfig};
use ff::{Field, PrimeField};
use std::sync::Mutex;

use super::launch::{cfg1d, typed_kernels, DevPtr};
use super::CudaDevice;
use crate::error::{CudaError, Result};
use crate::host::{self, ntt_pass_smem, NttKind, FR_BYTES};

/// Largest NTT: 2^28 elements (8 GiB of Fr).
pub const MAX_NTT_LOG: u32 = 28;

typed_kernels! {
    /// `ntt_powers`: out[i] = lo[i mod 2^lo_bits] * hi[i >> lo_bits].
    NttPowers["ntt_powers"](out: DevPtr, count: u32, lo: DevPtr, hi: DevPtr, lo_bits: u32);
    /// `ntt_bitrev`: the in-place bit reversal, with the optional scaling
    /// by the power tables (`scale` 0: none, 1: before, 2: after).
    NttBitrev["ntt_bitrev"](d: DevPtr, lg: u32, lo: DevPtr, hi: DevPtr, lo_bits: u32, scale: u32);
    /// `ntt_bitrev_tiled`: the same permutation and scaling in tiles of
    /// 2^(2 H_TILE_LOG) elements, a tile swapped with its partner through
    /// shared memory (lg >= 2 H_TILE_LOG).
    NttBitrevTiled["ntt_bitrev_tiled"](d: DevPtr, lg: u32, lo: DevPtr, hi: DevPtr, lo_bits: u32, scale: u32);
    /// `ntt_pass_r1`, `_r2`, `_r3`, `_r3x2`, `_r2x3`: `k` stages from stage
    /// `s0` in shared memory ([`NttPass`] picks the build); `scale`: what
    /// the pass does to each element it loads ([`OnLoad`]).
    NttPassKernel[
        "ntt_pass_r1",
        "ntt_pass_r2",
        "ntt_pass_r3",
        "ntt_pass_r3x2",
        "ntt_pass_r2x3",
    ](
        d: DevPtr,
        tw: DevPtr,
        lg: u32,
        s0: u32,
        k: u32,
        lgl: u32,
        dif: u32,
        plo: DevPtr,
        phi: DevPtr,
        plo_bits: u32,
        scale: u32,
    );
    /// `ntt_perm_pass_r1` ... `_r2x3`: the first pass of an out-of-place
    /// DIT (reads src[rev i], writes d[i]) or the last of an out-of-place
    /// DIF (reads src[i], writes d[rev i]), stages [0, k), the block's
    /// 2^lgl groups in the top index bits; `scale` 1: times c*base^(rev i)
    /// from the power tables as it loads (DIT) or stores (DIF).
    NttPermPassKernel[
        "ntt_perm_pass_r1",
        "ntt_perm_pass_r2",
        "ntt_perm_pass_r3",
        "ntt_perm_pass_r3x2",
        "ntt_perm_pass_r2x3",
    ](
        d: DevPtr,
        src: DevPtr,
        tw: DevPtr,
        lg: u32,
        k: u32,
        lgl: u32,
        dif: u32,
        plo: DevPtr,
        phi: DevPtr,
        plo_bits: u32,
        scale: u32,
    );
    /// `h_finish_bitrev`: a[j] = p(j) a[rev j] - p(0) c[rev j], p(j) the
    /// power tables' c*base^j (H's last step, [`CudaDevice::h_finish_device`]).
    HFinishBitrev["h_finish_bitrev"](a: DevPtr, c: DevPtr, lg: u32, lo: DevPtr, hi: DevPtr, lo_bits: u32);
    /// `h_finish_tiled`: out[j] = p(j) a[rev j] - p(0) c[rev j], out of
    /// place, in tiles of 2^(2 H_TILE_LOG) elements (lg >= 2 H_TILE_LOG).
    HFinishTiled["h_finish_tiled"](out: DevPtr, a: DevPtr, c: DevPtr, lg: u32, lo: DevPtr, hi: DevPtr, lo_bits: u32);
}

/// Threads per block of ntt_powers.
const NTT_POWERS_BLOCK: u32 = 256;
/// Threads per block of ntt_bitrev.
const NTT_BITREV_BLOCK: u32 = 256;
/// The tile of h_finish_tiled and ntt_bitrev_tiled: 2^H_TILE_LOG x
/// 2^H_TILE_LOG elements (ntt.cuh's `H_TILE_LOG`), one block of
/// H_TILE_THREADS threads each.
const H_TILE_LOG: u32 = 5;
const H_TILE_THREADS: u32 = 256;
/// Its dynamic shared memory: a tile's low and high 16-byte halves.
const H_TILE_SMEM: u32 = 2 << (2 * H_TILE_LOG) << 4;

/// The launch of a tile kernel over 2^lg elements (lg >= 2 H_TILE_LOG): a
/// block of H_TILE_THREADS per tile.
fn tile_config(lg: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1u32 << (lg - 2 * H_TILE_LOG), 1, 1),
        block_dim: (H_TILE_THREADS, 1, 1),
        shared_mem_bytes: H_TILE_SMEM,
    }
}

// The pass kernels' blocks are sized per pass (`host::ntt_pass_threads`,
// at most their `__launch_bounds__(256)`).

/// Lets a pass kernel use the dynamic shared memory of the largest pass
/// the device plans (`host::ntt_pass_smem(smem_log)`, above the driver's
/// default on sm_90).
fn raise_pass_smem_limit(
    f: &cudarc::driver::CudaFunction,
    smem_log: u32,
) -> std::result::Result<(), DriverError> {
    f.set_attribute(
        CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        ntt_pass_smem(smem_log) as i32,
    )
}

impl NttPassKernel {
    pub(super) fn raise_smem_limit(&self, smem_log: u32) -> std::result::Result<(), DriverError> {
        raise_pass_smem_limit(&self.0, smem_log)
    }
}

impl NttPermPassKernel {
    pub(super) fn raise_smem_limit(&self, smem_log: u32) -> std::result::Result<(), DriverError> {
        raise_pass_smem_limit(&self.0, smem_log)
    }
}

/// The NTT pass kernel: stages per register round (R) and, for the `x2` /
/// `x3` builds, the blocks of 256 threads per SM its register cap keeps
/// resident (R = 3 at most 128 registers, R = 2 at most 80).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NttPass {
    R1,
    R2,
    R3,
    R3TwoBlocks,
    R2ThreeBlocks,
}

impl NttPass {
    /// In the order of the kernel list (`NttPassKernel`).
    pub const ALL: [NttPass; 5] = [
        NttPass::R1,
        NttPass::R2,
        NttPass::R3,
        NttPass::R3TwoBlocks,
        NttPass::R2ThreeBlocks,
    ];
    /// Stages per register round.
    pub fn radix_log(self) -> u32 {
        match self {
            NttPass::R1 => 1,
            NttPass::R2 | NttPass::R2ThreeBlocks => 2,
            NttPass::R3 | NttPass::R3TwoBlocks => 3,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            NttPass::R1 => "r1",
            NttPass::R2 => "r2",
            NttPass::R3 => "r3",
            NttPass::R3TwoBlocks => "r3x2",
            NttPass::R2ThreeBlocks => "r2x3",
        }
    }
    /// The pass named `name` (as [`NttPass::name`] spells it).
    pub fn from_name(name: &str) -> Option<NttPass> {
        NttPass::ALL.into_iter().find(|p| p.name() == name)
    }
    pub(super) fn index(self) -> usize {
        self as usize
    }
}

/// The pass used unless a benchmark picks another: R2 in three blocks per SM
/// (80 registers), the fastest at every size measured on the H200
/// (bench/gpu-kernels.md, runs 15/16, 2026-12-03 call 16, measured as
/// `f2x3`, the same code since run 16 made field.cuh's product the fast one;
/// against r3x2, the default since run 9): forward 2^27 44.68 against 46.81 ms,
/// evaluations to coset 2^27 83.86 against 90.52 ms, forward 2^26 21.76
/// against 22.24 ms, 2^24 5.09 against 5.21 ms, 2^20 0.28 against 0.39 ms.
/// `CUZK_NTT_PASS=<name>` overrides this at device open
/// ([`NttPass::from_env`]).
pub(super) const DEFAULT_NTT_PASS: NttPass = NttPass::R2ThreeBlocks;

impl NttPass {
    /// The pass a device opens with: `CUZK_NTT_PASS` (a name such as `r3x2`)
    /// when set to a known one, else [`DEFAULT_NTT_PASS`].
    pub(super) fn from_env() -> NttPass {
        std::env::var("CUZK_NTT_PASS")
            .ok()
            .and_then(|v| NttPass::from_name(v.trim()))
            .unwrap_or(DEFAULT_NTT_PASS)
    }
}

/// Grid, block and shared memory of a pass over stages of `k` bits with
/// 2^lgl groups a block, for the pass kernel `pass`.
fn pass_config(lg: u32, k: u32, lgl: u32, pass: NttPass) -> LaunchConfig {
    let log_e = k + lgl;
    LaunchConfig {
        grid_dim: (1u32 << (lg - log_e), 1, 1),
        block_dim: (host::ntt_pass_threads(log_e, k, pass.radix_log()), 1, 1),
        shared_mem_bytes: ntt_pass_smem(log_e),
    }
}

/// What a transform's first pass does to each element as it loads it
/// (the pass kernels' `scale` argument).
#[derive(Clone, Copy)]
enum OnLoad<'a> {
    Nothing,
    /// x_p *= c base^bitrev(p), from the power tables (lo, hi, lo_bits):
    /// the coset scaling of bit-reversed coefficients (DIT only).
    Scale(&'a CudaSlice<u8>, &'a CudaSlice<u8>, u32),
    /// x_p *= other[p]: a pointwise product fused into the pass.
    Times(&'a CudaSlice<u8>),
}

/// One NTT twiddle table kept between calls: tw[i] = w^i, i < n/2, for the
/// forward root w (the inverse transforms read it too: w^-e = -w^(n/2-e)).
pub(super) struct Twiddles {
    lg: u32,
    buf: CudaSlice<u8>,
}

impl CudaDevice {
    /// Tables lo[j] = c*base^j (j < 2^lo_bits), hi[j] = base^(j*2^lo_bits),
    /// covering exponents below 2^lg.
    fn power_tables(
        &self,
        base: Scalar,
        c: Scalar,
        lg: u32,
    ) -> Result<(CudaSlice<u8>, CudaSlice<u8>, u32)> {
        let lo_bits = lg.div_ceil(2);
        let hi_bits = lg - lo_bits;
        let mut lo = Vec::with_capacity(1 << lo_bits);
        let mut p = c;
        for _ in 0..(1u32 << lo_bits) {
            lo.push(p);
            p *= base;
        }
        let step = base.pow_vartime([1u64 << lo_bits]);
        let mut hi = Vec::with_capacity(1 << hi_bits);
        let mut p = Scalar::ONE;
        for _ in 0..(1u32 << hi_bits) {
            hi.push(p);
            p *= step;
        }
        Ok((
            self.upload("ntt tables", host::scalars_as_bytes(&lo))?,
            self.upload("ntt tables", host::scalars_as_bytes(&hi))?,
            lo_bits,
        ))
    }

    // The twiddle table and the power tables are what
    // [`host::ntt_scratch_bytes`] states: keep the two in step.
    fn with_twiddles<R>(&self, lg: u32, f: impl FnOnce(u64) -> Result<R>) -> Result<R> {
        let mut cache = self.twiddles.lock().unwrap_or_else(|p| p.into_inner());
        let hit = matches!(&*cache, Some(t) if t.lg == lg);
        if !hit {
            *cache = None; // free the old table first: at 2^28 it is 4 GiB
            let w = host::root_of_unity(lg);
            let count = (1usize << lg) / 2;
            let (lo, hi, lo_bits) = self.power_tables(w, Scalar::ONE, lg)?;
            let buf: CudaSlice<u8> = self.alloc("ntt twiddles", count.max(1) * FR_BYTES)?;
            self.k.ntt_powers.launch(
                self,
                "ntt_powers",
                count,
                cfg1d(count, NTT_POWERS_BLOCK),
                self.p(&buf),
                count as u32,
                self.p(&lo),
                self.p(&hi),
                lo_bits,
            )?;
            *cache = Some(Twiddles { lg, buf });
        }
        let t = cache.as_ref().expect("filled above");
        f(self.p(&t.buf))
    }

    /// Drops the cached twiddle table (up to 4 GiB at 2^28).
    pub fn release_ntt_tables(&self) {
        *self.twiddles.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Picks the NTT pass kernel (benchmarks compare them; the default is
    /// [`DEFAULT_NTT_PASS`]).
    pub fn set_ntt_pass(&self, pass: NttPass) {
        self.ntt_pass
            .store(pass as u8, std::sync::atomic::Ordering::Relaxed);
    }

    /// The NTT pass block this device plans with, log2 of its elements
    /// (`host::ntt_smem_log_for` its shared memory an SM).
    pub fn ntt_block_log(&self) -> u32 {
        self.ntt_smem_log
    }

    pub fn ntt_pass(&self) -> NttPass {
        NttPass::ALL[self.ntt_pass.load(std::sync::atomic::Ordering::Relaxed) as usize]
    }

    fn check_ntt_buffer(&self, data: &CudaSlice<u8>, lg: u32) -> Result<()> {
        if lg > MAX_NTT_LOG {
            return Err(CudaError::Unsupported {
                kernel: "ntt",
                size: 1 << lg,
                limit: 1 << MAX_NTT_LOG,
                device: self.label.clone(),
            });
        }
        let n = 1usize << lg;
        if data.len() < n * FR_BYTES {
            return Err(self.bad(
                "ntt",
                n,
                format!(
                    "buffer of {} bytes holds fewer than 2^{lg} elements",
                    data.len()
                ),
            ));
        }
        Ok(())
    }

    /// Runs the passes: DIT (bit-reversed in, natural out) bottom up, or DIF
    /// (natural in, bit-reversed out, inverse root) top down, the first of
    /// them doing `on_load` to each element it loads.
    fn ntt_run_passes(&self, d: u64, lg: u32, dif: bool, on_load: OnLoad) -> Result<()> {
        let n = 1usize << lg;
        let pass = self.ntt_pass();
        let kernel = &self.k.ntt_pass[pass.index()];
        let mut passes = host::ntt_pass_plan_in(lg, self.ntt_smem_log);
        if dif {
            passes.reverse();
        }
        let (plo, phi, plo_bits, mode) = match on_load {
            OnLoad::Nothing => (0, 0, 0, 0u32),
            OnLoad::Scale(lo, hi, bits) => {
                debug_assert!(!dif, "the coset scaling is a DIT's");
                (self.p(lo), self.p(hi), bits, 1)
            }
            OnLoad::Times(other) => (self.p(other), 0, 0, 2),
        };
        if passes.is_empty() && mode == 2 {
            // 2^0 elements: no stages, the product on load alone.
            passes.push((0, 0));
        }
        self.with_twiddles(lg, |tw| {
            for (i, &(s0, k)) in passes.iter().enumerate() {
                let lgl = host::ntt_pass_lgl(s0);
                kernel.launch(
                    self,
                    "ntt_pass",
                    n,
                    pass_config(lg, k, lgl, pass),
                    d,
                    tw,
                    lg,
                    s0,
                    k,
                    lgl,
                    u32::from(dif),
                    plo,
                    phi,
                    plo_bits,
                    if i == 0 { mode } else { 0 },
                )?;
            }
            Ok(())
        })
    }

    /// Runs the passes out of place, from `src` into `dst` (1 <= lg): a DIT
    /// (forward root) whose first pass reads src in natural order as the
    /// bit-reversed input it needs and writes dst, the rest in place on
    /// dst; or a DIF (inverse root) in place on src whose last pass writes
    /// dst in natural order. `tables` (lo, hi, lo_bits) scale each element
    /// by c*base^j of its natural place j, as the DIT loads it or the DIF
    /// stores it.
    fn ntt_run_passes_into(
        &self,
        src: u64,
        dst: u64,
        lg: u32,
        dif: bool,
        tables: Option<(&CudaSlice<u8>, &CudaSlice<u8>, u32)>,
    ) -> Result<()> {
        debug_assert!(lg >= 1);
        let n = 1usize << lg;
        let pass = self.ntt_pass();
        let kernel = &self.k.ntt_pass[pass.index()];
        let perm = &self.k.ntt_perm_pass[pass.index()];
        let mut passes = host::ntt_pass_plan_in(lg, self.ntt_smem_log);
        if dif {
            passes.reverse();
        }
        let (plo, phi, plo_bits, mode) = match tables {
            Some((lo, hi, bits)) => (self.p(lo), self.p(hi), bits, 1u32),
            None => (0, 0, 0, 0),
        };
        self.with_twiddles(lg, |tw| {
            for &(s0, k) in &passes {
                if s0 == 0 {
                    let lgl = host::ntt_perm_lgl_in(lg, k, self.ntt_smem_log);
                    perm.launch(
                        self,
                        "ntt_perm_pass",
                        n,
                        pass_config(lg, k, lgl, pass),
                        dst,
                        src,
                        tw,
                        lg,
                        k,
                        lgl,
                        u32::from(dif),
                        plo,
                        phi,
                        plo_bits,
                        mode,
                    )?;
                } else {
                    let lgl = host::ntt_pass_lgl(s0);
                    kernel.launch(
                        self,
                        "ntt_pass",
                        n,
                        pass_config(lg, k, lgl, pass),
                        if dif { src } else { dst },
                        tw,
                        lg,
                        s0,
                        k,
                        lgl,
                        u32::from(dif),
                        0,
                        0,
                        0,
                        0,
                    )?;
                }
            }
            Ok(())
        })
    }

    /// NTT of the `n = 2^lg` Fr elements at `src` into `dst`, natural order
    /// in and out, the bit reversal fused into a pass: no permutation
    /// kernel, at the price of a second buffer. Forward kinds leave `src`
    /// as it was; inverse kinds use it as scratch (its contents afterwards
    /// are unspecified).
    pub fn ntt_device_into(
        &self,
        src: &mut CudaSlice<u8>,
        dst: &mut CudaSlice<u8>,
        lg: u32,
        kind: NttKind,
    ) -> Result<()> {
        self.check_ntt_buffer(src, lg)?;
        self.check_ntt_buffer(dst, lg)?;
        let (s, d) = (self.p(src), self.p(dst));
        if lg == 0 {
            // One element: its own transform of every kind (g^0 = n^-1 = 1).
            return self
                .stream
                .memcpy_dtod(&src.slice(0..FR_BYTES), &mut dst.slice_mut(0..FR_BYTES))
                .map_err(|e| self.err("copy on the device", "ntt", 1, e));
        }
        match kind {
            NttKind::Forward => self.ntt_run_passes_into(s, d, lg, false, None),
            NttKind::CosetForward => {
                let g = Scalar::MULTIPLICATIVE_GENERATOR;
                let (lo, hi, lo_bits) = self.power_tables(g, Scalar::ONE, lg)?;
                self.ntt_run_passes_into(s, d, lg, false, Some((&lo, &hi, lo_bits)))
            }
            NttKind::Inverse | NttKind::CosetInverse => {
                let (lo, hi, lo_bits) =
                    self.inverse_tables(lg, kind == NttKind::CosetInverse, Scalar::ONE)?;
                self.ntt_run_passes_into(s, d, lg, true, Some((&lo, &hi, lo_bits)))
            }
        }
    }

    /// NTT of `n = 2^lg` Fr elements already on the device at `data`,
    /// natural order in and out.
    pub fn ntt_device(&self, data: &mut CudaSlice<u8>, lg: u32, kind: NttKind) -> Result<()> {
        self.check_ntt_buffer(data, lg)?;
        let d = self.p(data);
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        match kind {
            NttKind::Forward | NttKind::CosetForward => {
                // Bit reversal (with the coset scaling x_i *= g^i fused in),
                // then DIT.
                if kind == NttKind::CosetForward {
                    let (lo, hi, lo_bits) = self.power_tables(g, Scalar::ONE, lg)?;
                    self.bitrev(d, lg, Some((&lo, &hi, lo_bits)), false)?;
                } else {
                    self.bitrev(d, lg, None, false)?;
                }
                if lg > 0 {
                    self.ntt_run_passes(d, lg, false, OnLoad::Nothing)?;
                }
            }
            NttKind::Inverse | NttKind::CosetInverse => {
                self.ntt_inverse_scaled(d, lg, kind == NttKind::CosetInverse, Scalar::ONE)?;
            }
        }
        Ok(())
    }

    /// The inverse transform (over the coset g<w> if `coset`) of the 2^lg
    /// elements at `d`, every result also multiplied by `extra`: DIF, then
    /// the bit reversal with x_j *= extra n^-1 (g^-j) fused in (j the
    /// element's place after the permutation).
    fn ntt_inverse_scaled(&self, d: u64, lg: u32, coset: bool, extra: Scalar) -> Result<()> {
        if lg > 0 {
            self.ntt_run_passes(d, lg, true, OnLoad::Nothing)?;
        }
        let (lo, hi, lo_bits) = self.inverse_tables(lg, coset, extra)?;
        self.bitrev(d, lg, Some((&lo, &hi, lo_bits)), true)
    }

    /// The power tables of an inverse transform's scaling, x_j *= extra
    /// n^-1 (g^-j when `coset`), j the element's natural place.
    fn inverse_tables(
        &self,
        lg: u32,
        coset: bool,
        extra: Scalar,
    ) -> Result<(CudaSlice<u8>, CudaSlice<u8>, u32)> {
        let n_inv = Scalar::from(1u64 << lg)
            .invert()
            .expect("n is nonzero in Fr");
        let base = if coset {
            Scalar::MULTIPLICATIVE_GENERATOR
                .invert()
                .expect("g is nonzero")
        } else {
            Scalar::ONE
        };
        self.power_tables(base, extra * n_inv, lg)
    }

    /// Evaluations on the domain to evaluations on the coset g<w>, natural
    /// order in and out: the same result as [`NttKind::Inverse`] followed by
    /// [`NttKind::CosetForward`], with no permutation (DIF leaves the
    /// coefficients bit-reversed, the DIT reads them so) and the scaling by
    /// n^-1 g^i fused into the DIT's first pass.
    pub fn evals_to_coset_device(&self, data: &mut CudaSlice<u8>, lg: u32) -> Result<()> {
        self.check_ntt_buffer(data, lg)?;
        if lg == 0 {
            // One element: its own coefficient and coset value.
            return Ok(());
        }
        let (lo, hi, lo_bits) = self.coset_tables(lg)?;
        let d = self.p(data);
        self.ntt_run_passes(d, lg, true, OnLoad::Nothing)?;
        self.ntt_run_passes(d, lg, false, OnLoad::Scale(&lo, &hi, lo_bits))
    }

    /// The power tables of [`Self::evals_to_coset_device`]'s scaling:
    /// n^-1 g^i.
    fn coset_tables(&self, lg: u32) -> Result<(CudaSlice<u8>, CudaSlice<u8>, u32)> {
        let n_inv = Scalar::from(1u64 << lg)
            .invert()
            .expect("n is nonzero in Fr");
        self.power_tables(Scalar::MULTIPLICATIVE_GENERATOR, n_inv, lg)
    }

    /// In-place bit reversal; with tables, the scaling by c*base^i of each
    /// element's place before (`after` false) or after the permutation.
    fn bitrev(
        &self,
        d: u64,
        lg: u32,
        scale: Option<(&CudaSlice<u8>, &CudaSlice<u8>, u32)>,
        after: bool,
    ) -> Result<()> {
        let n = 1usize << lg;
        let (lo, hi, lo_bits, mode) = match scale {
            Some((lo, hi, bits)) => (self.p(lo), self.p(hi), bits, if after { 2u32 } else { 1 }),
            None => (0, 0, 0, 0),
        };
        if lg >= 2 * H_TILE_LOG {
            return self.k.ntt_bitrev_tiled.launch(
                self,
                "ntt_bitrev_tiled",
                n,
                tile_config(lg),
                d,
                lg,
                lo,
                hi,
                lo_bits,
                mode,
            );
        }
        self.k.ntt_bitrev.launch(
            self,
            "ntt_bitrev",
            n,
            cfg1d(n, NTT_BITREV_BLOCK),
            d,
            lg,
            lo,
            hi,
            lo_bits,
            mode,
        )
    }

    /// NTT of host data in place (length a power of two, at most 2^28).
    pub fn ntt(&self, values: &mut [Scalar], kind: NttKind) -> Result<()> {
        let n = values.len();
        if !n.is_power_of_two() {
            return Err(self.bad("ntt", n, "length is not a power of two".into()));
        }
        let lg = n.trailing_zeros();
        let mut buf = self.upload("ntt", host::scalars_as_bytes(values))?;
        self.ntt_device(&mut buf, lg, kind)?;
        self.stream
            .memcpy_dtoh(&buf, host::scalars_as_bytes_mut(values))
            .map_err(|e| self.err("copy to host", "ntt", n, e))?;
        Ok(())
    }

    /// [`CudaDevice::evals_to_coset_device`] of host data in place (length a
    /// power of two, at most 2^28).
    pub fn evals_to_coset(&self, values: &mut [Scalar]) -> Result<()> {
        let n = values.len();
        if !n.is_power_of_two() {
            return Err(self.bad("ntt", n, "length is not a power of two".into()));
        }
        let lg = n.trailing_zeros();
        let mut buf = self.upload("ntt", host::scalars_as_bytes(values))?;
        self.evals_to_coset_device(&mut buf, lg)?;
        self.stream
            .memcpy_dtoh(&buf, host::scalars_as_bytes_mut(values))
            .map_err(|e| self.err("copy to host", "ntt", n, e))?;
        Ok(())
    }

    // H = (A B - C) / Z in six transforms. bellperson takes a, b and c
    // (evaluations on the domain) to the coset g<w> (an inverse and a coset
    // transform each), forms (a b - c) / Z there and returns by a coset
    // inverse: seven transforms. The coset inverse is linear and Z is one
    // constant on the coset (g^n - 1), so the result equals
    // coset_inverse(a b) / Z - coset_inverse(c_coset) / Z, and the
    // coset inverse of C's coset values is C's coefficients, inverse(c):
    // c needs one transform instead of two. Both inverses are DIF passes
    // (bit-reversed out, unscaled) and one permutation back that scales
    // (n^-1 g^-j / Z and n^-1 / Z) and subtracts (`h_finish_tiled`, or
    // `h_finish_bitrev` below 2^10).

    /// H's step for c: the DIF passes of its inverse transform, in place
    /// (c holds its evaluations on the domain of 2^lg, zero-padded; it is
    /// left bit-reversed and unscaled, for [`Self::h_finish_device`]).
    pub fn h_c_coeffs_device(&self, c: &mut CudaSlice<u8>, lg: u32) -> Result<()> {
        self.check_ntt_buffer(c, lg)?;
        if lg > 0 {
            self.ntt_run_passes(self.p(c), lg, true, OnLoad::Nothing)?;
        }
        Ok(())
    }

    /// H's last steps: with `a` and `b` taken to the coset
    /// ([`Self::evals_to_coset_device`]) and `c` by
    /// [`Self::h_c_coeffs_device`], leaves H's 2^lg coefficients in `a`,
    /// natural order: coset_inverse(a b) / Z - inverse(c) / Z. `b` and `c`
    /// are left as scratch (from 2^10 elements on, the permutation back
    /// writes into b's memory and the two handles are exchanged).
    pub fn h_finish_device(
        &self,
        a: &mut CudaSlice<u8>,
        b: &mut CudaSlice<u8>,
        c: &CudaSlice<u8>,
        lg: u32,
    ) -> Result<()> {
        self.h_product_passes(a, b, lg)?;
        self.h_permute_back(a, b, c, lg)
    }

    /// The DIF passes of a b's inverse, the product taken as the first
    /// pass loads a (a left bit-reversed, unscaled).
    fn h_product_passes(&self, a: &mut CudaSlice<u8>, b: &CudaSlice<u8>, lg: u32) -> Result<()> {
        self.check_ntt_buffer(a, lg)?;
        let n = 1usize << lg;
        if b.len() < n * FR_BYTES {
            return Err(self.bad("ntt_pass", n, "b holds fewer than n elements".into()));
        }
        self.ntt_run_passes(self.p(a), lg, true, OnLoad::Times(b))
    }

    /// The permutation back that scales both inverses over Z and subtracts:
    /// a[j] = p(j) U[rev j] - p(0) V[rev j]. From 2^(2 H_TILE_LOG) elements
    /// on out of place in tiles (`h_finish_tiled`, into `b`, whose handle
    /// then changes places with `a`'s), below that in place
    /// (`h_finish_bitrev`).
    fn h_permute_back(
        &self,
        a: &mut CudaSlice<u8>,
        b: &mut CudaSlice<u8>,
        c: &CudaSlice<u8>,
        lg: u32,
    ) -> Result<()> {
        let n = 1usize << lg;
        for (v, what) in [(&*b, "b"), (c, "c")] {
            if v.len() < n * FR_BYTES {
                return Err(self.bad("h_finish", n, format!("{what} holds fewer than n elements")));
            }
        }
        // p(j) = n^-1 g^-j / Z: the coset inverse's scaling over Z; p(0)
        // the plain inverse's.
        let n_inv = Scalar::from(n as u64).invert().expect("n is nonzero in Fr");
        let g_inv = Scalar::MULTIPLICATIVE_GENERATOR
            .invert()
            .expect("g is nonzero");
        let (lo, hi, lo_bits) = self.power_tables(g_inv, h_z_inv(lg) * n_inv, lg)?;
        if lg >= 2 * H_TILE_LOG {
            self.k.h_finish_tiled.launch(
                self,
                "h_finish_tiled",
                n,
                tile_config(lg),
                self.p(b),
                self.p(a),
                self.p(c),
                lg,
                self.p(&lo),
                self.p(&hi),
                lo_bits,
            )?;
            std::mem::swap(a, b);
            return Ok(());
        }
        self.k.h_finish_bitrev.launch(
            self,
            "h_finish_bitrev",
            n,
            cfg1d(n, NTT_BITREV_BLOCK),
            self.p(a),
            self.p(c),
            lg,
            self.p(&lo),
            self.p(&hi),
            lo_bits,
        )
    }

    /// H's coefficients from a, b and c (evaluations on the domain of 2^lg,
    /// zero-padded, on the device), left in `a`: a and b to the coset, c
    /// to its coefficients over Z, then [`Self::h_finish_device`]. With
    /// [`Self::set_h_profile`] on, each step is timed (the stream
    /// synchronized after it) for [`Self::take_h_profile`].
    pub fn h_device(
        &self,
        a: &mut CudaSlice<u8>,
        b: &mut CudaSlice<u8>,
        c: &mut CudaSlice<u8>,
        lg: u32,
    ) -> Result<()> {
        for v in [&*a, &*b, &*c] {
            self.check_ntt_buffer(v, lg)?;
        }
        // At 2^0 the passes are none and the coset scaling is by one; the
        // product is a pass of no stages (`ntt_run_passes`).
        let mut prof = StepClock::new(self, self.h_profile_on());
        self.with_twiddles(lg, |_| Ok(()))?;
        let (lo, hi, lo_bits) = self.coset_tables(lg)?;
        prof.step("twiddles and tables")?;
        for (v, [inverse, coset]) in [
            (&*a, ["a inverse (DIF)", "a to the coset (DIT)"]),
            (&*b, ["b inverse (DIF)", "b to the coset (DIT)"]),
        ] {
            let d = self.p(v);
            self.ntt_run_passes(d, lg, true, OnLoad::Nothing)?;
            prof.step(inverse)?;
            self.ntt_run_passes(d, lg, false, OnLoad::Scale(&lo, &hi, lo_bits))?;
            prof.step(coset)?;
        }
        self.h_c_coeffs_device(c, lg)?;
        prof.step("c inverse (DIF)")?;
        self.h_product_passes(a, b, lg)?;
        prof.step("a b, coset inverse (DIF)")?;
        self.h_permute_back(a, b, c, lg)?;
        prof.step("permutation back, scaled, minus c")?;
        prof.finish(&self.h_profile);
        Ok(())
    }

    /// Times each step of [`Self::h_device`] from now on (or stops).
    pub fn set_h_profile(&self, on: bool) {
        *self.h_profile.lock().unwrap_or_else(|p| p.into_inner()) = on.then(Vec::new);
    }

    fn h_profile_on(&self) -> bool {
        self.h_profile
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// The steps of each [`Self::h_device`] profiled since the last take
    /// (name, ms), and clears them; empty when profiling is off.
    pub fn take_h_profile(&self) -> Vec<HSteps> {
        self.h_profile
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The whole H computation of Groth16 on the GPU: a, b, c are the
    /// evaluations (zero-padded to n = 2^lg); returns the n coefficients of
    /// (a*b - c)/Z computed through the coset (the same values as
    /// bellperson's, in six transforms instead of seven: [`Self::h_device`]).
    pub fn compute_h(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Vec<Scalar>> {
        let m = a.len().max(b.len()).max(c.len());
        let n = m.next_power_of_two().max(1);
        let lg = n.trailing_zeros();
        let pad = |v: &[Scalar]| -> Result<CudaSlice<u8>> {
            let mut buf: CudaSlice<u8> = self.zeros("compute_h", n * FR_BYTES)?;
            if !v.is_empty() {
                self.stream
                    .memcpy_htod(
                        host::scalars_as_bytes(v),
                        &mut buf.slice_mut(0..v.len() * FR_BYTES),
                    )
                    .map_err(|e| self.err("copy to device", "compute_h", n, e))?;
            }
            Ok(buf)
        };
        let [mut ha, mut hb, mut hc] = [pad(a)?, pad(b)?, pad(c)?];
        self.h_device(&mut ha, &mut hb, &mut hc, lg)?;
        let mut out = vec![Scalar::ZERO; n];
        self.stream
            .memcpy_dtoh(&ha, host::scalars_as_bytes_mut(&mut out))
            .map_err(|e| self.err("copy to host", "compute_h", n, e))?;
        Ok(out)
    }
}

/// 1/Z, Z = g^n - 1 the vanishing polynomial x^n - 1 on the coset g<w> of
/// the domain of n = 2^lg.
fn h_z_inv(lg: u32) -> Scalar {
    let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([1u64 << lg]) - Scalar::ONE;
    z.invert()
        .expect("g^n != 1: g is not a root of unity of this order")
}

/// One profiled H step's parts: (name, ms) in order.
pub type HSteps = Vec<(&'static str, f64)>;

/// Wall time of each step of a sequence of queued work, the stream
/// synchronized at each step (only when on: otherwise nothing waits).
struct StepClock<'a> {
    dev: &'a CudaDevice,
    on: bool,
    clock: std::time::Instant,
    steps: Vec<(&'static str, f64)>,
}

impl<'a> StepClock<'a> {
    fn new(dev: &'a CudaDevice, on: bool) -> Self {
        if on {
            // What was queued before is not the first step's.
            let _ = dev.synchronize();
        }
        StepClock {
            dev,
            on,
            clock: std::time::Instant::now(),
            steps: Vec::new(),
        }
    }
    fn step(&mut self, name: &'static str) -> Result<()> {
        if self.on {
            self.dev.synchronize()?;
            self.steps
                .push((name, self.clock.elapsed().as_secs_f64() * 1e3));
            self.clock = std::time::Instant::now();
        }
        Ok(())
    }
    fn finish(self, into: &Mutex<Option<Vec<HSteps>>>) {
        if self.on {
            if let Some(v) = into.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
                v.push(self.steps);
            }
        }
    }
}
