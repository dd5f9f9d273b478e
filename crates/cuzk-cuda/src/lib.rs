//! cuzk-cuda: the GPU half of the prover. BLS12-381 Fr/Fq/Fq2 Montgomery
//! arithmetic, NTT over Fr, and G1/G2 multi-scalar multiplication
//! (Pippenger, signed digits, sorted buckets, XYZZ accumulation, plus the
//! 0/1 path), written as CUDA kernels in `kernels/` and driven from Rust
//! through cudarc's driver API with run-time loading of libcuda.
//!
//! With the `cuda` feature, build.rs compiles the kernels into a fatbin that
//! is embedded in the binary; [`CudaDevice::open`] answers
//! [`CudaError::NoGpu`] on machines without libcuda or a GPU so callers fall
//! back to the CPU. Without the feature the same API exists and `open`
//! answers [`CudaError::NotCompiled`].
//!
//! Field products: kernels/field.cuh's Montgomery products run on the IMAD
//! pipe (PTX carry chains); kernels/field_f64.cuh has the same products
//! with their limb products on the FP64 pipe (52-bit limbs in doubles, the
//! same memory form and R), which kernels built with `CUZK_FP64_MIX_FQ` /
//! `CUZK_FP64_MIX_FR` (build.rs's `CUZK_NVCC_DEFINES`) use for about half
//! of the point formulas' and NTT butterflies' products, so that both
//! pipes work at once (bench/gpu-kernels.md run 27). Measured slower on
//! the H200 (run 29: latency-bound at the kernels' occupancy, and more
//! registers), so off by default.
//!
//! This crate owns the kernels and their host API; it knows nothing of
//! Groth16 (cuzk-core) beyond the field and curve types of blstrs.
//!
//! Host API (feature `cuda`), all on one [`CudaDevice`]:
//! - NTT over Fr: `ntt` (host slice), `ntt_device` (a resident buffer, in
//!   place) and `ntt_device_into` (out of place: the bit reversal fused
//!   into a pass, ~3 ms less at 2^27 for a second buffer), forward /
//!   inverse / coset / inverse coset ([`NttKind`]), 2^0..2^28;
//!   H = (a*b - c)/Z from evaluations in six transforms: `h_device` (or its
//!   steps `evals_to_coset_device`, `h_c_coeffs_device`,
//!   `h_finish_device`) and `compute_h` (host slices).
//! - MSM: `msm_g1` / `msm_g2` (host slices), `msm_g1_device` /
//!   `msm_g2_device` over resident `DevicePoints` and `DeviceScalars`
//!   (Montgomery or canonical, optional point ids for an indexed MSM),
//!   `msm_g1_pinned` (points streamed from pinned memory).
//! - The 0/1 path (kernels/zero_one.cuh): `sum_selected_g1` /
//!   `sum_selected_g2` over a bit mask, `sum_selected_g1_paired` /
//!   `_g2_paired` with the points' pair sums resident beside them
//!   ([`host::pair_sums_g1`]: one addition a pair with a bit set),
//!   [`split_zero_one`] and `msm_g1_split` / `msm_g2_split`.
//! - The compiled constraint system (src/device/spmv.rs): `upload_csr` /
//!   `csr_from_device` make a resident [`DeviceCsr`]; `spmv_device` (into
//!   any output at a first row, for row blocks) and `abc_device` (a/b/c
//!   padded to the NTT size) multiply it by a resident z; `select_device`
//!   makes the A/B query scalars from z and [`DeviceDensity`] flags;
//!   `split_zero_one_device` is the 0/1 split as a [`DeviceSplit`], which
//!   `msm_g1_split_device` / `msm_g2_split_device` take without a trip
//!   through the host. Each states the device bytes it allocates
//!   (`*_bytes`).
//! - Subgroup checks (src/device/subgroup.rs, kernels/subgroup.cuh):
//!   `subgroup_check_g1` / `subgroup_check_g2` (host slices),
//!   `subgroup_check_device` (resident points) and `subgroup_check_staged`
//!   (points streamed through caller-owned staging into a caller-owned
//!   chunk) report how many points lie outside the prime-order subgroup
//!   and the first of them; [`subgroup`] is the same arithmetic on the CPU
//!   and owns the constants.
//! - A witness sent up packed by 0/1 (src/device/zpack.rs,
//!   kernels/zpack.cuh): `expand_z_on` expands a packed piece into z on
//!   the caller's upload stream; [`zpack`] owns the layout and a model of
//!   the kernel that runs on the CPU.
//!
//! Errors are [`CudaError`] values naming the kernel, the size and the
//! device. The GPU checks (`checks`, run by scripts/gpu-test.sh) and the
//! benchmarks (`bench`, `cuzk bench-kernels`) are part of the crate;
//! measured figures are in bench/gpu-kernels.md. The arithmetic kernels
//! only they run are compiled from kernels/tests.cu into a second fatbin,
//! which they load themselves; the production fatbin does not carry them.

pub mod cases;
pub mod error;
pub mod host;

#[cfg(feature = "cuda")]
mod device;
#[cfg(feature = "cuda")]
pub use device::{
    compact_scratch_bytes, BucketSplit, CsrStaging, CsrStagingDsts, CsrWide, CudaDevice, DeviceCsr,
    DeviceDensity, DevicePoints, DeviceScalars, DeviceSplit, HSteps, NttPass, ScalarForm,
    SubgroupReport, MAX_NTT_LOG, SPMV_LONG, SUBGROUP_MAX_POINTS, SUBGROUP_SCRATCH_BYTES,
};

#[cfg(not(feature = "cuda"))]
mod nogpu;
#[cfg(not(feature = "cuda"))]
pub use nogpu::CudaDevice;

pub mod bench;
#[cfg(feature = "cuda")]
pub mod checks;
pub mod subgroup;
pub mod zpack;

pub use error::{CudaError, Result};
pub use host::{split_zero_one, NttKind, ZeroOneSplit};

/// Whether this build carries the CUDA kernels.
pub const CUDA_COMPILED: bool = cfg!(feature = "cuda");

/// The macros the kernels were compiled with (build.rs's
/// `CUZK_NVCC_DEFINES`, a comma list; empty for the default build).
#[cfg(feature = "cuda")]
pub const KERNEL_DEFINES: &str = env!("CUZK_KERNEL_DEFINES");
