//! The accelerator seam: which devices exist, the prover each of the
//! daemon's workers uses, what parameters each device holds resident,
//! where generated parameters get their fixed-base multiplications done,
//! and where loaded parameters get their subgroup checks.
//!
//! The backend owns each device's VRAM: what is resident there is what
//! [`DeviceBackend::resident_params`] says (the GPU backend evicts unused
//! sets itself, least recently used first, when a partition needs room),
//! and the daemon's parameter manager asks instead of keeping its own
//! account.
//!
//! A partition that fits no plan on a device even with the device's whole
//! memory to itself is the one failure memory can cause
//! ([`DeviceBackend::check_fits`]); the daemon asks before it proves, with
//! the partition's [`PartitionSizes`], so that such a job is refused when it
//! is submitted rather than failed when proving starts.
//!
//! Implemented by cuzk-gpu's `GpuDevices` (one CUDA backend per GPU) and,
//! here, by [`CpuDevices`], which has no devices: the VRAM tier stays empty
//! and status says that no GPU backend is present. The daemon (cuzk-daemon)
//! drives it; neither implementation knows the daemon.

use crate::generator::FixedBaseEngine;
use crate::params::{Parameters, ParamsLayout, Section};
use crate::prover::{CpuBackend, ProverBackend};
use crate::subgroup::SubgroupChecker;
use std::sync::Arc;

pub type DeviceError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceInfo {
    pub index: u32,
    pub name: String,
    pub vram_total_bytes: u64,
    pub vram_free_bytes: u64,
    /// The most device memory the driver's pool held at once since the
    /// backend opened (what partitions really allocated, beside the
    /// budget's account); 0 where the backend does not measure it.
    pub pool_high_bytes: u64,
    /// Parameter sets uploaded to the device since it opened (each upload
    /// of a resident set; a kind kept resident is uploaded once).
    pub param_uploads: u64,
}

/// A parameter set resident on a device, as the backend lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ResidentParams {
    /// The parameter id it was made resident under (the kind's
    /// `params_id`, or the backend's own id for sets it was not told).
    pub id: String,
    pub bytes: u64,
    /// Partitions in flight proving with it.
    pub in_use: u32,
    /// Milliseconds since it was last used.
    pub idle_ms: u64,
}

/// What decides a partition's device memory: its evaluation domain and the
/// points of the parameters' queries it multiplies. Parameters fix all of
/// it (h has one point fewer than the domain), so it is known from a
/// parameter file's section headers before anything is loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionSizes {
    /// The evaluation domain (a/b/c padded to this power of two).
    pub domain: usize,
    /// Points of the A, B (G1 and G2 alike), L and H queries.
    pub a: usize,
    pub b: usize,
    pub l: usize,
    pub h: usize,
}

impl PartitionSizes {
    /// The sizes of a partition proved with `params`.
    pub fn of_params(params: &Parameters) -> Self {
        PartitionSizes {
            domain: params.h.len() + 1,
            a: params.a.len(),
            b: params.b_g1.len(),
            l: params.l.len(),
            h: params.h.len(),
        }
    }

    /// The sizes of a partition proved with the parameter file laid out as
    /// `layout` (its section headers: nothing decoded).
    pub fn of_layout(layout: &ParamsLayout) -> Self {
        let count = |s: Section| {
            layout
                .sections
                .iter()
                .find(|(section, _, _)| *section == s)
                .map_or(0, |&(_, _, n)| n)
        };
        PartitionSizes {
            domain: count(Section::H) + 1,
            a: count(Section::A),
            b: count(Section::BG1),
            l: count(Section::L),
            h: count(Section::H),
        }
    }
}

impl std::fmt::Display for PartitionSizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "domain {}, query points a {}, b {}, l {}, h {}",
            self.domain, self.a, self.b, self.l, self.h
        )
    }
}

/// A partition that fits no plan on `device`, even with the device's whole
/// budget to itself: it can never be proved there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "gpu {device}: the least any plan needs at once is {needed} bytes, the device's budget \
     is {capacity} bytes"
)]
pub struct NoPlanFits {
    pub device: u32,
    /// The least device memory any plan of the partition holds at once.
    pub needed: u64,
    /// The device's whole budget.
    pub capacity: u64,
}

pub trait DeviceBackend: Send + Sync + 'static {
    /// The prover backend's name ("cpu", "cuda").
    fn name(&self) -> &'static str;
    /// True when devices are GPUs; the engine then runs
    /// `gpu_workers_per_device` proving workers per device (sharing that
    /// device's prover) and uses the VRAM tier. By default, whether there
    /// are any devices (the devices a backend lists are its GPUs).
    fn gpu_present(&self) -> bool {
        self.device_count() > 0
    }
    /// The devices, with their memory as of now.
    fn devices(&self) -> Vec<DeviceInfo>;
    /// How many devices there are (indices 0..count), without measuring
    /// their memory.
    fn device_count(&self) -> u32 {
        self.devices().len() as u32
    }
    /// The prover for a worker bound to `device` (None: a CPU worker). The
    /// engine asks once per worker; workers of one device may call it at
    /// the same time, so it must take concurrent calls.
    fn prover(&self, device: Option<u32>) -> Arc<dyn ProverBackend>;
    /// Copy `params` into the device's memory under `id`; returns the bytes
    /// it occupies there. The backend makes room by evicting sets no
    /// partition uses; it may refuse when there is none now (then the
    /// prover uploads them when its plan wants them, still under `id`).
    /// Called only when `gpu_present`.
    fn upload_params(
        &self,
        device: u32,
        id: &str,
        params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError>;
    /// Free what `upload_params` made resident (once no partition uses it).
    fn release_params(&self, device: u32, id: &str);
    /// Whether every device's prover keeps parameters resident and decodes
    /// them as it uploads them ([`ProverBackend::keeps_parameters_resident`]):
    /// the daemon then hands them parameters left in their mapped file
    /// instead of decoding whole files into host memory. By default no.
    fn keeps_parameters_resident(&self) -> bool {
        false
    }
    /// Whether the devices' provers want witnesses in their 0/1 form
    /// ([`ProverBackend::wants_zero_one`]): the daemon's synthesis workers
    /// then make it after each witness. By default no.
    fn wants_zero_one(&self) -> bool {
        false
    }
    /// The parameter sets resident on `device` now, as its owner knows
    /// them; empty for a backend without VRAM.
    fn resident_params(&self, _device: u32) -> Vec<ResidentParams> {
        Vec::new()
    }
    /// Whether `device` holds `id` now (asked for every ready chunk when a
    /// worker picks one, so a backend may answer cheaper than the list).
    fn holds_params(&self, device: u32, id: &str) -> bool {
        self.resident_params(device).iter().any(|r| r.id == id)
    }
    /// Caps the bytes of parameters kept resident per device (`[params]
    /// vram_budget`) inside the device's budget; None: the budget alone.
    fn set_resident_cap(&self, _cap: Option<u64>) {}
    /// Whether `error`, returned by `device`'s prover, means the device is
    /// lost (its context unusable: every later call would fail too). The
    /// engine then takes the device out of service and proves the
    /// partitions on the others (`engine.partition_retries`). Any other
    /// error (a partition that fits no staging plan, a refused input) is
    /// the partition's, fails its job and leaves the device in service.
    /// Only the backend can tell them apart (it owns the error's source);
    /// by default no error is a lost device.
    fn is_device_lost(&self, _device: u32, _error: &crate::Error) -> bool {
        false
    }
    /// Whether `device`, taken out of service as lost, works again: the
    /// engine asks every `engine.device_probe_interval_s` while it is out
    /// and returns it to service when this is Ok. A backend that cannot
    /// tell answers Err (the default), and its lost devices stay out until
    /// the daemon restarts.
    fn probe(&self, device: u32) -> Result<(), DeviceError> {
        Err(format!("backend {} cannot probe gpu {device}", self.name()).into())
    }
    /// Whether a partition of `sizes` fits `device` on some plan with the
    /// device's whole budget to itself. A partition that does can always
    /// be proved there (it waits for memory others hold, or takes a
    /// smaller plan); one that does not never can, so the engine refuses
    /// its job before proving, naming the sizes. Answered from the
    /// backend's own planner (no allocation); by default every partition
    /// fits (no device budget).
    fn check_fits(&self, _device: u32, _sizes: &PartitionSizes) -> Result<(), NoPlanFits> {
        Ok(())
    }
    /// Where parameters the daemon generates (kinds with a generator)
    /// have their fixed-base multiplications done: a GPU's engine, or
    /// None for the CPU.
    fn fixed_base_engine(&self) -> Option<Arc<dyn FixedBaseEngine + Send + Sync>> {
        None
    }
    /// Where the subgroup checks of parameter points run when the daemon
    /// checks a parameter file: a GPU's checker, or None for the CPU's
    /// ([`crate::subgroup::CpuSubgroupChecker`]).
    fn subgroup_checker(&self) -> Option<Arc<dyn SubgroupChecker>> {
        None
    }
}

/// No devices; every worker proves on the CPU.
#[derive(Clone, Debug, Default)]
pub struct CpuDevices;

impl DeviceBackend for CpuDevices {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        Vec::new()
    }
    fn prover(&self, _device: Option<u32>) -> Arc<dyn ProverBackend> {
        Arc::new(CpuBackend)
    }
    fn upload_params(
        &self,
        device: u32,
        id: &str,
        _params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError> {
        Err(format!("the CPU backend has no device {device} to hold parameters {id}").into())
    }
    fn release_params(&self, _device: u32, _id: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes read from a file's headers equal those of the decoded
    /// parameters, and the domain is h's points plus one.
    #[test]
    fn sizes_from_headers_match_the_parameters() {
        use crate::circuits::PorepLikeCircuit;
        let mut rng = <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(7);
        let params =
            crate::generator::generate_random_parameters(PorepLikeCircuit::new(6, 0), &mut rng)
                .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.params");
        params.write_file(&path).unwrap();
        let mapped = crate::params::MappedParameters::open(&path).unwrap();
        let from_file = PartitionSizes::of_layout(&mapped.layout);
        let from_params = PartitionSizes::of_params(&params);
        assert_eq!(from_file, from_params);
        assert_eq!(from_params.domain, 1 << 6);
        assert_eq!(from_params.h, (1 << 6) - 1);
        assert_eq!(from_params.l, params.l.len());
        assert!(from_params.a > 0 && from_params.b > 0);
        let shown = from_params.to_string();
        assert!(shown.contains("domain 64"), "{shown}");
    }
}
