//! cuzk-gpu: the GPU Groth16 prover. [`CudaBackend`] implements cuzk-core's
//! [`ProverBackend`] seam on cuzk-cuda's kernels: H by NTTs on the device,
//! the five MSMs with density filtering and the 0/1 split, the parameters
//! kept resident in VRAM across calls when they fit.
//!
//! This crate owns the device-side policy: the per-device [`VramBudget`]
//! every buffer is reserved from, the per-partition [`plan`] of what is
//! staged on the device, and backend selection ([`select_backend`]). It owns
//! no kernels (cuzk-cuda does) and no protocol maths (cuzk-core does).
//! [`paramgen`] runs parameter generation's fixed-base multiplications on
//! a GPU ([`select_fixed_base`]); [`subgroup`] checks parameter points'
//! subgroup membership on the GPUs ([`select_subgroup_checker`]).
//!
//! Without the `cuda` feature the crate builds anywhere: the budget and the
//! plans stay testable and [`BackendChoice::Cuda`] answers
//! [`GpuError::NotCompiled`]; [`BackendChoice::Auto`] falls back to the CPU.

pub mod budget;
// Used by the CUDA modules; built (and tested) without them too.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
mod copy;
pub mod error;
pub mod paramgen;
pub mod plan;
pub mod residency;

#[cfg(feature = "cuda")]
mod backend;
#[cfg(feature = "cuda")]
pub mod devices;
#[cfg(feature = "cuda")]
pub mod pinned;
pub mod split;
pub mod subgroup;
#[cfg(feature = "cuda")]
pub mod upload;
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
mod zpack;
#[cfg(feature = "cuda")]
pub use backend::{
    live_mirrors, CompiledFit, CompiledPlacement, CudaBackend, PartitionReport, H_PARTS,
    SUBGROUP_PIECE_POINTS,
};
#[cfg(feature = "cuda")]
pub use devices::GpuDevices;

pub use budget::{
    BudgetConfig, BudgetError, Fault, Grant, PartitionGuard, Reservation, Ticket, VramBudget,
};
pub use error::{GpuError, Result};
pub use paramgen::select_fixed_base;
#[cfg(feature = "cuda")]
pub use paramgen::GpuFixedBase;
pub use plan::{BaseStaging, Footprint, HStaging, PartitionSizes, StagingPlan};
pub use residency::{ResidencyError, ResidencyTable, ResidentInfo};
pub use subgroup::select_subgroup_checker;
#[cfg(feature = "cuda")]
pub use subgroup::GpuSubgroupChecker;

use cuzk_core::prover::{CpuBackend, ProverBackend};
use std::sync::Arc;

/// Whether this build carries the CUDA backend.
pub const CUDA_COMPILED: bool = cfg!(feature = "cuda");

/// Which prover backend to run (`--backend cpu|cuda|auto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    Cpu,
    Cuda,
    /// The GPU where one is usable, else the CPU.
    #[default]
    Auto,
}

impl std::str::FromStr for BackendChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "cpu" => Ok(BackendChoice::Cpu),
            "cuda" | "gpu" => Ok(BackendChoice::Cuda),
            "auto" => Ok(BackendChoice::Auto),
            other => Err(format!(
                "unknown backend {other:?} (expected cpu, cuda or auto)"
            )),
        }
    }
}

/// Bytes of points decoded and sent per piece when parameters left in their
/// mapped file go up to a device: 64 MiB takes ~27 ms to decode on the H200
/// machine's 16 cores (its whole 47 GB file decodes in ~20 s, ~2.3 GB/s)
/// and ~1.2 ms to copy at 55 GB/s from pinned memory, so each copy hides
/// behind the next piece's decode.
pub const FILE_PIECE_BYTES: usize = 64 << 20;

/// Device bytes of one row block when a compiled system's matrices do not
/// stay in VRAM and go up a block at a time for each partition's a/b/c
/// (the block's columns, coefficients, row starts and product lists, with
/// the transient of checking it). 256 MiB: at the ~10 GB/s of a pageable
/// or mapped host copy a block takes ~25 ms to send against the ~0.1 ms of
/// launches and checks it adds, and it stays small beside any budget that
/// holds a partition whose system is worth compiling.
pub const COMPILED_BLOCK_BYTES: usize = 256 << 20;

/// Settings of the GPU backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuConfig {
    /// CUDA device ordinal.
    pub device: usize,
    pub budget: BudgetConfig,
    /// Keep parameters in VRAM across calls when they fit.
    pub keep_params_resident: bool,
    /// Use this plan instead of the one the budget suggests (tests force
    /// each staging path with it; a forced plan still reserves every byte).
    pub force_plan: Option<StagingPlan>,
    /// Worker slots on the device (`gpu_workers_per_device`): partitions
    /// proved at once, each on its own streams, sharing the budget and the
    /// resident parameters. 2 lets one partition's host work and transfers
    /// overlap the other's kernels: porep-like 2^27, 10 partitions, a
    /// partition by 1 worker / 2 workers 1627.0 / 1561.7 ms (H200,
    /// bench/gpu-kernels.md run 25), 1521.1 / 1509.9 (H100, run 58), 1404.1
    /// / 1359.4 with z's form staged (H200, BENCHMARKS.md run 54).
    pub workers_per_device: usize,
    /// Upload a/b/c through a ring of pinned host buffers (see
    /// [`upload`]) and keep a pinned mirror of parameters that do not stay
    /// in VRAM; off, both go up from pageable memory.
    pub pinned_staging: bool,
    /// Pinned host bytes kept for reuse between partitions: each worker's
    /// upload ring holds `upload::RING_SLOTS` × `upload::RING_SLOT_BYTES`
    /// (128 MiB), and a compiled partition its staged 0/1 form
    /// (`upload::StagedForm`, 652 MB at porep-like 2^27). 2 GiB by
    /// default: two workers' rings and forms at 2^27 (1.56 GB). With 1 GiB
    /// one worker's form was allocated afresh for every other partition,
    /// 140-350 ms of page-locking each time against 19 ms for writing it
    /// into a kept buffer (H200, 2026-12-07 calls 101 and 88).
    pub max_pinned_cache: u64,
    /// Keep each partition's host preparation vectors (A and B query
    /// scalars, the 0/1 splits: about 8 GB at 2^27) for the next partition
    /// to refill, one set per worker, until the parameters are evicted;
    /// off, they are freed after every partition.
    pub reuse_host_buffers: bool,
    /// Bytes of points decoded and sent per piece when parameters left in
    /// their mapped file go up ([`FILE_PIECE_BYTES`] by default; tests use
    /// small pieces to cross piece boundaries).
    pub file_piece_bytes: usize,
    /// Keep compiled constraint systems' matrices in VRAM across
    /// partitions when they fit; off (or when they do not fit), each
    /// partition sends them up in row blocks of at most
    /// `compiled_block_bytes` for its a/b/c and frees them again.
    pub keep_compiled_resident: bool,
    /// Bytes of one row block of streamed matrices
    /// ([`COMPILED_BLOCK_BYTES`] by default; tests use small blocks).
    pub compiled_block_bytes: usize,
    /// Send the compiled path's witness z packed by 0/1 where that pays
    /// (see [`upload`]; needs `pinned_staging`); off, it goes up raw. Off
    /// by default: on the H200 machine the host's packing, not the link,
    /// limits the upload (2026-12-04 call 31, porep-like 2^27: z's upload
    /// 155.9 ms packed, 652 of 4295 MB sent, against 123.2 ms raw at 37
    /// GB/s; 2^24, call 30: 21.7 against 18.3 ms). Worth turning on where
    /// the link is the slower side (a PCIe Gen4 card, several GPUs sharing
    /// the host's lanes). `CUZK_Z_PACK=1` in the environment turns the
    /// default on. A witness whose 0/1 form the synthesis side made
    /// (`zero_one_form`) goes up that way whatever this says.
    pub pack_witness: bool,
    /// Send the aux part of a compiled partition's witness as its 0/1 form
    /// where the synthesis side made it (`cuzk_core::zero_one`; the
    /// daemon's synthesis workers and `prove --filecoin` make it when this
    /// is on: `ProverBackend::wants_zero_one`); needs `pinned_staging`. On
    /// by default: porep-like 2^27 on the H200 machine, z's upload 27.9 ms
    /// (652 of 4295 MB sent) against 101.2 raw (2026-12-04 call 40).
    /// `CUZK_Z_FORM=0` in the environment turns the default off.
    pub zero_one_form: bool,
}

/// The default of [`GpuConfig::pack_witness`]: off, unless `CUZK_Z_PACK`
/// is `1` (or `on`, `true`), for comparing the two without a rebuild.
fn pack_witness_default() -> bool {
    matches!(
        std::env::var("CUZK_Z_PACK").as_deref().map(str::trim),
        Ok("1" | "on" | "true")
    )
}

/// The default of [`GpuConfig::zero_one_form`]: on, unless `CUZK_Z_FORM`
/// is `0` (or `off`, `false`).
fn zero_one_form_default() -> bool {
    !matches!(
        std::env::var("CUZK_Z_FORM").as_deref().map(str::trim),
        Ok("0" | "off" | "false")
    )
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig {
            device: 0,
            budget: BudgetConfig::default(),
            keep_params_resident: true,
            force_plan: None,
            workers_per_device: 2,
            pinned_staging: true,
            max_pinned_cache: 2 << 30,
            reuse_host_buffers: true,
            file_piece_bytes: FILE_PIECE_BYTES,
            keep_compiled_resident: true,
            compiled_block_bytes: COMPILED_BLOCK_BYTES,
            pack_witness: pack_witness_default(),
            zero_one_form: zero_one_form_default(),
        }
    }
}

/// Per-partition reports of a backend that keeps them (the CUDA one):
/// plan, phase timings and memory of each partition proved since the last
/// call, as JSON (for `cuzk bench --json`).
pub trait PartitionReports: Send + Sync {
    fn take_reports_json(&self) -> serde_json::Value;
}

/// The chosen backend, and why the CPU was chosen when `Auto` fell back.
pub struct Selection {
    pub backend: Arc<dyn ProverBackend>,
    /// The same backend's per-partition reports, where it keeps them.
    pub reports: Option<Arc<dyn PartitionReports>>,
    pub fallback_reason: Option<String>,
}

/// Picks a backend. `Cuda` fails when no GPU is usable (or the build has no
/// CUDA); `Auto` then takes the CPU and says why in `fallback_reason`.
pub fn select_backend_with(choice: BackendChoice, config: &GpuConfig) -> Result<Selection> {
    match choice {
        BackendChoice::Cpu => Ok(Selection {
            backend: Arc::new(CpuBackend),
            reports: None,
            fallback_reason: None,
        }),
        BackendChoice::Cuda => {
            let (backend, reports) = open_cuda(config)?;
            Ok(Selection {
                backend,
                reports: Some(reports),
                fallback_reason: None,
            })
        }
        BackendChoice::Auto => match open_cuda(config) {
            Ok((backend, reports)) => Ok(Selection {
                backend,
                reports: Some(reports),
                fallback_reason: None,
            }),
            Err(e) => Ok(Selection {
                backend: Arc::new(CpuBackend),
                reports: None,
                fallback_reason: Some(format!("proving on the CPU: {e}")),
            }),
        },
    }
}

/// [`select_backend_with`] with the default settings; an `Auto` fallback's
/// reason is written to stderr.
pub fn select_backend(choice: BackendChoice) -> Result<Arc<dyn ProverBackend>> {
    let s = select_backend_with(choice, &GpuConfig::default())?;
    if let Some(why) = &s.fallback_reason {
        eprintln!("cuzk: {why}");
    }
    Ok(s.backend)
}

/// One backend per GPU (ordinals 0..count), each with its own budget, for
/// a scheduler that runs a set of workers per device; workers of one
/// device share its backend (and so its budget and resident parameters).
/// Fails when no GPU is usable.
pub fn open_all_devices(config: &GpuConfig) -> Result<Vec<Arc<dyn ProverBackend>>> {
    let count = device_count()?;
    (0..count)
        .map(|device| open_cuda(&GpuConfig { device, ..*config }).map(|(b, _)| b))
        .collect()
}

/// The CUDA ordinals to open out of `count` GPUs: every one (`select`
/// None), or those listed, in the order given; an ordinal the driver does
/// not report, or one listed twice, is refused by name.
pub fn select_ordinals(count: usize, select: Option<&[usize]>) -> Result<Vec<usize>> {
    let Some(list) = select else {
        return Ok((0..count).collect());
    };
    let refuse = |ordinal, why| {
        Err(GpuError::NoSuchDevice {
            ordinal,
            count,
            why,
        })
    };
    if let Some(&ordinal) = list.iter().find(|&&o| o >= count) {
        return refuse(ordinal, "does not exist");
    }
    if let Some(ordinal) = first_repeated(list) {
        return refuse(ordinal, "is listed twice");
    }
    Ok(list.to_vec())
}

/// The first ordinal a GPU selection lists a second time, if any (the
/// daemon's configuration check asks it too, before any GPU is opened).
pub fn first_repeated(list: &[usize]) -> Option<usize> {
    list.iter()
        .enumerate()
        .find(|&(i, o)| list[..i].contains(o))
        .map(|(_, &o)| o)
}

/// GPUs the driver reports (0 where libcuda is absent).
#[cfg(feature = "cuda")]
pub fn device_count() -> Result<usize> {
    // SAFETY: only probes whether the shared library can be loaded; cudarc
    // panics on a missing libcuda if any other call comes first.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Ok(0);
    }
    cudarc::driver::CudaContext::device_count()
        .map(|n| n.max(0) as usize)
        .map_err(|e| GpuError::Driver {
            op: "device count",
            device: "-".into(),
            source: Box::new(e),
        })
}

#[cfg(not(feature = "cuda"))]
pub fn device_count() -> Result<usize> {
    Err(GpuError::NotCompiled)
}

type Opened = (Arc<dyn ProverBackend>, Arc<dyn PartitionReports>);

#[cfg(feature = "cuda")]
fn open_cuda(config: &GpuConfig) -> Result<Opened> {
    let b = Arc::new(CudaBackend::open(*config)?);
    Ok((b.clone(), b))
}

#[cfg(not(feature = "cuda"))]
fn open_cuda(_config: &GpuConfig) -> Result<Opened> {
    Err(GpuError::NotCompiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_selection_takes_listed_ordinals_and_refuses_unknown_or_repeated_ones() {
        assert_eq!(select_ordinals(3, None).unwrap(), vec![0, 1, 2]);
        assert_eq!(select_ordinals(0, None).unwrap(), Vec::<usize>::new());
        assert_eq!(select_ordinals(4, Some(&[3, 1])).unwrap(), vec![3, 1]);
        assert_eq!(select_ordinals(2, Some(&[])).unwrap(), Vec::<usize>::new());
        let e = select_ordinals(2, Some(&[0, 2])).unwrap_err();
        assert!(
            matches!(
                e,
                GpuError::NoSuchDevice {
                    ordinal: 2,
                    count: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("GPU 2 does not exist"), "{e}");
        let e = select_ordinals(4, Some(&[1, 3, 1])).unwrap_err();
        assert!(e.to_string().contains("GPU 1 is listed twice"), "{e}");
        let e = select_ordinals(0, Some(&[0])).unwrap_err();
        assert!(e.to_string().contains("GPU 0 does not exist"), "{e}");
        assert_eq!(first_repeated(&[2, 0, 1]), None);
        assert_eq!(first_repeated(&[2, 0, 0, 2]), Some(0));
    }

    #[test]
    fn choice_parses() {
        assert_eq!("cpu".parse::<BackendChoice>(), Ok(BackendChoice::Cpu));
        assert_eq!("CUDA".parse::<BackendChoice>(), Ok(BackendChoice::Cuda));
        assert_eq!("auto".parse::<BackendChoice>(), Ok(BackendChoice::Auto));
        assert!("tpu".parse::<BackendChoice>().is_err());
    }

    #[test]
    fn device_count_matches_what_opens() {
        match device_count() {
            Ok(0) | Err(GpuError::NotCompiled) => {
                assert!(open_all_devices(&GpuConfig::default()).map_or(true, |v| v.is_empty()))
            }
            Ok(n) => assert_eq!(open_all_devices(&GpuConfig::default()).unwrap().len(), n),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn cpu_is_always_available() {
        let s = select_backend_with(BackendChoice::Cpu, &GpuConfig::default()).unwrap();
        assert_eq!(s.backend.name(), "cpu");
        assert!(s.fallback_reason.is_none());
    }

    /// On a machine without a GPU (CI, or a build without CUDA), Cuda is a
    /// clear error and Auto falls back to the CPU with the reason.
    #[test]
    fn auto_falls_back_without_a_gpu() {
        let cuda = select_backend_with(BackendChoice::Cuda, &GpuConfig::default());
        let auto = select_backend_with(BackendChoice::Auto, &GpuConfig::default()).unwrap();
        match cuda {
            Ok(s) => {
                // A GPU is present: Auto must take it too.
                assert_eq!(s.backend.name(), "cuda");
                assert_eq!(auto.backend.name(), "cuda");
            }
            Err(e) => {
                if !CUDA_COMPILED {
                    assert!(matches!(e, GpuError::NotCompiled));
                }
                assert_eq!(auto.backend.name(), "cpu");
                let why = auto.fallback_reason.unwrap();
                assert!(why.contains("CPU"), "{why}");
                assert!(why.contains(&e.to_string()), "{why}");
            }
        }
    }
}
