//! The circuit-kind registry: what a job's `kind` names, how its input is
//! decoded and synthesized, and where its parameters come from.
//!
//! Kinds are trait objects so that other crates (the Filecoin kinds) can
//! register theirs when building the daemon; this module ships the
//! `porep-like-<log>` family from `cuzk-core`.

use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::params::Parameters;
use cuzk_core::prover::Synthesized;
use cuzk_core::synthesis::ProvingAssignment;
use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A job's decoded input; only the kind that made it knows its type.
pub type JobInput = Arc<dyn Any + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum KindError {
    #[error("{0}")]
    Unknown(UnknownKind),
    /// A job's input that the kind cannot read. `source` is the kind's own
    /// error where it has one (a Filecoin kind's names the part of the
    /// request), else a sentence.
    #[error("kind {kind}: malformed input: {source}")]
    MalformedInput {
        kind: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The kind failed on an input it could read, for a reason of its own
    /// (a file it could not read or write, parameters that do not match,
    /// an internal fault): not the sender's to fix.
    #[error("kind {kind}: {source}")]
    Failed {
        kind: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    #[error("kind {kind}: {source}")]
    Core {
        kind: String,
        #[source]
        source: cuzk_core::Error,
    },
    /// The parameter file is missing and the kind's parameters are
    /// supplied, not generated (Filecoin's).
    #[error(
        "kind {kind}: parameter file {file} not found in {} (the parameter directory); \
         put it there",
        dir.display()
    )]
    NoGenerator {
        kind: String,
        file: String,
        dir: std::path::PathBuf,
    },
}

/// A kind the registry does not have, and those it has (so that the
/// refusal says what to ask for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKind {
    pub name: String,
    pub known: Vec<String>,
}

impl std::fmt::Display for UnknownKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown circuit kind {:?}", self.name)?;
        if self.known.is_empty() {
            write!(f, "; this daemon serves none")
        } else {
            write!(f, "; this daemon serves {}", self.known.join(", "))
        }
    }
}

/// Orders kind names as people read them: numbers by value, with a size
/// unit after them counted (`porep-like-6` before `porep-like-10`,
/// `porep-8m` before `porep-32g`), other text as text.
pub fn kind_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(s: &str) -> Vec<(String, u128)> {
        let mut out = Vec::new();
        let mut text = String::new();
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_digit() {
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let n: u128 = s[start..i].parse().unwrap_or(u128::MAX);
                let unit = match b.get(i).map(u8::to_ascii_lowercase) {
                    Some(b'k') => 1u128 << 10,
                    Some(b'm') => 1 << 20,
                    Some(b'g') => 1 << 30,
                    Some(b't') => 1 << 40,
                    _ => 1,
                };
                if unit > 1 {
                    i += 1;
                }
                out.push((std::mem::take(&mut text), n.saturating_mul(unit)));
            } else {
                text.push(b[i] as char);
                i += 1;
            }
        }
        out.push((text, 0));
        out
    }
    key(a).cmp(&key(b)).then_with(|| a.cmp(b))
}

/// One circuit kind. Partitions are the independent circuits one job's
/// proof consists of (Filecoin PoRep has ten); they are the boundary at
/// which a running job can be cancelled.
pub trait CircuitKind: Send + Sync + 'static {
    fn name(&self) -> &str;
    /// Identifies the parameter set; kinds sharing parameters share an id.
    /// Also the parameter file's stem: `<params_id>.params` in the
    /// parameter directory, so it must be a plain file name.
    fn params_id(&self) -> &str;
    /// Whether jobs of this kind may be proved together in one backend call.
    fn batchable(&self) -> bool;
    /// Decode and check a job's input at submission, so that a malformed
    /// request fails at once; returns the input and its partition count.
    fn decode_input(&self, input: &[u8]) -> Result<(JobInput, usize), KindError>;
    /// Synthesize the given (input, partition) pairs, all of this kind, in
    /// order. Called on a blocking thread.
    fn synthesize(&self, parts: &[(JobInput, usize)]) -> Result<Vec<ProvingAssignment>, KindError>;
    /// What the engine proves: [`CircuitKind::synthesize`]'s assignments
    /// by default; a kind with a compiled constraint system returns its
    /// partitions' witnesses instead, whose a/b/c the backend forms (on
    /// the GPU for the CUDA backend, from the witness uploaded once).
    fn synthesize_parts(&self, parts: &[(JobInput, usize)]) -> Result<Vec<Synthesized>, KindError> {
        Ok(self
            .synthesize(parts)?
            .into_iter()
            .map(Synthesized::Assignment)
            .collect())
    }
    /// Estimated peak host memory of one synthesized partition while it
    /// waits and is proved (a/b/c, assignments, the H computation).
    fn host_bytes_per_partition(&self) -> u64;
    /// Host memory the kind keeps for as long as the daemon serves it,
    /// shared by all its jobs (a compiled constraint system, porep-like's
    /// recorded shape), made on first use. The engine holds it against the
    /// host budget from its start, so that partitions in flight and these
    /// together stay within the budget.
    fn resident_host_bytes(&self) -> u64 {
        0
    }
    /// The public inputs a verifier derives for `partition` of `input`
    /// from the request alone; each proof is checked against them before
    /// its job completes. None: the synthesized circuit's own, which is
    /// right for circuits that take their public inputs as given (the
    /// porep-like kinds). A kind whose circuits compute public inputs from
    /// the witness (Filecoin's: challenges from the vanilla proofs' paths)
    /// must give them, or a witness that disagrees with the request (a C1
    /// output whose seed was changed) would prove and verify.
    fn verifier_inputs(
        &self,
        input: &JobInput,
        partition: usize,
    ) -> Option<Vec<cuzk_core::Scalar>> {
        let _ = (input, partition);
        None
    }
    /// Whether `generate_params` can make this kind's parameters; their
    /// files are then a cache the disk budget may delete.
    fn generates_params(&self) -> bool;
    /// Make parameters when the file is absent (random, development only);
    /// None for kinds whose parameters must be supplied.
    fn generate_params(&self) -> Option<Result<Parameters, KindError>>;
    /// [`Kind::generate_params`] with the fixed-base multiplications on
    /// `engine` (the daemon passes a GPU's where it has one). Kinds that
    /// generate with cuzk-core's generator override it; by default the
    /// engine is not used.
    fn generate_params_on(
        &self,
        engine: &dyn cuzk_core::generator::FixedBaseEngine,
    ) -> Option<Result<Parameters, KindError>> {
        let _ = engine;
        self.generate_params()
    }
}

/// The kinds a daemon serves, by name.
#[derive(Clone, Default)]
pub struct KindRegistry {
    kinds: BTreeMap<String, Arc<dyn CircuitKind>>,
}

impl KindRegistry {
    pub fn new() -> Self {
        Self::default()
    }
    /// Replaces a kind of the same name.
    pub fn register(&mut self, kind: Arc<dyn CircuitKind>) {
        self.kinds.insert(kind.name().to_owned(), kind);
    }
    pub fn get(&self, name: &str) -> Result<Arc<dyn CircuitKind>, KindError> {
        self.kinds.get(name).cloned().ok_or_else(|| {
            KindError::Unknown(UnknownKind {
                name: name.chars().take(64).collect(),
                known: self.names(),
            })
        })
    }
    /// The kinds' names in [`kind_order`] (sizes ascending).
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.kinds.keys().cloned().collect();
        v.sort_by(|a, b| kind_order(a, b));
        v
    }
}

/// `porep-like-<log>`: cuzk-core's benchmark circuit with 2^log constraints.
///
/// Input: an 8-byte little-endian seed, optionally followed by a 4-byte
/// little-endian partition count (default 1). Partition `p` is the circuit
/// `PorepLikeCircuit::new(log, seed + p)` (wrapping).
pub struct PorepLikeKind {
    name: String,
    /// The parameters' and compiled system's identity, with the shape's
    /// version ([`cuzk_core::circuits::porep_like::params_id`]): files made
    /// for another shape of the size are not found.
    params_id: String,
    log_size: u32,
    max_partitions: u32,
    /// The compiled constraint system, made on the first synthesis (the
    /// shape depends on the size alone); None until then, and always with
    /// full synthesis.
    compiled: Option<cuzk_core::compiled::CompiledOnce>,
}

/// Decoded porep-like input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PorepLikeInput {
    pub seed: u64,
    pub partitions: u32,
}

impl PorepLikeInput {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = self.seed.to_le_bytes().to_vec();
        if self.partitions != 1 {
            v.extend_from_slice(&self.partitions.to_le_bytes());
        }
        v
    }
    /// The circuit of one partition.
    pub fn circuit(&self, log_size: u32, partition: usize) -> PorepLikeCircuit {
        PorepLikeCircuit::new(log_size, self.seed.wrapping_add(partition as u64))
    }
}

impl PorepLikeKind {
    /// With compiled synthesis (the default): constraints recorded once,
    /// then witness-only synthesis and sparse products per partition.
    pub fn new(log_size: u32, max_partitions: u32) -> Self {
        Self {
            name: format!("porep-like-{log_size}"),
            params_id: cuzk_core::circuits::porep_like::params_id(log_size),
            log_size,
            max_partitions,
            compiled: Some(cuzk_core::compiled::CompiledOnce::new()),
        }
    }
    /// With full synthesis of every partition (every constraint built and
    /// evaluated), for comparison.
    pub fn with_full_synthesis(log_size: u32, max_partitions: u32) -> Self {
        Self {
            compiled: None,
            ..Self::new(log_size, max_partitions)
        }
    }
    /// The compiled constraint system, once a synthesis has made it.
    pub fn compiled(&self) -> Option<Arc<cuzk_core::compiled::CompiledCircuit>> {
        self.compiled.as_ref().and_then(|c| c.get())
    }
    pub fn log_size(&self) -> u32 {
        self.log_size
    }
    fn core(&self, source: cuzk_core::Error) -> KindError {
        KindError::Core {
            kind: self.name.clone(),
            source,
        }
    }
    /// The circuits of (input, partition) pairs of this kind.
    fn circuits(&self, parts: &[(JobInput, usize)]) -> Result<Vec<PorepLikeCircuit>, KindError> {
        parts
            .iter()
            .map(|(input, p)| {
                let input = input.downcast_ref::<PorepLikeInput>().ok_or_else(|| {
                    KindError::MalformedInput {
                        kind: self.name.clone(),
                        source: "input of another kind".into(),
                    }
                })?;
                Ok(input.circuit(self.log_size, *p))
            })
            .collect()
    }
    /// The compiled system (compiled on first use), or None with full
    /// synthesis.
    fn compiled_system(
        &self,
    ) -> Result<Option<Arc<cuzk_core::compiled::CompiledCircuit>>, KindError> {
        let Some(once) = &self.compiled else {
            return Ok(None);
        };
        let log = self.log_size;
        once.get_or_compile(|| {
            cuzk_core::compiled::compile(PorepLikeCircuit::new(log, 0), &self.params_id)
        })
        .map(Some)
        .map_err(|e| self.core(e))
    }
}

impl CircuitKind for PorepLikeKind {
    fn name(&self) -> &str {
        &self.name
    }
    fn params_id(&self) -> &str {
        &self.params_id
    }
    fn batchable(&self) -> bool {
        true
    }
    fn decode_input(&self, input: &[u8]) -> Result<(JobInput, usize), KindError> {
        let malformed = |what: String| KindError::MalformedInput {
            kind: self.name.clone(),
            source: what.into(),
        };
        let (seed, partitions) = match input.len() {
            8 | 12 => {
                let mut s = [0u8; 8];
                s.copy_from_slice(&input[..8]);
                let p = if input.len() == 12 {
                    let mut p = [0u8; 4];
                    p.copy_from_slice(&input[8..]);
                    u32::from_le_bytes(p)
                } else {
                    1
                };
                (u64::from_le_bytes(s), p)
            }
            n => {
                return Err(malformed(format!(
                    "{n} bytes; expected 8 (seed) or 12 (seed, partitions)"
                )))
            }
        };
        if partitions == 0 || partitions > self.max_partitions {
            return Err(malformed(format!(
                "{partitions} partitions; between 1 and {} allowed",
                self.max_partitions
            )));
        }
        Ok((
            Arc::new(PorepLikeInput { seed, partitions }),
            partitions as usize,
        ))
    }
    fn synthesize(&self, parts: &[(JobInput, usize)]) -> Result<Vec<ProvingAssignment>, KindError> {
        let circuits = self.circuits(parts)?;
        let Some(cc) = self.compiled_system()? else {
            return cuzk_core::synthesis::synthesize_batch(circuits).map_err(|e| self.core(e));
        };
        cc.synthesize_batch(circuits).map_err(|e| self.core(e))
    }
    fn synthesize_parts(&self, parts: &[(JobInput, usize)]) -> Result<Vec<Synthesized>, KindError> {
        let circuits = self.circuits(parts)?;
        let Some(cc) = self.compiled_system()? else {
            return Ok(cuzk_core::synthesis::synthesize_batch(circuits)
                .map_err(|e| self.core(e))?
                .into_iter()
                .map(Synthesized::Assignment)
                .collect());
        };
        Ok(cc
            .witness_batch(circuits)
            .map_err(|e| self.core(e))?
            .into_iter()
            .map(|witness| Synthesized::Witness {
                compiled: cc.clone(),
                witness,
            })
            .collect())
    }
    fn host_bytes_per_partition(&self) -> u64 {
        // 32-byte scalars: a, b, c padded to a domain of up to 2·2^log while
        // H is computed (6·2^log), plus the aux and input assignments
        // (about 2^log). Rounded up to 8 scalars per constraint.
        (1u64 << self.log_size) * 32 * 8
    }
    fn resident_host_bytes(&self) -> u64 {
        if self.compiled.is_none() {
            return 0;
        }
        // The compiled system's matrices, 77.7 bytes per row measured at
        // 2^24 (1,302,830,208 bytes, synthesis_bench on the H200,
        // 2026-12-03), and the shape that witness-only synthesis replays.
        (78u64 << self.log_size)
            + cuzk_core::circuits::porep_like::shape_bytes_estimate(self.log_size)
    }
    fn generates_params(&self) -> bool {
        true
    }
    fn generate_params(&self) -> Option<Result<Parameters, KindError>> {
        self.generate_params_on(&cuzk_core::generator::CpuFixedBase)
    }
    fn generate_params_on(
        &self,
        engine: &dyn cuzk_core::generator::FixedBaseEngine,
    ) -> Option<Result<Parameters, KindError>> {
        use rand::SeedableRng;
        // The circuit's shape depends only on its size, so any seed gives
        // parameters for the whole kind.
        let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
        let waste = cuzk_core::generator::ToxicWaste::random(&mut rng);
        // With compiled synthesis, from the kind's compiled system (which
        // its proofs use next): no synthesis of the circuit, the same
        // parameters.
        let generated = match self.compiled_system() {
            Err(e) => return Some(Err(e)),
            Ok(Some(cc)) => {
                cuzk_core::generator::generate_parameters_compiled_with(&cc, &waste, engine)
            }
            Ok(None) => {
                let circuit = PorepLikeCircuit::new(self.log_size, 0);
                cuzk_core::generator::generate_parameters_with(circuit, &waste, engine)
            }
        };
        Some(generated.map(|(p, _)| p).map_err(|e| self.core(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porep_like_input_round_trip_and_rejections() {
        let k = PorepLikeKind::new(8, 4);
        for inp in [
            PorepLikeInput {
                seed: 0,
                partitions: 1,
            },
            PorepLikeInput {
                seed: u64::MAX,
                partitions: 4,
            },
            PorepLikeInput {
                seed: 77,
                partitions: 2,
            },
        ] {
            let (decoded, parts) = k.decode_input(&inp.encode()).unwrap();
            assert_eq!(parts, inp.partitions as usize);
            assert_eq!(decoded.downcast_ref::<PorepLikeInput>(), Some(&inp));
        }
        for bad in [&[][..], &[1, 2, 3][..], &[0; 9][..], &[0; 13][..]] {
            assert!(matches!(
                k.decode_input(bad),
                Err(KindError::MalformedInput { .. })
            ));
        }
        let zero = PorepLikeInput {
            seed: 1,
            partitions: 0,
        };
        let mut enc = zero.encode();
        enc.extend_from_slice(&0u32.to_le_bytes());
        assert!(k.decode_input(&enc).is_err());
        let five = PorepLikeInput {
            seed: 1,
            partitions: 5,
        };
        assert!(k.decode_input(&five.encode()).is_err());
    }

    #[test]
    fn compiled_and_full_synthesis_agree() {
        let compiled = PorepLikeKind::new(9, 4);
        let full = PorepLikeKind::with_full_synthesis(9, 4);
        let (input, parts) = compiled
            .decode_input(
                &PorepLikeInput {
                    seed: 11,
                    partitions: 3,
                }
                .encode(),
            )
            .unwrap();
        let req: Vec<(JobInput, usize)> = (0..parts).map(|p| (input.clone(), p)).collect();
        assert!(compiled.compiled().is_none());
        let a = compiled.synthesize(&req).unwrap();
        assert!(compiled.compiled().is_some());
        let b = full.synthesize(&req).unwrap();
        assert_eq!(a.len(), 3);
        for (x, y) in a.iter().zip(&b) {
            assert!(x.a == y.a && x.b == y.b && x.c == y.c);
            assert_eq!(x.aux_assignment, y.aux_assignment);
            assert_eq!(x.input_assignment, y.input_assignment);
            assert_eq!(x.a_aux_density, y.a_aux_density);
            assert_eq!(x.b_aux_density, y.b_aux_density);
        }
        // Partitions differ from each other (their seeds differ).
        assert_ne!(a[0].aux_assignment, a[1].aux_assignment);
    }

    #[test]
    fn registry_lookup() {
        let mut r = KindRegistry::new();
        r.register(Arc::new(PorepLikeKind::new(6, 1)));
        assert!(r.get("porep-like-6").is_ok());
        assert!(matches!(r.get("nope"), Err(KindError::Unknown(_))));
        assert_eq!(r.names(), vec!["porep-like-6".to_string()]);
        r.register(Arc::new(PorepLikeKind::new(10, 1)));
        r.register(Arc::new(PorepLikeKind::new(8, 1)));
        assert_eq!(r.names(), ["porep-like-6", "porep-like-8", "porep-like-10"]);
        // The refusal lists what there is.
        let e = r.get("porep-like-7").err().unwrap().to_string();
        assert_eq!(
            e,
            "unknown circuit kind \"porep-like-7\"; this daemon serves porep-like-6, \
             porep-like-8, porep-like-10"
        );
    }

    #[test]
    fn kinds_sort_by_size() {
        let mut v = vec![
            "wpost-32g",
            "porep-64g",
            "porep-2k",
            "porep-512m",
            "porep-32g",
            "porep-8m",
            "porep-like-20",
            "porep-like-6",
            "porep-like-10",
            "a",
        ];
        v.sort_by(|a, b| kind_order(a, b));
        assert_eq!(
            v,
            [
                "a",
                "porep-2k",
                "porep-8m",
                "porep-512m",
                "porep-32g",
                "porep-64g",
                "porep-like-6",
                "porep-like-10",
                "porep-like-20",
                "wpost-32g",
            ]
        );
    }
}
