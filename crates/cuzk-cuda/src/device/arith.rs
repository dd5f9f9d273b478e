//! The arithmetic kernels that only the GPU checks (`crate::checks`) and
//! the benchmarks (`crate::bench`) run: field and curve operations on raw
//! Montgomery bytes, and the multiplication throughput. They are compiled
//! from kernels/tests.cu into a fatbin of their own, which
//! [`ArithKernels::load`] loads on an open device's context; the production
//! module ([`CudaDevice::open`]) does not carry them.

use std::sync::Arc;

use cudarc::driver::{CudaModule, CudaSlice};

use super::launch::{cfg1d, typed_kernels, DevPtr};
use super::{CudaDevice, Group_};
use crate::error::Result;
use crate::host::FR_BYTES;

static TEST_FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cuzk_tests.fatbin"));

typed_kernels! {
    /// `test_fr_ops`, `test_fq_ops`, `test_fq2_ops`: six results per pair;
    /// `test_fr_f64`, `test_fq_f64`: [a*b, a^2] per pair by field_f64.cuh's
    /// FP64 products.
    FieldOps["test_fr_ops", "test_fq_ops", "test_fq2_ops", "test_fr_f64", "test_fq_f64"](
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        n: u32,
    );
    /// `test_fr_from_mont`: out of Montgomery form.
    FrFromMont["test_fr_from_mont"](a: DevPtr, out: DevPtr, n: u32);
    /// `test_g1_ops`, `test_g2_ops`: four results per pair of points.
    CurveOps["test_g1_ops", "test_g2_ops"](p: DevPtr, q: DevPtr, ks: DevPtr, out: DevPtr, n: u32);
    /// `bench_fq_mul`, `bench_fr_mul`: `iters` products per chain.
    MulThroughput["bench_fq_mul", "bench_fr_mul"](data: DevPtr, iters: u32, variant: u32);
}

/// Threads per block of test_*_ops (field) and test_fr_from_mont.
const FIELD_OPS_BLOCK: u32 = 128;
/// Threads per block of test_g*_ops.
const CURVE_OPS_BLOCK: u32 = 64;
/// Threads per block of bench_*_mul.
const MUL_THROUGHPUT_BLOCK: u32 = 256;

/// The test and benchmark kernels, loaded on one device; they run on its
/// stream and allocate through it.
pub(crate) struct ArithKernels<'d> {
    dev: &'d CudaDevice,
    _module: Arc<CudaModule>,
    fr_ops: FieldOps,
    fq_ops: FieldOps,
    fq2_ops: FieldOps,
    fr_from_mont: FrFromMont,
    fr_f64: FieldOps,
    fq_f64: FieldOps,
    g1_ops: CurveOps,
    g2_ops: CurveOps,
    fq_mul: MulThroughput,
    fr_mul: MulThroughput,
}

impl<'d> ArithKernels<'d> {
    /// Loads kernels/tests.cu's fatbin on `dev`'s context.
    pub(crate) fn load(dev: &'d CudaDevice) -> Result<Self> {
        let kernel = "arith kernels";
        let module = dev
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(TEST_FATBIN.to_vec()))
            .map_err(|e| dev.err("loading the test fatbin", kernel, 0, e))?;
        let f = |name: &'static str| {
            module
                .load_function(name)
                .map_err(|e| dev.err("kernel lookup", kernel, 0, e))
        };
        let [fr_ops, fq_ops, fq2_ops, fr_f64, fq_f64] = FieldOps::load_all(&f)?;
        let [g1_ops, g2_ops] = CurveOps::load_all(&f)?;
        let [fq_mul, fr_mul] = MulThroughput::load_all(&f)?;
        Ok(ArithKernels {
            dev,
            fr_ops,
            fq_ops,
            fq2_ops,
            fr_from_mont: FrFromMont::load(&f)?,
            fr_f64,
            fq_f64,
            g1_ops,
            g2_ops,
            fq_mul,
            fr_mul,
            _module: module,
        })
    }

    /// Runs test_{fr,fq,fq2}_ops: per element [a*b, a+b, a-b, a^2, -a,
    /// a*b by the second multiplication (C++ CIOS / schoolbook Fq2)], raw
    /// Montgomery bytes in and out. `which`: 0 = Fr, 1 = Fq, 2 = Fq2.
    pub(crate) fn field_ops_raw(
        &self,
        which: u32,
        a: &[u8],
        b: &[u8],
        elem: usize,
    ) -> Result<Vec<u8>> {
        let f = match which {
            0 => &self.fr_ops,
            1 => &self.fq_ops,
            _ => &self.fq2_ops,
        };
        self.pairs(f, "field_ops", a, b, elem, 6)
    }

    /// Runs test_fr_f64 or test_fq_f64: per pair [a*b, a^2] by the FP64
    /// products, raw Montgomery bytes (`elem` per element: 32 Fr, 48 Fq) in
    /// and out.
    pub(crate) fn field_f64_raw(&self, a: &[u8], b: &[u8], elem: usize) -> Result<Vec<u8>> {
        let f = if elem == 48 {
            &self.fq_f64
        } else {
            &self.fr_f64
        };
        self.pairs(f, "field_f64", a, b, elem, 2)
    }

    /// One of the field kernels over the pairs (a[i], b[i]) of `elem`-byte
    /// elements: its `per` results for each pair.
    fn pairs(
        &self,
        f: &FieldOps,
        what: &'static str,
        a: &[u8],
        b: &[u8],
        elem: usize,
        per: usize,
    ) -> Result<Vec<u8>> {
        let dev = self.dev;
        let n = a.len() / elem;
        let (da, db) = (dev.upload(what, a)?, dev.upload(what, b)?);
        let out: CudaSlice<u8> = dev.alloc(what, per * n * elem)?;
        f.launch(
            dev,
            what,
            n,
            cfg1d(n, FIELD_OPS_BLOCK),
            dev.p(&da),
            dev.p(&db),
            dev.p(&out),
            n as u32,
        )?;
        dev.download(what, &out, per * n * elem)
    }

    pub(crate) fn fr_from_mont_raw(&self, a: &[u8]) -> Result<Vec<u8>> {
        let dev = self.dev;
        let n = a.len() / FR_BYTES;
        let da = dev.upload("fr_from_mont", a)?;
        let out: CudaSlice<u8> = dev.alloc("fr_from_mont", a.len())?;
        self.fr_from_mont.launch(
            dev,
            "test_fr_from_mont",
            n,
            cfg1d(n, FIELD_OPS_BLOCK),
            dev.p(&da),
            dev.p(&out),
            n as u32,
        )?;
        dev.download("fr_from_mont", &out, a.len())
    }

    /// Runs test_g{1,2}_ops: per pair [P+Q mixed, P+Q xyzz, 2P, k*P] as XYZZ.
    pub(crate) fn curve_ops_raw(
        &self,
        g2: bool,
        p: &[u8],
        q: &[u8],
        ks: &[u32],
    ) -> Result<Vec<u8>> {
        let dev = self.dev;
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let n = ks.len();
        let (dp, dq, dk) = (
            dev.upload("curve_ops", p)?,
            dev.upload("curve_ops", q)?,
            dev.upload("curve_ops", ks)?,
        );
        let out: CudaSlice<u8> = dev.alloc("curve_ops", 4 * n * group.xyzz_bytes())?;
        let f = if g2 { &self.g2_ops } else { &self.g1_ops };
        f.launch(
            dev,
            "test_curve_ops",
            n,
            cfg1d(n, CURVE_OPS_BLOCK),
            dev.p(&dp),
            dev.p(&dq),
            dev.p(&dk),
            dev.p(&out),
            n as u32,
        )?;
        dev.download("curve_ops", &out, 4 * n * group.xyzz_bytes())
    }

    /// Products per second of the Montgomery multiplication: `fq` picks Fq
    /// (else Fr); variant 0 = PTX inline, 1 = C++ CIOS inline, 2 = what the
    /// kernels use (out of line for Fq), 3 = squarings as the kernels call
    /// them, 4 = the FP64 product, 5 = the FP64 square, 6 = one chain by PTX
    /// and one by the FP64 product. Median of 3 timed runs.
    pub(crate) fn mul_throughput(&self, fq: bool, variant: u32, sms: u32) -> Result<f64> {
        let dev = self.dev;
        let threads = sms as usize * 2048;
        let elem = if fq { 48 } else { 32 };
        let mut seed = 0x1234_5678_9abc_def1u64;
        // Values below the modulus: top limb cleared keeps them reduced.
        let host_data: Vec<u8> = (0..2 * threads * elem)
            .map(|i| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if i % elem >= elem - 4 {
                    0
                } else {
                    seed as u8
                }
            })
            .collect();
        let data = dev.upload("mul_throughput", &host_data)?;
        let iters = 256u32;
        let f = if fq { &self.fq_mul } else { &self.fr_mul };
        let mut ts = Vec::new();
        for rep in 0..4 {
            dev.synchronize()?;
            let t = std::time::Instant::now();
            f.launch(
                dev,
                "bench_mul",
                threads,
                cfg1d(threads, MUL_THROUGHPUT_BLOCK),
                dev.p(&data),
                iters,
                variant,
            )?;
            dev.synchronize()?;
            if rep > 0 {
                ts.push(t.elapsed().as_secs_f64());
            }
        }
        ts.sort_by(|a, b| a.total_cmp(b));
        Ok(2.0 * threads as f64 * iters as f64 / ts[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(fatbin: &[u8], symbol: &str) -> bool {
        fatbin.windows(symbol.len()).any(|w| w == symbol.as_bytes())
    }

    /// The production fatbin carries none of these kernels, the test fatbin
    /// all of them (kernel names stand in a fatbin's symbol tables; a
    /// production kernel's name is the control that they can be seen).
    #[test]
    fn test_kernels_live_in_their_own_fatbin() {
        assert!(holds(super::super::FATBIN, "msm_digits"));
        for k in [
            "test_fr_ops",
            "test_fq_ops",
            "test_fq2_ops",
            "test_fr_from_mont",
            "test_fr_f64",
            "test_fq_f64",
            "test_g1_ops",
            "test_g2_ops",
            "bench_fq_mul",
            "bench_fr_mul",
        ] {
            assert!(
                !holds(super::super::FATBIN, k),
                "{k} in the production fatbin"
            );
            assert!(holds(TEST_FATBIN, k), "{k} missing from the test fatbin");
        }
    }
}
