//! The arithmetic kernels that only the GPU checks (`crate::checks`) and
//! the benchmarks (`crate::bench`) run: field and curve operations on raw
//! Montgomery bytes, and the multiplication throughput.

use cudarc::driver::CudaSlice;

use super::launch::{cfg1d, typed_kernels, DevPtr};
use super::{CudaDevice, Group_};
use crate::error::Result;
use crate::host::FR_BYTES;

typed_kernels! {
    /// `test_fr_ops`, `test_fq_ops`, `test_fq2_ops`: six results per pair.
    FieldOps(a: DevPtr, b: DevPtr, out: DevPtr, n: u32);
    /// `test_fr_from_mont`: out of Montgomery form.
    FrFromMont(a: DevPtr, out: DevPtr, n: u32);
    /// `test_g1_ops`, `test_g2_ops`: four results per pair of points.
    CurveOps(p: DevPtr, q: DevPtr, ks: DevPtr, out: DevPtr, n: u32);
    /// `bench_fq_mul`, `bench_fr_mul`: `iters` products per chain.
    MulThroughput(data: DevPtr, iters: u32, variant: u32);
}

/// Threads per block of test_*_ops (field) and test_fr_from_mont.
const FIELD_OPS_BLOCK: u32 = 128;
/// Threads per block of test_g*_ops.
const CURVE_OPS_BLOCK: u32 = 64;
/// Threads per block of bench_*_mul.
const MUL_THROUGHPUT_BLOCK: u32 = 256;

impl CudaDevice {
    /// Runs test_{fr,fq,fq2}_ops: per element [a*b, a+b, a-b, a^2, -a,
    /// a*b by the second multiplication (C++ CIOS / schoolbook Fq2)], raw
    /// Montgomery bytes in and out. `which`: 0 = Fr, 1 = Fq, 2 = Fq2.
    pub fn field_ops_raw(&self, which: u32, a: &[u8], b: &[u8], elem: usize) -> Result<Vec<u8>> {
        let n = a.len() / elem;
        let f = match which {
            0 => &self.k.test_fr_ops,
            1 => &self.k.test_fq_ops,
            _ => &self.k.test_fq2_ops,
        };
        let (da, db) = (self.upload("field_ops", a)?, self.upload("field_ops", b)?);
        let out: CudaSlice<u8> = self.alloc("field_ops", 6 * n * elem)?;
        f.launch(
            self,
            "test_field_ops",
            n,
            cfg1d(n, FIELD_OPS_BLOCK),
            self.p(&da),
            self.p(&db),
            self.p(&out),
            n as u32,
        )?;
        self.download("field_ops", &out, 6 * n * elem)
    }

    pub fn fr_from_mont_raw(&self, a: &[u8]) -> Result<Vec<u8>> {
        let n = a.len() / FR_BYTES;
        let da = self.upload("fr_from_mont", a)?;
        let out: CudaSlice<u8> = self.alloc("fr_from_mont", a.len())?;
        self.k.test_fr_from_mont.launch(
            self,
            "test_fr_from_mont",
            n,
            cfg1d(n, FIELD_OPS_BLOCK),
            self.p(&da),
            self.p(&out),
            n as u32,
        )?;
        self.download("fr_from_mont", &out, a.len())
    }

    /// Runs test_g{1,2}_ops: per pair [P+Q mixed, P+Q xyzz, 2P, k*P] as XYZZ.
    pub fn curve_ops_raw(&self, g2: bool, p: &[u8], q: &[u8], ks: &[u32]) -> Result<Vec<u8>> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let n = ks.len();
        let (dp, dq, dk) = (
            self.upload("curve_ops", p)?,
            self.upload("curve_ops", q)?,
            self.upload("curve_ops", ks)?,
        );
        let out: CudaSlice<u8> = self.alloc("curve_ops", 4 * n * group.xyzz_bytes())?;
        let f = if g2 {
            &self.k.test_g2_ops
        } else {
            &self.k.test_g1_ops
        };
        f.launch(
            self,
            "test_curve_ops",
            n,
            cfg1d(n, CURVE_OPS_BLOCK),
            self.p(&dp),
            self.p(&dq),
            self.p(&dk),
            self.p(&out),
            n as u32,
        )?;
        self.download("curve_ops", &out, 4 * n * group.xyzz_bytes())
    }

    /// Products per second of the Montgomery multiplication: `fq` picks Fq
    /// (else Fr); variant 0 = PTX inline, 1 = C++ CIOS inline, 2 = what the
    /// kernels use (out of line for Fq). Median of 3 timed runs.
    pub fn mul_throughput(&self, fq: bool, variant: u32, sms: u32) -> Result<f64> {
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
        let data = self.upload("mul_throughput", &host_data)?;
        let iters = 256u32;
        let f = if fq {
            &self.k.bench_fq_mul
        } else {
            &self.k.bench_fr_mul
        };
        let mut ts = Vec::new();
        for rep in 0..4 {
            self.synchronize()?;
            let t = std::time::Instant::now();
            f.launch(
                self,
                "bench_mul",
                threads,
                cfg1d(threads, MUL_THROUGHPUT_BLOCK),
                self.p(&data),
                iters,
                variant,
            )?;
            self.synchronize()?;
            if rep > 0 {
                ts.push(t.elapsed().as_secs_f64());
            }
        }
        ts.sort_by(|a, b| a.total_cmp(b));
        Ok(2.0 * threads as f64 * iters as f64 / ts[1])
    }
}
