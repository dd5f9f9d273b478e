//! Per-partition access to a request's circuits, for the daemon, which
//! schedules partitions (not whole proofs) and batches partitions of several
//! requests of one circuit. A request is prepared once ([`PreparedProof`]:
//! its circuits built, which fully checks it, and each partition's public
//! inputs derived); partitions are then synthesized from the prepared
//! circuits, never from the request again.

use crate::circuits::{with_tree_shape, FilTree};
use crate::compiled::{PartitionCircuit, SynthesisMode};
use crate::prover::{ProofCircuits, ProofRequest};
use crate::{porep, post, snap, CircuitId, Error, Result};
use cuzk_core::prover::Synthesized;
use cuzk_core::{ProvingAssignment, Scalar};
use rayon::prelude::*;
use std::any::Any;
use std::path::Path;

/// A proof request prepared for proving: every partition's circuit built
/// (with the checks filecoin-proofs makes, so a request it would refuse
/// fails here) and the public inputs its verifier derives for each.
///
/// The daemon prepares a job's request once, at submission, keeps this
/// instead of the request (shared by the job's partitions, which are
/// synthesized on different threads), and synthesizes each partition from
/// a copy of its circuit ([`synthesize_prepared`]): a circuit is consumed
/// by synthesis, and the kept one serves a partition that must be
/// synthesized again (after its GPU was lost).
///
/// Why every partition's circuit is kept for the job's life, rather than
/// the request with each circuit built just before its synthesis: nothing
/// is built twice, and the circuits cost about what the decoded request
/// they replace did (less for PoRep, somewhat more for PoSt), which is
/// little beside a partition in flight. PoRep, measured with
/// `examples/prepared_bytes.rs` (live heap bytes given back on drop,
/// synthetic C1 outputs, 2026-12-03):
///
/// | PoRep sector | C1 JSON | decoded C1 | prepared (10 partitions) | public inputs |
/// | --- | --- | --- | --- | --- |
/// | 32 GiB | 38.7 MB | 16.7 MB | 12.0 MB (1.2 MB each) | 0.1 MB |
/// | 64 GiB | 39.2 MB | 17.4 MB | 12.2 MB (1.2 MB each) | 0.1 MB |
///
/// (the decoded C1's vectors keep the slack of growing while parsed; the
/// circuits' copies are exact). The daemon reserves 12.9 GB of host memory
/// for each 32 GiB partition in flight, so a whole job's circuits are a
/// tenth of a percent of one partition's. PoSt and SnapDeals circuits hold
/// their Merkle paths as `Option<Scalar>` (40 bytes a node, against the 32
/// of their bincode vanilla proofs); estimated from their shapes, a
/// 32 GiB WindowPoSt partition (2,349 sectors, 10 challenges each) about
/// 75 MB (its vanilla proofs about 58 MB), the largest; a 32 GiB SnapDeals
/// partition (86 challenges) under 1 MB. Copying a partition's circuit for
/// its synthesis costs a memory copy of that size, against seconds of
/// synthesis.
pub struct PreparedProof {
    circuit: CircuitId,
    public_inputs: Vec<Vec<Scalar>>,
    circuits: Box<dyn PartitionSet>,
}

impl PreparedProof {
    /// Build the request's circuits; errors for any request filecoin-proofs
    /// would refuse.
    pub fn new(req: &ProofRequest) -> Result<Self> {
        let size = req.circuit().sector_size();
        with_tree_shape!(size, prepare_typed, req)
    }

    /// The circuit (proof type and sector size) the request is for.
    pub fn circuit(&self) -> CircuitId {
        self.circuit
    }

    /// How many partitions the proof has.
    pub fn partitions(&self) -> usize {
        self.public_inputs.len()
    }

    /// Each partition's public inputs as filecoin-proofs' verifier derives
    /// them from the request (one entry per partition).
    pub fn public_inputs(&self) -> &[Vec<Scalar>] {
        &self.public_inputs
    }

    fn from_built<C: PartitionCircuit + 'static>(pc: ProofCircuits<C>) -> Self {
        PreparedProof {
            circuit: pc.circuit,
            public_inputs: pc.public_inputs,
            circuits: Box::new(Built(pc.circuits)),
        }
    }
}

impl std::fmt::Debug for PreparedProof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedProof")
            .field("circuit", &self.circuit)
            .field("partitions", &self.partitions())
            .finish_non_exhaustive()
    }
}

fn prepare_typed<Tree: FilTree>(req: &ProofRequest) -> Result<PreparedProof> {
    Ok(match req {
        ProofRequest::PoRepC2(c1) => PreparedProof::from_built(porep::c2_circuits::<Tree>(c1)?),
        ProofRequest::WinningPost { .. } | ProofRequest::WindowPost { .. } => {
            PreparedProof::from_built(post::post_circuits::<Tree>(&post_args(req)?)?)
        }
        ProofRequest::SnapDeals { .. } => {
            PreparedProof::from_built(snap::snap_circuits::<Tree>(&snap_args(req)?)?)
        }
    })
}

/// A prepared proof's circuits, their type (proof kind and tree shape)
/// erased so that the daemon holds every kind's alike.
trait PartitionSet: Send + Sync + 'static {
    fn as_any(&self) -> &dyn Any;
    /// Synthesize `parts`, whose circuits must be of this set's type.
    fn synthesize(
        &self,
        parts: &[(&PreparedProof, usize)],
        mode: SynthesisMode,
        dir: Option<&Path>,
    ) -> Result<Vec<Synthesized>>;
}

struct Built<C>(Vec<C>);

impl<C: PartitionCircuit + 'static> PartitionSet for Built<C> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn synthesize(
        &self,
        parts: &[(&PreparedProof, usize)],
        mode: SynthesisMode,
        dir: Option<&Path>,
    ) -> Result<Vec<Synthesized>> {
        let Some((first, _)) = parts.first() else {
            return Ok(Vec::new());
        };
        let circuits =
            parts
                .iter()
                .map(|(p, k)| {
                    let built = p
                        .circuits
                        .as_any()
                        .downcast_ref::<Built<C>>()
                        .ok_or_else(mixed)?;
                    built.0.get(*k).map(C::clone_circuit).ok_or_else(|| {
                        Error::PartitionOutOfRange {
                            circuit: p.circuit.to_string(),
                            index: *k,
                            count: Some(built.0.len()),
                        }
                    })
                })
                .collect::<Result<Vec<C>>>()?;
        crate::compiled::synthesize_parts(first.circuit, circuits, mode, dir)
    }
}

/// The partitions of a request; errors for any request filecoin-proofs
/// would refuse.
pub fn partition_count(req: &ProofRequest) -> Result<usize> {
    Ok(PreparedProof::new(req)?.partitions())
}

/// Synthesize partition `k` of each `(prepared proof, k)`, in order, from
/// copies of the prepared circuits. All must be of one circuit (they share
/// parameters and are proved together). In compiled mode each
/// partition's witness with its compiled system (the CUDA backend forms
/// a/b/c on the GPU), in full mode the assignments. The compiled system is
/// read from its file in `compiled_dir` (`cuzk-<circuit id>.r1cs`, see
/// [`crate::compiled::compiled_path`]) or, on the process's first use of
/// the circuit, compiled and written there, so that the next process maps
/// it instead of compiling (a 32 GiB PoRep's compile is about 100 s on one
/// core; opening its 10 GB file a few seconds). With `None` the system is
/// compiled in memory once per process.
pub fn synthesize_prepared(
    parts: &[(&PreparedProof, usize)],
    mode: SynthesisMode,
    compiled_dir: Option<&Path>,
) -> Result<Vec<Synthesized>> {
    let Some((first, _)) = parts.first() else {
        return Ok(Vec::new());
    };
    let circuit = first.circuit;
    let same = |c: CircuitId| -> bool {
        // Registered proofs that share a circuit (PoRep V1/V1_1, WindowPoSt
        // V1/V1_2) may be batched; compare what the circuit depends on.
        c.kind() == circuit.kind() && c.sector_size() == circuit.sector_size()
    };
    if let Some((other, _)) = parts.iter().find(|(p, _)| !same(p.circuit)) {
        return Err(Error::MixedBatch {
            circuits: Some((circuit, other.circuit)),
        });
    }
    first.circuits.synthesize(parts, mode, compiled_dir)
}

/// [`synthesize_prepared`] as assignments (a/b/c on the host's cores).
pub fn synthesize_prepared_assignments(
    parts: &[(&PreparedProof, usize)],
    mode: SynthesisMode,
    compiled_dir: Option<&Path>,
) -> Result<Vec<ProvingAssignment>> {
    synthesize_prepared(parts, mode, compiled_dir)?
        .into_par_iter()
        .map(|s| match s {
            Synthesized::Assignment(pa) => Ok(pa),
            Synthesized::Witness { compiled, witness } => Ok(compiled.assign(witness)?),
        })
        .collect()
}

/// Synthesize partition `k` of each `(request, k)`, in order, each
/// distinct request prepared once. All requests must be of one circuit.
/// Assignments (a/b/c on the host's cores); see
/// [`synthesize_partition_parts`] for what a backend that forms a/b/c
/// itself takes. A caller that synthesizes a request's partitions apart
/// prepares it once itself and calls [`synthesize_prepared`].
pub fn synthesize_partitions(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
) -> Result<Vec<ProvingAssignment>> {
    synthesize_partitions_in(parts, mode, None)
}

/// [`synthesize_partitions`] with the compiled system kept in
/// `compiled_dir` (see [`synthesize_prepared`]).
pub fn synthesize_partitions_in(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
    compiled_dir: Option<&Path>,
) -> Result<Vec<ProvingAssignment>> {
    with_prepared(parts, |p| {
        synthesize_prepared_assignments(p, mode, compiled_dir)
    })
}

/// [`synthesize_partitions`] as the backend's compiled path takes them: in
/// compiled mode each partition's witness with its compiled system, in
/// full mode the assignments.
pub fn synthesize_partition_parts(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
) -> Result<Vec<Synthesized>> {
    synthesize_partition_parts_in(parts, mode, None)
}

/// [`synthesize_partition_parts`] with the compiled system kept in
/// `compiled_dir` (see [`synthesize_prepared`]).
pub fn synthesize_partition_parts_in(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
    compiled_dir: Option<&Path>,
) -> Result<Vec<Synthesized>> {
    with_prepared(parts, |p| synthesize_prepared(p, mode, compiled_dir))
}

/// `f` of `parts` with each distinct request (by address) prepared once.
fn with_prepared<T>(
    parts: &[(&ProofRequest, usize)],
    f: impl FnOnce(&[(&PreparedProof, usize)]) -> Result<T>,
) -> Result<T> {
    let mut prepared: Vec<(*const ProofRequest, PreparedProof)> = Vec::new();
    let mut slots = Vec::with_capacity(parts.len());
    for (req, k) in parts {
        let ptr: *const ProofRequest = *req;
        let slot = match prepared.iter().position(|(p, _)| *p == ptr) {
            Some(i) => i,
            None => {
                prepared.push((ptr, PreparedProof::new(req)?));
                prepared.len() - 1
            }
        };
        slots.push((slot, *k));
    }
    let refs: Vec<(&PreparedProof, usize)> = slots
        .into_iter()
        .map(|(slot, k)| (&prepared[slot].1, k))
        .collect();
    f(&refs)
}

fn mixed() -> Error {
    Error::MixedBatch { circuits: None }
}

fn post_args(req: &ProofRequest) -> Result<post::PostArgs<'_>> {
    req.post_args().ok_or_else(mixed)
}

fn snap_args(req: &ProofRequest) -> Result<snap::SnapArgs<'_>> {
    req.snap_args().ok_or_else(mixed)
}
