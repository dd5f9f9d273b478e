//! Proving Filecoin proofs with cuzk: every partition of a proof is
//! synthesized and proved in one batch on the chosen backend, and the proofs
//! are concatenated exactly as filecoin-proofs writes them (192 bytes per
//! partition, partition order). Parameters are loaded once per circuit and
//! kept until evicted.

use crate::circuits::{CircuitId, ProofKind};
use crate::paramcache::{LoadedParameters, ParamCache};
use crate::{Error, Result};
use blstrs::Scalar;
use cuzk_core::{PhaseTimings, ProverBackend};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::{RegisteredPoStProof, RegisteredUpdateProof};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The circuits of one proof, one per partition, with the public inputs
/// filecoin-proofs' verifier derives for each partition.
pub(crate) struct ProofCircuits<C> {
    pub circuit: CircuitId,
    pub circuits: Vec<C>,
    pub public_inputs: Vec<Vec<Scalar>>,
}

static PARTITION_CIRCUITS_BUILT: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// Partition circuits built from proof requests in this process so far:
/// building them decodes and checks a request's vanilla proofs, and a test
/// counts that a daemon job's are built once.
pub fn partition_circuits_built() -> u64 {
    PARTITION_CIRCUITS_BUILT.load(std::sync::atomic::Ordering::Relaxed)
}

impl<C> ProofCircuits<C> {
    /// A proof's circuits as its builder made them (counted, see
    /// [`partition_circuits_built`]).
    pub(crate) fn built(
        circuit: CircuitId,
        circuits: Vec<C>,
        public_inputs: Vec<Vec<Scalar>>,
    ) -> Self {
        PARTITION_CIRCUITS_BUILT
            .fetch_add(circuits.len() as u64, std::sync::atomic::Ordering::Relaxed);
        ProofCircuits {
            circuit,
            circuits,
            public_inputs,
        }
    }
}

/// A finished proof.
#[derive(Clone, Debug)]
pub struct ProofOutput {
    pub circuit: CircuitId,
    /// The proof bytes, exactly as filecoin-proofs returns them.
    pub proof: Vec<u8>,
    pub partitions: usize,
    /// Building the circuits from the vanilla proofs.
    pub circuit_build: Duration,
    /// Loading parameters (zero when they were already loaded).
    pub param_load: Duration,
    /// Synthesis and the backend's phases.
    pub timings: PhaseTimings,
    /// Verifying the proofs before returning them (zero when disabled).
    pub self_check: Duration,
}

/// One proof request, in the forms Lotus and Curio hand them over.
#[derive(Clone, Debug)]
pub enum ProofRequest {
    /// PoRep commit phase 2 from a commit phase 1 output.
    PoRepC2(Box<SealCommitPhase1Output>),
    WinningPost {
        registered_proof: RegisteredPoStProof,
        randomness: [u8; 32],
        prover_id: [u8; 32],
        /// bincode `FallbackPoStSectorProof`s, one per challenged sector.
        vanilla_proofs: Vec<Vec<u8>>,
    },
    WindowPost {
        registered_proof: RegisteredPoStProof,
        randomness: [u8; 32],
        prover_id: [u8; 32],
        /// bincode `FallbackPoStSectorProof`s, one per sector.
        vanilla_proofs: Vec<Vec<u8>>,
        /// `Some(k)`: prove partition k only (the vanilla proofs are that
        /// partition's sectors), as `generate_single_window_post_with_vanilla`;
        /// `None`: all partitions, as `generate_window_post_with_vanilla`.
        partition: Option<usize>,
    },
    SnapDeals {
        registered_proof: RegisteredUpdateProof,
        /// bincode `PartitionProof`s, one per partition.
        vanilla_proofs: Vec<Vec<u8>>,
        comm_r_old: [u8; 32],
        comm_r_new: [u8; 32],
        comm_d_new: [u8; 32],
    },
}

impl ProofRequest {
    pub fn circuit(&self) -> CircuitId {
        match self {
            ProofRequest::PoRepC2(c1) => CircuitId::PoRep(c1.registered_proof),
            ProofRequest::WinningPost {
                registered_proof, ..
            }
            | ProofRequest::WindowPost {
                registered_proof, ..
            } => CircuitId::PoSt(*registered_proof),
            ProofRequest::SnapDeals {
                registered_proof, ..
            } => CircuitId::SnapDeals(*registered_proof),
        }
    }

    /// A WinningPoSt (`kind` [`ProofKind::WinningPost`]) or WindowPoSt
    /// request. `partition` is WindowPoSt's alone: a WinningPoSt request
    /// that names one is refused.
    pub fn post(
        kind: ProofKind,
        registered_proof: RegisteredPoStProof,
        randomness: [u8; 32],
        prover_id: [u8; 32],
        vanilla_proofs: Vec<Vec<u8>>,
        partition: Option<usize>,
    ) -> Result<Self> {
        match kind {
            ProofKind::WinningPost if partition.is_some() => {
                Err(Error::PartitionNotApplicable { kind })
            }
            ProofKind::WinningPost => Ok(ProofRequest::WinningPost {
                registered_proof,
                randomness,
                prover_id,
                vanilla_proofs,
            }),
            ProofKind::WindowPost => Ok(ProofRequest::WindowPost {
                registered_proof,
                randomness,
                prover_id,
                vanilla_proofs,
                partition,
            }),
            other => Err(Error::WrongProofKind {
                given: other.name().into(),
                expected: vec![ProofKind::WinningPost, ProofKind::WindowPost],
            }),
        }
    }

    /// The arguments of a SnapDeals request; `None` for the other kinds.
    pub(crate) fn snap_args(&self) -> Option<crate::snap::SnapArgs<'_>> {
        match self {
            ProofRequest::SnapDeals {
                registered_proof,
                vanilla_proofs,
                comm_r_old,
                comm_r_new,
                comm_d_new,
            } => Some(crate::snap::SnapArgs {
                registered: *registered_proof,
                vanilla_proofs,
                comm_r_old: *comm_r_old,
                comm_r_new: *comm_r_new,
                comm_d_new: *comm_d_new,
            }),
            _ => None,
        }
    }

    /// The arguments of a WinningPoSt or WindowPoSt request; `None` for
    /// the other kinds.
    pub(crate) fn post_args(&self) -> Option<crate::post::PostArgs<'_>> {
        use filecoin_proofs::PoStType;
        let (registered, randomness, prover_id, vanilla_proofs, partition, expected) = match self {
            ProofRequest::WinningPost {
                registered_proof,
                randomness,
                prover_id,
                vanilla_proofs,
            } => (
                registered_proof,
                randomness,
                prover_id,
                vanilla_proofs,
                None,
                PoStType::Winning,
            ),
            ProofRequest::WindowPost {
                registered_proof,
                randomness,
                prover_id,
                vanilla_proofs,
                partition,
            } => (
                registered_proof,
                randomness,
                prover_id,
                vanilla_proofs,
                *partition,
                PoStType::Window,
            ),
            _ => return None,
        };
        Some(crate::post::PostArgs {
            registered: *registered,
            randomness,
            prover_id: *prover_id,
            vanilla_proofs,
            partition,
            expected,
        })
    }
}

pub struct FilecoinProver {
    cache: ParamCache,
    backend: Arc<dyn ProverBackend>,
    loaded: Mutex<HashMap<CircuitId, Arc<LoadedParameters>>>,
    self_check: bool,
    synthesis: crate::SynthesisMode,
    compiled_files: bool,
    partition_group: Option<usize>,
}

impl FilecoinProver {
    /// Proofs are verified before they are returned (as filecoin-proofs'
    /// `seal_commit_phase2` does); see [`FilecoinProver::with_self_check`].
    pub fn new(cache: ParamCache, backend: Arc<dyn ProverBackend>) -> Self {
        FilecoinProver {
            cache,
            backend,
            loaded: Mutex::new(HashMap::new()),
            self_check: true,
            synthesis: crate::SynthesisMode::default(),
            compiled_files: true,
            partition_group: None,
        }
    }

    /// How partitions are synthesized (compiled by default: each circuit's
    /// constraints compiled once, kept beside the parameters as
    /// `cuzk-<identifier>.r1cs`).
    pub fn with_synthesis(mut self, mode: crate::SynthesisMode) -> Self {
        self.synthesis = mode;
        self
    }

    /// Whether compiled systems are kept as files in the parameter
    /// directory (the default) or in this process's memory only (a 32 GiB
    /// PoRep's is gigabytes, on a disk that holds its 47 GiB parameters).
    pub fn with_compiled_files(mut self, on: bool) -> Self {
        self.compiled_files = on;
        self
    }

    /// Synthesize and prove at most `k` partitions at a time (`None`: all
    /// of a proof's at once, the default). Fewer hold fewer witnesses in
    /// memory, at the cost of the GPU waiting for each group's synthesis.
    pub fn with_partition_group(mut self, k: Option<usize>) -> Self {
        self.partition_group = k;
        self
    }

    pub fn synthesis(&self) -> crate::SynthesisMode {
        self.synthesis
    }

    /// Whether to verify each proof (a few pairings per partition) before
    /// returning it.
    pub fn with_self_check(mut self, on: bool) -> Self {
        self.self_check = on;
        self
    }

    pub fn cache(&self) -> &ParamCache {
        &self.cache
    }

    pub fn backend(&self) -> &dyn ProverBackend {
        self.backend.as_ref()
    }

    fn loaded_map(&self) -> std::sync::MutexGuard<'_, HashMap<CircuitId, Arc<LoadedParameters>>> {
        // A panic while holding the lock cannot leave the map half-updated
        // (inserts and removes are single calls), so a poisoned lock is
        // still usable.
        self.loaded.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The circuit's parameters, loading them on first use. Returns whether
    /// they were loaded by this call.
    pub fn parameters(&self, circuit: CircuitId) -> Result<(Arc<LoadedParameters>, bool)> {
        if let Some(p) = self.loaded_map().get(&circuit) {
            return Ok((p.clone(), false));
        }
        // Loaded outside the lock: loading a large circuit takes seconds and
        // must not stall requests for other circuits. Two concurrent first
        // requests may both load; the second insert wins, which is harmless.
        // A backend that keeps them resident uploads them from the mapped
        // file (decoding as it goes); others read decoded vectors.
        let mapped = self.backend.keeps_parameters_resident();
        let p = Arc::new(self.cache.load_as(circuit, mapped)?);
        self.loaded_map().insert(circuit, p.clone());
        Ok((p, true))
    }

    /// Drop a circuit's parameters from memory; true if they were loaded.
    pub fn evict(&self, circuit: CircuitId) -> bool {
        self.loaded_map().remove(&circuit).is_some()
    }

    /// The circuits whose parameters are in memory, with their size in bytes
    /// (uncompressed points).
    pub fn loaded(&self) -> Vec<(CircuitId, u64)> {
        self.loaded_map()
            .iter()
            .map(|(id, p)| (*id, params_bytes(&p.params)))
            .collect()
    }

    pub fn prove(&self, request: &ProofRequest) -> Result<ProofOutput> {
        match request {
            ProofRequest::PoRepC2(c1) => crate::porep::prove_c2(self, c1),
            ProofRequest::WinningPost { .. } | ProofRequest::WindowPost { .. } => {
                let args = request
                    .post_args()
                    .expect("a PoSt request has PoSt arguments");
                crate::post::prove(self, &args)
            }
            ProofRequest::SnapDeals { .. } => {
                let args = request
                    .snap_args()
                    .expect("a SnapDeals request has SnapDeals arguments");
                crate::snap::prove(self, &args)
            }
        }
    }

    /// Prove all partitions in one batch and serialize as filecoin-proofs.
    pub(crate) fn prove_circuits<C>(
        &self,
        pc: ProofCircuits<C>,
        circuit_build: Duration,
    ) -> Result<ProofOutput>
    where
        C: crate::compiled::PartitionCircuit,
    {
        let ProofCircuits {
            circuit,
            circuits,
            public_inputs,
        } = pc;
        let partitions = circuits.len();
        if partitions == 0 || partitions != public_inputs.len() {
            return Err(Error::WrongCount {
                what: crate::Counted::Circuits {
                    circuit: circuit.to_string(),
                },
                expected: match public_inputs.len() {
                    0 => crate::Expected::AtLeast(1),
                    n => crate::Expected::Exactly(n),
                },
                got: partitions,
            });
        }
        let start = Instant::now();
        let (loaded, fresh) = self.parameters(circuit)?;
        let param_load = if fresh {
            start.elapsed()
        } else {
            Duration::ZERO
        };

        let mut rng = rand::rngs::OsRng;
        let (proofs, timings) = self.synthesize_and_prove(circuit, circuits, &loaded, &mut rng)?;

        let mut self_check = Duration::ZERO;
        if self.self_check {
            let t = Instant::now();
            let ok = cuzk_core::verifier::verify_proofs_batch(
                &loaded.pvk,
                &proofs,
                &public_inputs,
                &mut rng,
            )?;
            self_check = t.elapsed();
            if !ok {
                return Err(Error::SelfCheckFailed {
                    circuit: circuit.to_string(),
                    backend: self.backend.name(),
                });
            }
        }

        let mut proof = Vec::with_capacity(partitions * cuzk_core::proof::PROOF_BYTES);
        for p in &proofs {
            proof.extend_from_slice(&p.to_bytes());
        }
        Ok(ProofOutput {
            circuit,
            proof,
            partitions,
            circuit_build,
            param_load,
            timings,
            self_check,
        })
    }

    /// Synthesize and prove a proof's partitions as a pipeline: a
    /// synthesis thread makes witnesses on every core while this thread
    /// proves each one as soon as it is ready, so the GPU works while the
    /// next partitions are synthesized (one after the other, a 32 GiB
    /// PoRep took synthesis + GPU: 38.8 + 22.0 s). At most `group`
    /// partitions (the partition group; all by default) are held at once,
    /// synthesizing, waiting or being proved, which bounds the witnesses in
    /// memory; fewer of them are synthesized at once (enough parts to keep
    /// every core busy), so that they finish one after another and the
    /// last one's GPU work is all that trails the synthesis. Proofs come
    /// back in partition order; the first error stops new partitions,
    /// lets those in flight finish and is returned.
    fn synthesize_and_prove<C>(
        &self,
        circuit: CircuitId,
        circuits: Vec<C>,
        loaded: &LoadedParameters,
        rng: &mut rand::rngs::OsRng,
    ) -> Result<(Vec<cuzk_core::Proof>, PhaseTimings)>
    where
        C: crate::compiled::PartitionCircuit,
    {
        let partitions = circuits.len();
        let group = self
            .partition_group
            .unwrap_or(partitions)
            .clamp(1, partitions.max(1));
        let threads = rayon::current_num_threads().max(1);
        let parts = circuits.first().map_or(1, |c| c.parallel_parts().max(1));
        let synth_at_once = (3 * threads).div_ceil(parts).max(2).min(group);
        let dir = self.compiled_files.then(|| self.cache.dir());
        let mode = self.synthesis;
        let zero_one = self.backend.wants_zero_one();
        if mode == crate::SynthesisMode::Compiled {
            if let Some(first) = circuits.first() {
                // Compiled once, before any partition waits on it.
                crate::compiled::compiled_for(circuit, first, dir)?;
            }
        }

        let held = Slots::new(group);
        let synthesizing = Slots::new(synth_at_once);
        let start = Instant::now();
        let (tx, rx) =
            std::sync::mpsc::channel::<(usize, Result<Vec<cuzk_core::prover::Synthesized>>)>();
        let mut proofs: Vec<Option<cuzk_core::Proof>> = (0..partitions).map(|_| None).collect();
        let mut timings = PhaseTimings::default();
        let mut first_error: Option<Error> = None;
        let mut synthesis_end = start;
        std::thread::scope(|ts| {
            let (held, synthesizing) = (&held, &synthesizing);
            ts.spawn(move || {
                rayon::in_place_scope(|s| {
                    for (i, c) in circuits.into_iter().enumerate() {
                        if !held.acquire() || !synthesizing.acquire() {
                            break;
                        }
                        let tx = tx.clone();
                        s.spawn(move |_| {
                            let mut r =
                                crate::compiled::synthesize_parts(circuit, vec![c], mode, dir);
                            // A backend that sends witnesses in their 0/1
                            // form gets it made here, beside synthesis.
                            if let (Ok(parts), true) = (&mut r, zero_one) {
                                parts
                                    .iter_mut()
                                    .for_each(cuzk_core::prover::Synthesized::prepare_zero_one);
                            }
                            synthesizing.release();
                            // The receiver is gone only once proving has
                            // stopped; the witness is dropped then.
                            let _ = tx.send((i, r));
                        });
                    }
                });
            });
            for (i, r) in rx {
                synthesis_end = Instant::now();
                let outcome = match r {
                    Ok(parts) if first_error.is_none() => cuzk_core::prover::prove_synthesized(
                        self.backend.as_ref(),
                        &loaded.params,
                        parts,
                        rng,
                    )
                    .map_err(Error::from),
                    Ok(_) => Ok((Vec::new(), PhaseTimings::default())),
                    Err(e) => Err(e),
                };
                held.release();
                match outcome {
                    Ok((mut p, t)) => {
                        if let Some(p) = p.pop() {
                            proofs[i] = Some(p);
                        }
                        timings.add(&t);
                    }
                    Err(e) => {
                        if first_error.is_none() {
                            first_error = Some(e);
                        }
                        held.close();
                        synthesizing.close();
                    }
                }
            }
        });
        if let Some(e) = first_error {
            return Err(e);
        }
        let proofs: Vec<cuzk_core::Proof> = proofs
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                p.ok_or_else(|| Error::internal(format!("{circuit}: partition {i} was not proved")))
            })
            .collect::<Result<_>>()?;
        // Synthesis: until the last witness was ready (it overlaps the
        // GPU); total: the whole pipeline.
        timings.synthesis = synthesis_end.duration_since(start);
        timings.total = start.elapsed();
        Ok((proofs, timings))
    }
}

/// A counting semaphore that can be closed: `acquire` waits for a free
/// slot and returns false once the semaphore is closed.
struct Slots {
    state: Mutex<(usize, bool)>,
    freed: std::sync::Condvar,
}

impl Slots {
    fn new(n: usize) -> Self {
        Slots {
            state: Mutex::new((n.max(1), false)),
            freed: std::sync::Condvar::new(),
        }
    }

    fn acquire(&self) -> bool {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if g.1 {
                return false;
            }
            if g.0 > 0 {
                g.0 -= 1;
                return true;
            }
            g = self.freed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn release(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0 += 1;
        self.freed.notify_one();
    }

    fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.freed.notify_all();
    }
}

/// Host bytes of decoded points (a vector left in its mapped file counts
/// nothing: its pages are page cache).
fn params_bytes(p: &cuzk_core::Parameters) -> u64 {
    use cuzk_core::params::{G1_UNCOMPRESSED, G2_UNCOMPRESSED};
    let held = |len: usize, decoded: bool| if decoded { len } else { 0 };
    let g1 = held(p.h.len(), p.h.in_memory().is_some())
        + held(p.l.len(), p.l.in_memory().is_some())
        + held(p.a.len(), p.a.in_memory().is_some())
        + held(p.b_g1.len(), p.b_g1.in_memory().is_some())
        + p.vk.ic.len();
    let g2 = held(p.b_g2.len(), p.b_g2.in_memory().is_some());
    (g1 * G1_UNCOMPRESSED + g2 * G2_UNCOMPRESSED) as u64
}

/// Run a filecoin-proofs step that may panic on malformed input (it indexes
/// and `expect`s on vanilla-proof contents) and turn a panic into an error,
/// so that one bad request cannot take the daemon down.
pub(crate) fn guarded<T>(step: &str, f: impl FnOnce() -> anyhow::Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(|e| Error::filecoin(step, e)),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            Err(Error::filecoin(step, anyhow::anyhow!("panicked: {msg}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::{ConstraintSystem, SynthesisError};
    use filecoin_proofs::PoStType;

    /// A toy partition: knows x with x^3 + x = y (y public); `fail` makes
    /// its synthesis fail.
    #[derive(Clone)]
    struct Toy {
        x: u64,
        fail: bool,
    }

    impl Toy {
        fn y(x: u64) -> Scalar {
            let x = Scalar::from(x);
            x * x * x + x
        }
    }

    impl bellpepper_core::Circuit<Scalar> for Toy {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> std::result::Result<(), SynthesisError> {
            if self.fail {
                return Err(SynthesisError::AssignmentMissing);
            }
            let x = Scalar::from(self.x);
            let xv = cs.alloc(|| "x", || Ok(x))?;
            let x2 = cs.alloc(|| "x2", || Ok(x * x))?;
            let x3 = cs.alloc(|| "x3", || Ok(x * x * x))?;
            let y = cs.alloc_input(|| "y", || Ok(Toy::y(self.x)))?;
            cs.enforce(|| "x2", |lc| lc + xv, |lc| lc + xv, |lc| lc + x2);
            cs.enforce(|| "x3", |lc| lc + x2, |lc| lc + xv, |lc| lc + x3);
            cs.enforce(|| "y", |lc| lc + x3 + xv, |lc| lc + CS::one(), |lc| lc + y);
            Ok(())
        }
    }

    impl crate::compiled::PartitionCircuit for Toy {
        fn shape_sample(&self) -> Self {
            self.clone()
        }

        fn clone_circuit(&self) -> Self {
            self.clone()
        }
    }

    fn toy_prover(dir: &std::path::Path, group: usize) -> (FilecoinProver, LoadedParameters) {
        let mut rng = rand::rngs::OsRng;
        let params =
            cuzk_core::generator::generate_random_parameters(Toy { x: 1, fail: false }, &mut rng)
                .unwrap();
        let pvk = cuzk_core::verifier::prepare_verifying_key(&params.vk);
        let circuit =
            CircuitId::PoRep(filecoin_proofs_api::RegisteredSealProof::StackedDrg2KiBV1_1);
        let loaded = LoadedParameters {
            circuit,
            files: crate::paramcache::CircuitFiles {
                circuit,
                identifier: "toy".into(),
                params: dir.join("toy.params"),
                vk: dir.join("toy.vk"),
                meta: dir.join("toy.meta"),
            },
            params,
            pvk,
            load_time: Duration::ZERO,
        };
        let prover = FilecoinProver::new(ParamCache::new(dir), Arc::new(cuzk_core::CpuBackend))
            .with_synthesis(crate::SynthesisMode::Full)
            .with_compiled_files(false)
            .with_partition_group(Some(group));
        (prover, loaded)
    }

    #[test]
    fn the_pipeline_returns_every_partitions_proof_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for group in [1, 2, 3, 7] {
            let (prover, loaded) = toy_prover(dir.path(), group);
            let xs: Vec<u64> = (0..7).map(|i| 3 + 5 * i).collect();
            let circuits = xs.iter().map(|&x| Toy { x, fail: false }).collect();
            let (proofs, t) = prover
                .synthesize_and_prove(loaded.circuit, circuits, &loaded, &mut rand::rngs::OsRng)
                .unwrap();
            assert_eq!(proofs.len(), xs.len());
            for (i, (p, &x)) in proofs.iter().zip(&xs).enumerate() {
                assert!(
                    cuzk_core::verifier::verify_proof(&loaded.pvk, p, &[Toy::y(x)]).unwrap(),
                    "group {group}: partition {i}'s proof"
                );
                // Against the next partition's input it must fail: the
                // proofs are in partition order, not in finishing order.
                let other = Toy::y(xs[(i + 1) % xs.len()]);
                assert!(!cuzk_core::verifier::verify_proof(&loaded.pvk, p, &[other]).unwrap());
            }
            assert!(t.total >= t.synthesis);
        }
    }

    #[test]
    fn a_partition_that_fails_synthesis_fails_the_proof_without_hanging() {
        let dir = tempfile::tempdir().unwrap();
        for group in [1, 2, 6] {
            let (prover, loaded) = toy_prover(dir.path(), group);
            let circuits = (0..6)
                .map(|i| Toy {
                    x: i + 2,
                    fail: i == 3,
                })
                .collect();
            let r = prover.synthesize_and_prove(
                loaded.circuit,
                circuits,
                &loaded,
                &mut rand::rngs::OsRng,
            );
            assert!(
                r.is_err(),
                "group {group}: a failed partition must fail the proof"
            );
        }
    }

    fn post(kind: ProofKind, r: RegisteredPoStProof, part: Option<usize>) -> Result<ProofRequest> {
        ProofRequest::post(kind, r, [1; 32], [2; 32], vec![vec![3]], part)
    }

    #[test]
    fn post_requests_carry_their_kind_and_partition() {
        let winning = RegisteredPoStProof::StackedDrgWinning2KiBV1;
        let window = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;

        let w = post(ProofKind::WinningPost, winning, None).unwrap();
        assert!(matches!(w, ProofRequest::WinningPost { .. }));
        let a = w.post_args().unwrap();
        assert_eq!((a.expected, a.partition), (PoStType::Winning, None));
        assert_eq!((a.randomness, a.prover_id), (&[1; 32], [2; 32]));

        let d = post(ProofKind::WindowPost, window, Some(3)).unwrap();
        let a = d.post_args().unwrap();
        assert_eq!((a.expected, a.partition), (PoStType::Window, Some(3)));
        assert_eq!(a.vanilla_proofs, &[vec![3]]);

        // WinningPoSt has no partitions to choose; PoRep is not a PoSt kind.
        assert!(matches!(
            post(ProofKind::WinningPost, winning, Some(0)),
            Err(Error::PartitionNotApplicable {
                kind: ProofKind::WinningPost
            })
        ));
        assert!(matches!(
            post(ProofKind::Porep, window, None),
            Err(Error::WrongProofKind { .. })
        ));
    }

    #[test]
    fn a_post_request_of_the_wrong_type_is_refused_before_proving() {
        // A WindowPoSt registered proof sent as WinningPoSt: refused by name,
        // without touching parameters or the backend.
        let req = post(
            ProofKind::WinningPost,
            RegisteredPoStProof::StackedDrgWindow2KiBV1_2,
            None,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let prover =
            FilecoinProver::new(ParamCache::new(dir.path()), Arc::new(cuzk_core::CpuBackend));
        match prover.prove(&req) {
            Err(Error::WrongProofKind { expected, .. }) => {
                assert_eq!(expected, [ProofKind::WinningPost])
            }
            other => panic!("expected WrongProofKind, got {other:?}"),
        }
    }
}
