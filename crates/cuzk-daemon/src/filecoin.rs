//! The Filecoin circuit kinds of the cuzk daemon: one kind per circuit
//! (`porep-2k`, `winning-32g`, `wpost-32g`, `snap-64g`, ... as Curio names
//! them), proving from the same inputs as [`cuzk_filecoin::FilecoinProver`], with
//! parameters under filecoin-proofs' file names in the daemon's parameter
//! directory (point it at the `FIL_PROOFS_PARAMETER_CACHE` directory).
//!
//! A job's input is [`encode_request`]'s bytes: for PoRep the C1 output as
//! it is (any form [`cuzk_filecoin::porep::decode_c1`] reads), for the others a
//! small JSON document. The kind decodes the input once, at submission, and
//! builds its circuits there (which checks it and counts its partitions);
//! the job keeps the built circuits ([`PreparedProof`]) and each partition
//! is synthesized from them. The daemon proves partitions and concatenates
//! their proofs in order, which is filecoin-proofs' format.

use crate::kinds::{CircuitKind, JobInput, KindError};
use crate::Priority;
use base64::Engine as _;
use cuzk_core::params::Parameters;
use cuzk_core::prover::Synthesized;
use cuzk_core::synthesis::ProvingAssignment;
use cuzk_filecoin::circuits::{CircuitId, ProofKind, REGISTERED_SECTOR_SIZES};
use cuzk_filecoin::partitions::{
    synthesize_prepared, synthesize_prepared_assignments, PreparedProof,
};
use cuzk_filecoin::prover::ProofRequest;
use cuzk_filecoin::{porep, post, snap, Error, Fact, InputPart, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// WinningPoSt must finish within its epoch; WindowPoSt within its
/// deadline; PoRep and SnapDeals have hours.
pub fn default_priority(kind: ProofKind) -> Priority {
    match kind {
        ProofKind::WinningPost => Priority::Critical,
        ProofKind::WindowPost => Priority::High,
        ProofKind::Porep | ProofKind::SnapDeals => Priority::Normal,
    }
}

/// The job input of the kind [`kind_name`]`(req.circuit())` for a request
/// already decoded (what its `decode_input` makes of the request's
/// [`encode_request`] bytes), and its partitions: a front end that decoded
/// the request to check it hands this to `Engine::submit_decoded`.
///
/// The input is the request prepared: its circuits built (which checks
/// it) and each partition's public inputs derived, once per job. The
/// request goes; the circuits hold what synthesis needs of it, and each
/// partition is synthesized from a copy of its circuit (see
/// [`PreparedProof`] for why, and what keeping them costs).
pub fn job_input_of(req: ProofRequest) -> Result<(JobInput, usize)> {
    let prepared = PreparedProof::new(&req)?;
    let partitions = prepared.partitions();
    Ok((Arc::new(prepared), partitions))
}

/// One Filecoin circuit as a daemon kind.
pub struct FilecoinKind {
    circuit: CircuitId,
    name: String,
    params_id: String,
    generate: bool,
    synthesis: cuzk_filecoin::SynthesisMode,
    /// Where the compiled constraint system is kept as a file (the
    /// daemon's parameter directory); `None`: compiled in memory by each
    /// process.
    compiled_dir: Option<PathBuf>,
}

impl FilecoinKind {
    /// The prepared proofs of (input, partition) pairs of this kind.
    fn prepared<'a>(
        &self,
        parts: &'a [(JobInput, usize)],
    ) -> std::result::Result<Vec<(&'a PreparedProof, usize)>, KindError> {
        parts
            .iter()
            .map(|(input, k)| {
                input
                    .downcast_ref::<PreparedProof>()
                    .map(|p| (p, *k))
                    .ok_or_else(|| KindError::MalformedInput {
                        kind: self.name.clone(),
                        source: "input of another kind".into(),
                    })
            })
            .collect()
    }

    /// A failure after decoding: the core's own, the request's (malformed
    /// input), or the kind's (its files, parameters or code).
    fn kind_error(&self, e: Error) -> KindError {
        match e {
            Error::Core(source) => KindError::Core {
                kind: self.name.clone(),
                source,
            },
            other if other.caused_by_input() => self.malformed(other),
            other => KindError::Failed {
                kind: self.name.clone(),
                source: Box::new(other),
            },
        }
    }

    /// `generate`: let the daemon make random (insecure, test-only)
    /// parameters when the file is missing. Off for real use: proofs made
    /// with them are worthless on chain, and a missing file should be an
    /// error the operator sees.
    pub fn new(circuit: CircuitId, generate: bool) -> Result<Self> {
        let production = cuzk_filecoin::paramcache::production_stem(circuit)?;
        // The daemon takes ids up to `crate::params::MAX_ID_LEN`
        // characters, which covers filecoin-proofs' names (up to 145); a
        // name beyond it would get a short alias (see `link_params`).
        let params_id = if crate::params::check_id(&production).is_ok() {
            production
        } else {
            let id = circuit.cache_identifier()?;
            format!(
                "fil-{}-{}",
                circuit.short_name(),
                &id[id.len().saturating_sub(16)..]
            )
        };
        Ok(FilecoinKind {
            circuit,
            name: circuit.short_name(),
            params_id,
            generate,
            synthesis: cuzk_filecoin::SynthesisMode::default(),
            compiled_dir: None,
        })
    }

    /// How partitions are synthesized (compiled by default).
    pub fn with_synthesis(mut self, mode: cuzk_filecoin::SynthesisMode) -> Self {
        self.synthesis = mode;
        self
    }

    /// Keep the compiled constraint system in `dir` as
    /// `cuzk-<circuit id>.r1cs`: read (mapped, checksums checked) when it
    /// is there, else compiled on first use and written there, so a
    /// restarted daemon does not compile again.
    pub fn with_compiled_dir(mut self, dir: &Path) -> Self {
        self.compiled_dir = Some(dir.to_path_buf());
        self
    }

    /// Make the kind's parameter files visible to the daemon under its
    /// parameter id in `dir` (the daemon's parameter directory, holding the
    /// production files): a symbolic link `<alias>.params` (and `.vk`) to
    /// the production file, where the id is an alias. Nothing to do, and
    /// nothing done, when the id is the production name or the production
    /// file is absent.
    pub fn link_params(&self, dir: &Path) -> Result<()> {
        let production = cuzk_filecoin::paramcache::production_stem(self.circuit)?;
        if production == self.params_id {
            return Ok(());
        }
        for ext in ["params", "vk"] {
            let target = format!("{production}.{ext}");
            let link = dir.join(format!("{}.{ext}", self.params_id));
            if !dir.join(&target).is_file() || link.symlink_metadata().is_ok() {
                continue;
            }
            std::os::unix::fs::symlink(&target, &link).map_err(|e| Error::io(&link, e))?;
        }
        Ok(())
    }

    /// The four kinds for each sector size, their parameter files linked
    /// in `dir` where needed (see [`FilecoinKind::link_params`]) and their
    /// compiled systems kept there (see [`FilecoinKind::with_compiled_dir`]).
    pub fn all(
        sector_sizes: &[u64],
        generate: bool,
        dir: &Path,
    ) -> Result<Vec<Arc<dyn CircuitKind>>> {
        Self::all_with(
            sector_sizes,
            generate,
            dir,
            cuzk_filecoin::SynthesisMode::default(),
        )
    }

    /// [`FilecoinKind::all`] with the given synthesis.
    pub fn all_with(
        sector_sizes: &[u64],
        generate: bool,
        dir: &Path,
        synthesis: cuzk_filecoin::SynthesisMode,
    ) -> Result<Vec<Arc<dyn CircuitKind>>> {
        let mut kinds: Vec<Arc<dyn CircuitKind>> = Vec::new();
        for &size in sector_sizes {
            for kind in [
                ProofKind::Porep,
                ProofKind::WinningPost,
                ProofKind::WindowPost,
                ProofKind::SnapDeals,
            ] {
                let k = Self::new(CircuitId::current(kind, size)?, generate)?
                    .with_synthesis(synthesis)
                    .with_compiled_dir(dir);
                k.link_params(dir)?;
                kinds.push(Arc::new(k));
            }
        }
        Ok(kinds)
    }

    /// Every production sector size (2 KiB to 64 GiB).
    pub fn all_sizes(generate: bool, dir: &Path) -> Result<Vec<Arc<dyn CircuitKind>>> {
        Self::all(&REGISTERED_SECTOR_SIZES, generate, dir)
    }

    pub fn circuit(&self) -> CircuitId {
        self.circuit
    }

    pub fn default_priority(&self) -> Priority {
        default_priority(self.circuit.kind())
    }

    fn malformed(&self, e: Error) -> KindError {
        // The typed error itself, so that a caller can ask it which part
        // of the request was bad (Error::input_part).
        KindError::MalformedInput {
            kind: self.name.clone(),
            source: Box::new(e),
        }
    }
}

/// What `cuzk daemon` serves beside the configured kinds: every Filecoin
/// kind at every production sector size (parameters read from the
/// daemon's parameter directory, linked where needed, never generated; the
/// configured synthesis) and Curio's `cuzk.v1` service (bounded by
/// `server.max_message_bytes`).
pub fn add_filecoin(builder: crate::DaemonBuilder) -> anyhow::Result<crate::DaemonBuilder> {
    use anyhow::Context;
    let dir = builder.config().params.dir.clone();
    let synthesis = match builder.config().kinds.synthesis {
        crate::config::SynthesisSetting::Compiled => cuzk_filecoin::SynthesisMode::Compiled,
        crate::config::SynthesisSetting::Full => cuzk_filecoin::SynthesisMode::Full,
    };
    let max_message = builder.config().server.max_message_bytes.0 as usize;
    let mut builder = builder.add_service(crate::curio::service_hook(max_message));
    let kinds = FilecoinKind::all_with(&REGISTERED_SECTOR_SIZES, false, &dir, synthesis)
        .with_context(|| format!("registering the Filecoin kinds over {}", dir.display()))?;
    for kind in kinds {
        builder = builder.register_kind(kind);
    }
    Ok(builder)
}

/// The daemon's name of the kind that proves `circuit`.
pub fn kind_name(circuit: CircuitId) -> String {
    circuit.short_name()
}

#[derive(serde::Serialize, serde::Deserialize)]
struct PostInput {
    registered_proof: u64,
    randomness: String,
    prover_id: String,
    vanilla_proofs: Vec<String>,
    #[serde(default)]
    partition: Option<usize>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SnapInput {
    registered_proof: u64,
    vanilla_proofs: Vec<String>,
    comm_r_old: String,
    comm_r_new: String,
    comm_d_new: String,
}

fn hex(b: &[u8; 32]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn b64(v: &[Vec<u8>]) -> Vec<String> {
    v.iter()
        .map(|p| base64::engine::general_purpose::STANDARD.encode(p))
        .collect()
}

fn unb64(v: &[String]) -> Result<Vec<Vec<u8>>> {
    v.iter()
        .enumerate()
        .map(|(i, s)| {
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| Error::decode(InputPart::VanillaProof(i), "base64", e))
        })
        .collect()
}

/// A job input for the daemon's Filecoin kinds: the bytes that name a job
/// (its request id's input hash) and that cluster mode stores in the
/// database. A request that cannot be serialised is an error, never an
/// empty input (which would name, and store, a job that proves nothing).
pub fn encode_request(req: &ProofRequest) -> Result<Vec<u8>> {
    let encoded = match req {
        ProofRequest::PoRepC2(c1) => serde_json::to_vec(c1),
        ProofRequest::WinningPost {
            registered_proof,
            randomness,
            prover_id,
            vanilla_proofs,
        } => serde_json::to_vec(&PostInput {
            registered_proof: *registered_proof as u64,
            randomness: hex(randomness),
            prover_id: hex(prover_id),
            vanilla_proofs: b64(vanilla_proofs),
            partition: None,
        }),
        ProofRequest::WindowPost {
            registered_proof,
            randomness,
            prover_id,
            vanilla_proofs,
            partition,
        } => serde_json::to_vec(&PostInput {
            registered_proof: *registered_proof as u64,
            randomness: hex(randomness),
            prover_id: hex(prover_id),
            vanilla_proofs: b64(vanilla_proofs),
            partition: *partition,
        }),
        ProofRequest::SnapDeals {
            registered_proof,
            vanilla_proofs,
            comm_r_old,
            comm_r_new,
            comm_d_new,
        } => serde_json::to_vec(&SnapInput {
            registered_proof: *registered_proof as u64,
            vanilla_proofs: b64(vanilla_proofs),
            comm_r_old: hex(comm_r_old),
            comm_r_new: hex(comm_r_new),
            comm_d_new: hex(comm_d_new),
        }),
    };
    encoded.map_err(|source| Error::Encode {
        what: format!("the {} job input", req.circuit()),
        source,
    })
}

/// Read a job input of `kind` (see [`encode_request`]).
pub fn decode_request(kind: ProofKind, input: &[u8]) -> Result<ProofRequest> {
    let json = |what: &str, e: serde_json::Error| Error::decode(InputPart::JobInput, what, e);
    Ok(match kind {
        ProofKind::Porep => ProofRequest::PoRepC2(Box::new(porep::decode_c1(input, None)?.output)),
        ProofKind::WinningPost | ProofKind::WindowPost => {
            let p: PostInput =
                serde_json::from_slice(input).map_err(|e| json("PoSt job input", e))?;
            let registered_proof = post::post_proof_from_u64(p.registered_proof)?;
            let randomness = cuzk_filecoin::ids::parse_hex32(&p.randomness, "randomness")?;
            let prover_id = cuzk_filecoin::ids::parse_hex32(&p.prover_id, "prover_id")?;
            let vanilla_proofs = unb64(&p.vanilla_proofs)?;
            ProofRequest::post(
                kind,
                registered_proof,
                randomness,
                prover_id,
                vanilla_proofs,
                p.partition,
            )?
        }
        ProofKind::SnapDeals => {
            let s: SnapInput =
                serde_json::from_slice(input).map_err(|e| json("SnapDeals job input", e))?;
            ProofRequest::SnapDeals {
                registered_proof: snap::update_proof_from_u64(s.registered_proof)?,
                vanilla_proofs: unb64(&s.vanilla_proofs)?,
                comm_r_old: cuzk_filecoin::ids::parse_hex32(&s.comm_r_old, "comm_r_old")?,
                comm_r_new: cuzk_filecoin::ids::parse_hex32(&s.comm_r_new, "comm_r_new")?,
                comm_d_new: cuzk_filecoin::ids::parse_hex32(&s.comm_d_new, "comm_d_new")?,
            }
        }
    })
}

impl CircuitKind for FilecoinKind {
    fn name(&self) -> &str {
        &self.name
    }

    fn params_id(&self) -> &str {
        &self.params_id
    }

    fn batchable(&self) -> bool {
        true
    }

    fn decode_input(&self, input: &[u8]) -> std::result::Result<(JobInput, usize), KindError> {
        let req = decode_request(self.circuit.kind(), input).map_err(|e| self.malformed(e))?;
        let got = req.circuit();
        // Registered proofs that share a circuit (PoRep V1 and V1_1,
        // WindowPoSt V1 and V1_2) share a kind.
        let same = got.kind() == self.circuit.kind()
            && got.sector_size() == self.circuit.sector_size()
            && got.cache_identifier().ok() == self.circuit.cache_identifier().ok();
        if !same {
            return Err(self.malformed(Error::disagree(
                Fact::Circuit,
                "the kind",
                self.circuit,
                "the input",
                got,
            )));
        }
        job_input_of(req).map_err(|e| self.malformed(e))
    }

    fn synthesize(
        &self,
        parts: &[(JobInput, usize)],
    ) -> std::result::Result<Vec<ProvingAssignment>, KindError> {
        let prepared = self.prepared(parts)?;
        synthesize_prepared_assignments(&prepared, self.synthesis, self.compiled_dir.as_deref())
            .map_err(|e| self.kind_error(e))
    }

    /// In compiled mode the partitions' witnesses, whose a/b/c the backend
    /// forms (on the GPU for the CUDA backend: a 32 GiB PoRep partition's
    /// a/b/c are 12.5 GB the host no longer computes or uploads).
    fn synthesize_parts(
        &self,
        parts: &[(JobInput, usize)],
    ) -> std::result::Result<Vec<Synthesized>, KindError> {
        let prepared = self.prepared(parts)?;
        synthesize_prepared(&prepared, self.synthesis, self.compiled_dir.as_deref())
            .map_err(|e| self.kind_error(e))
    }

    fn host_bytes_per_partition(&self) -> u64 {
        let n = 1u64 << self.circuit.domain_log();
        match self.synthesis {
            // The witness (inputs and aux, about one scalar per constraint)
            // and, while its parts are joined, their copies; a third for
            // the sparse products when the backend forms a/b/c on the host.
            cuzk_filecoin::SynthesisMode::Compiled => n * 32 * 3,
            // Eight 32-byte scalars per domain element, as the daemon's own
            // porep-like kind estimates (a, b, c padded while H is
            // computed, and the assignments).
            cuzk_filecoin::SynthesisMode::Full => n * 32 * 8,
        }
    }

    fn verifier_inputs(
        &self,
        input: &JobInput,
        partition: usize,
    ) -> Option<Vec<cuzk_core::Scalar>> {
        // An input of another kind gets an empty list, which no proof of
        // these circuits verifies against.
        Some(
            input
                .downcast_ref::<PreparedProof>()
                .and_then(|p| p.public_inputs().get(partition).cloned())
                .unwrap_or_default(),
        )
    }

    fn generates_params(&self) -> bool {
        self.generate
    }

    fn generate_params(&self) -> Option<std::result::Result<Parameters, KindError>> {
        self.generate_params_on(&cuzk_core::generator::CpuFixedBase)
    }

    fn generate_params_on(
        &self,
        engine: &dyn cuzk_core::generator::FixedBaseEngine,
    ) -> Option<std::result::Result<Parameters, KindError>> {
        if !self.generate {
            return None;
        }
        // In compiled mode from the kind's compiled system (mapped from, or
        // kept in, the parameter directory, where its proofs find it): no
        // synthesis of the circuit, the same parameters.
        let generated = match self.synthesis {
            cuzk_filecoin::SynthesisMode::Full => self
                .circuit
                .generate_parameters_on(engine, &mut rand::rngs::OsRng),
            cuzk_filecoin::SynthesisMode::Compiled => {
                cuzk_filecoin::compiled::compiled_blank(self.circuit, self.compiled_dir.as_deref())
                    .and_then(|(cc, _)| {
                        self.circuit.generate_parameters_compiled_on(
                            &cc,
                            engine,
                            &mut rand::rngs::OsRng,
                        )
                    })
            }
        };
        Some(generated.map_err(|e| self.kind_error(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities() {
        assert_eq!(default_priority(ProofKind::WinningPost), Priority::Critical);
        assert_eq!(default_priority(ProofKind::WindowPost), Priority::High);
        assert_eq!(default_priority(ProofKind::Porep), Priority::Normal);
        assert_eq!(default_priority(ProofKind::SnapDeals), Priority::Normal);
    }

    #[test]
    fn kinds_are_named_as_curio_names_circuits() {
        let dir = tempfile::tempdir().unwrap();
        let kinds = FilecoinKind::all_sizes(false, dir.path()).unwrap();
        assert_eq!(kinds.len(), 20);
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        for n in [
            "porep-2k",
            "winning-32g",
            "wpost-64g",
            "snap-512m",
            "porep-8m",
        ] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
        for k in &kinds {
            assert!(
                crate::params::check_id(k.params_id()).is_ok(),
                "{}",
                k.params_id()
            );
            assert!(!k.generates_params());
            assert!(k.generate_params().is_none());
        }
    }

    #[test]
    fn malformed_inputs_are_rejected_at_submission() {
        let dir = tempfile::tempdir().unwrap();
        for kind in FilecoinKind::all(&[2048], false, dir.path()).unwrap() {
            for bad in [&b""[..], b"{}", b"not json", br#"{"registered_proof": 99}"#] {
                assert!(
                    matches!(
                        kind.decode_input(bad),
                        Err(KindError::MalformedInput { .. })
                    ),
                    "{} accepted {:?}",
                    kind.name(),
                    String::from_utf8_lossy(bad)
                );
            }
        }
    }

    #[test]
    fn a_bad_vanilla_proof_is_named_through_the_kind_error() {
        let dir = tempfile::tempdir().unwrap();
        let kinds = FilecoinKind::all(&[2048], false, dir.path()).unwrap();
        let kind = kinds
            .iter()
            .find(|k| {
                k.name() == kind_name(CircuitId::current(ProofKind::WindowPost, 2048).unwrap())
            })
            .expect("a WindowPoSt kind");
        let input = serde_json::json!({
            "registered_proof": cuzk_filecoin::filecoin_proofs_api::RegisteredPoStProof::StackedDrgWindow2KiBV1_2 as u64,
            "randomness": "00".repeat(32),
            "prover_id": "00".repeat(32),
            "vanilla_proofs": ["AAAA", "not base64!"],
            "partition": 0,
        });
        let Err(KindError::MalformedInput { source, .. }) =
            kind.decode_input(input.to_string().as_bytes())
        else {
            panic!("a bad vanilla proof accepted");
        };
        let e = source
            .downcast_ref::<Error>()
            .expect("the Filecoin error itself");
        assert_eq!(e.input_part(), Some(InputPart::VanillaProof(1)), "{e}");
    }

    /// A request's fault is malformed input (INVALID_ARGUMENT); the kind's
    /// own (a file it cannot read, parameters it lacks, an internal fault)
    /// is a failure of the kind (INTERNAL), named with its cause.
    #[test]
    fn kind_failures_are_not_blamed_on_the_input() {
        let circuit = CircuitId::current(ProofKind::WinningPost, 2048).unwrap();
        let k = FilecoinKind::new(circuit, false).unwrap();
        let status = |e: KindError| crate::service::status_of(crate::engine::EngineError::Kind(e));

        let bad_input = k.kind_error(Error::Empty {
            field: "vanilla_proofs".into(),
        });
        assert!(
            matches!(bad_input, KindError::MalformedInput { .. }),
            "{bad_input}"
        );
        assert_eq!(status(bad_input).code(), tonic::Code::InvalidArgument);

        let cases = [
            Error::io(
                "/nowhere/c.compiled",
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ),
            Error::MissingParameters {
                circuit: circuit.to_string(),
                path: "/nowhere/p.params".into(),
            },
            Error::Internal {
                what: "a lock poisoned".into(),
            },
        ];
        for e in cases {
            let text = e.to_string();
            let got = k.kind_error(e);
            let KindError::Failed { source, .. } = &got else {
                panic!("{got} blamed on the input");
            };
            assert!(!source.downcast_ref::<Error>().unwrap().caused_by_input());
            assert!(got.to_string().contains(&text), "{got}");
            let st = status(got);
            assert_eq!(st.code(), tonic::Code::Internal, "{}", st.message());
        }
    }

    /// An aliased kind finds the production files through links.
    #[test]
    fn aliases_link_to_production_files() {
        let dir = tempfile::tempdir().unwrap();
        let circuit = CircuitId::current(ProofKind::Porep, 32 << 30).unwrap();
        let stem = cuzk_filecoin::paramcache::production_stem(circuit).unwrap();
        std::fs::write(dir.path().join(format!("{stem}.params")), b"p").unwrap();
        let k = FilecoinKind::new(circuit, false).unwrap();
        k.link_params(dir.path()).unwrap();
        k.link_params(dir.path()).unwrap(); // idempotent
        if k.params_id() != stem {
            let linked = dir.path().join(format!("{}.params", k.params_id()));
            assert_eq!(std::fs::read(linked).unwrap(), b"p");
            // No .vk: no link to nothing.
            assert!(!dir.path().join(format!("{}.vk", k.params_id())).exists());
        }
    }

    #[test]
    fn post_and_snap_inputs_round_trip() {
        let req = ProofRequest::WindowPost {
            registered_proof:
                cuzk_filecoin::filecoin_proofs_api::RegisteredPoStProof::StackedDrgWindow2KiBV1_2,
            randomness: [1; 32],
            prover_id: [2; 32],
            vanilla_proofs: vec![vec![1, 2, 3], vec![]],
            partition: Some(3),
        };
        let back = decode_request(ProofKind::WindowPost, &encode_request(&req).unwrap()).unwrap();
        assert_eq!(format!("{back:?}"), format!("{req:?}"));
        let req = ProofRequest::WinningPost {
            registered_proof:
                cuzk_filecoin::filecoin_proofs_api::RegisteredPoStProof::StackedDrgWinning32GiBV1,
            randomness: [6; 32],
            prover_id: [7; 32],
            vanilla_proofs: vec![vec![8; 5]],
        };
        let back = decode_request(ProofKind::WinningPost, &encode_request(&req).unwrap()).unwrap();
        assert_eq!(format!("{back:?}"), format!("{req:?}"));
        let req = ProofRequest::SnapDeals {
            registered_proof:
                cuzk_filecoin::filecoin_proofs_api::RegisteredUpdateProof::StackedDrg32GiBV1,
            vanilla_proofs: vec![vec![9; 40]],
            comm_r_old: [3; 32],
            comm_r_new: [4; 32],
            comm_d_new: [5; 32],
        };
        let back = decode_request(ProofKind::SnapDeals, &encode_request(&req).unwrap()).unwrap();
        assert_eq!(format!("{back:?}"), format!("{req:?}"));
    }
}
