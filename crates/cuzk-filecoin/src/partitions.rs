//! Per-partition access to a request's circuits, for the daemon, which
//! schedules partitions (not whole proofs) and batches partitions of several
//! requests of one circuit: count a request's partitions (which builds, and
//! so fully checks, its circuits) and synthesize chosen partitions.

use crate::circuits::{with_tree_shape, FilTree};
use crate::compiled::{PartitionCircuit, SynthesisMode};
use crate::prover::{ProofCircuits, ProofRequest};
use crate::{porep, post, snap, CircuitId, Error, Result};
use cuzk_core::prover::Synthesized;
use cuzk_core::{ProvingAssignment, Scalar};
use rayon::prelude::*;
use std::path::Path;

/// The partitions of a request; errors for any request filecoin-proofs
/// would refuse.
pub fn partition_count(req: &ProofRequest) -> Result<usize> {
    Ok(verifier_inputs(req)?.len())
}

/// Each partition's public inputs as filecoin-proofs' verifier derives
/// them from the request (one entry per partition); errors for any request
/// filecoin-proofs would refuse.
pub fn verifier_inputs(req: &ProofRequest) -> Result<Vec<Vec<Scalar>>> {
    let size = req.circuit().sector_size();
    with_tree_shape!(size, inputs_typed, req)
}

fn inputs_typed<Tree: FilTree>(req: &ProofRequest) -> Result<Vec<Vec<Scalar>>> {
    Ok(match req {
        ProofRequest::PoRepC2(c1) => porep::c2_circuits::<Tree>(c1)?.public_inputs,
        ProofRequest::WinningPost { .. } | ProofRequest::WindowPost { .. } => {
            post::post_circuits::<Tree>(&post_args(req)?)?.public_inputs
        }
        ProofRequest::SnapDeals { .. } => {
            snap::snap_circuits::<Tree>(&snap_args(req)?)?.public_inputs
        }
    })
}

/// Synthesize partition `k` of each `(request, k)`, in order. All requests
/// must be of one circuit (they share parameters and are proved together).
/// Assignments (a/b/c on the host's cores); see [`synthesize_partition_parts`]
/// for what a backend that forms a/b/c itself takes.
pub fn synthesize_partitions(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
) -> Result<Vec<ProvingAssignment>> {
    synthesize_partitions_in(parts, mode, None)
}

/// [`synthesize_partitions`] with the compiled system kept in
/// `compiled_dir` (see [`synthesize_partition_parts_in`]).
pub fn synthesize_partitions_in(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
    compiled_dir: Option<&Path>,
) -> Result<Vec<ProvingAssignment>> {
    synthesize_partition_parts_in(parts, mode, compiled_dir)?
        .into_par_iter()
        .map(|s| match s {
            Synthesized::Assignment(pa) => Ok(pa),
            Synthesized::Witness { compiled, witness } => Ok(compiled.assign(witness)?),
        })
        .collect()
}

/// [`synthesize_partitions`] as the backend's compiled path takes them: in
/// compiled mode each partition's witness with its compiled system (the
/// CUDA backend forms a/b/c on the GPU), in full mode the assignments.
pub fn synthesize_partition_parts(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
) -> Result<Vec<Synthesized>> {
    synthesize_partition_parts_in(parts, mode, None)
}

/// [`synthesize_partition_parts`], reading the circuit's compiled system
/// from its file in `compiled_dir` (`cuzk-<circuit id>.r1cs`, see
/// [`crate::compiled::compiled_path`]) or, on the process's first use of
/// the circuit, compiling it and writing that file there, so that the next
/// process maps it instead of compiling (a 32 GiB PoRep's compile is about
/// 100 s on one core; opening its 10 GB file a few seconds). With `None`
/// the system is compiled in memory once per process.
pub fn synthesize_partition_parts_in(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
    compiled_dir: Option<&Path>,
) -> Result<Vec<Synthesized>> {
    let Some((first, _)) = parts.first() else {
        return Ok(Vec::new());
    };
    let circuit = first.circuit();
    let same = |c: CircuitId| -> bool {
        // Registered proofs that share a circuit (PoRep V1/V1_1, WindowPoSt
        // V1/V1_2) may be batched; compare what the circuit depends on.
        c.kind() == circuit.kind() && c.sector_size() == circuit.sector_size()
    };
    if let Some((other, _)) = parts.iter().find(|(r, _)| !same(r.circuit())) {
        return Err(Error::InvalidInput(format!(
            "cannot synthesize {} with {} in one batch",
            other.circuit(),
            circuit
        )));
    }
    let size = circuit.sector_size();
    match first {
        ProofRequest::PoRepC2(_) => {
            with_tree_shape!(size, synth_porep, parts, mode, compiled_dir)
        }
        ProofRequest::WinningPost { .. } | ProofRequest::WindowPost { .. } => {
            with_tree_shape!(size, synth_post, parts, mode, compiled_dir)
        }
        ProofRequest::SnapDeals { .. } => {
            with_tree_shape!(size, synth_snap, parts, mode, compiled_dir)
        }
    }
}

fn mixed() -> Error {
    Error::InvalidInput("requests of different proof kinds in one batch".into())
}

fn synth_porep<Tree: FilTree>(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
    dir: Option<&Path>,
) -> Result<Vec<Synthesized>> {
    synth_typed::<Tree, _>(parts, mode, dir, |r| match r {
        ProofRequest::PoRepC2(c1) => porep::c2_circuits::<Tree>(c1),
        _ => Err(mixed()),
    })
}

fn synth_post<Tree: FilTree>(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
    dir: Option<&Path>,
) -> Result<Vec<Synthesized>> {
    synth_typed::<Tree, _>(parts, mode, dir, |r| {
        post::post_circuits::<Tree>(&post_args(r)?)
    })
}

fn synth_snap<Tree: FilTree>(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
    dir: Option<&Path>,
) -> Result<Vec<Synthesized>> {
    synth_typed::<Tree, _>(parts, mode, dir, |r| {
        snap::snap_circuits::<Tree>(&snap_args(r)?)
    })
}

/// Build each distinct request's circuits once, take the wanted
/// partitions, synthesize them together.
fn synth_typed<Tree: FilTree, C>(
    parts: &[(&ProofRequest, usize)],
    mode: SynthesisMode,
    dir: Option<&Path>,
    build: impl Fn(&ProofRequest) -> Result<ProofCircuits<C>>,
) -> Result<Vec<Synthesized>>
where
    C: PartitionCircuit,
{
    let mut built: Vec<(*const ProofRequest, Vec<Option<C>>)> = Vec::new();
    let mut circuits = Vec::with_capacity(parts.len());
    for (req, k) in parts {
        let ptr: *const ProofRequest = *req;
        let slot = match built.iter().position(|(p, _)| *p == ptr) {
            Some(i) => i,
            None => {
                let pc = build(req)?;
                built.push((ptr, pc.circuits.into_iter().map(Some).collect()));
                built.len() - 1
            }
        };
        let available = built[slot].1.len();
        let circuit = built[slot]
            .1
            .get_mut(*k)
            .and_then(Option::take)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "{}: partition {k} requested twice or out of range (it has {available})",
                    req.circuit()
                ))
            })?;
        circuits.push(circuit);
    }
    let Some((first, _)) = parts.first() else {
        return Ok(Vec::new());
    };
    crate::compiled::synthesize_parts(first.circuit(), circuits, mode, dir)
}

fn post_args(req: &ProofRequest) -> Result<post::PostArgs<'_>> {
    req.post_args().ok_or_else(mixed)
}

fn snap_args(req: &ProofRequest) -> Result<snap::SnapArgs<'_>> {
    req.snap_args().ok_or_else(mixed)
}
