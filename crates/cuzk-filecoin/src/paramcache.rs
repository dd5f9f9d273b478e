//! The parameter cache directory, in filecoin-proofs' layout.
//!
//! filecoin-proofs looks for a circuit's files in `FIL_PROOFS_PARAMETER_CACHE`
//! (default `/var/tmp/filecoin-proof-parameters/`) under
//! `v28-<cache identifier>.params`, `.vk` and `.meta`
//! (`storage_proofs_core::parameter_cache`). Its verifiers read only the
//! `.vk`; its provers map the `.params`; `.meta` is a JSON
//! `{"sector_size": N}`. It checks the files' BLAKE2b digests against its
//! built-in `parameters.json` only when `FIL_PROOFS_VERIFY_PRODUCTION_PARAMS`
//! is set, which generated (non-production) files can never pass.
//!
//! This module names, writes and reads those files; it never touches
//! filecoin-proofs' own in-process caches.

use crate::circuits::CircuitId;
use crate::compiled::{compiled_blank, compiled_path, CompiledOrigin};
use crate::progress::ProgressPrinter;
use crate::{Error, Result, SynthesisMode};
use cuzk_core::generator::FixedBaseEngine;
use cuzk_core::generator::GenerationEvent;
use cuzk_core::params::{ParamsFileSink, ParamsSink, Section};
use cuzk_core::{MappedParameters, Parameters, VerifyingKey};
use rand::SeedableRng;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use storage_proofs_core::parameter_cache::{
    metadata_id, parameter_id, verifying_key_id, CacheEntryMetadata,
};

/// filecoin-proofs' parameter file name for `circuit` without its
/// extension (`v28-<cache identifier>`).
pub fn production_stem(circuit: CircuitId) -> Result<String> {
    Ok(parameter_id(&circuit.cache_identifier()?)
        .trim_end_matches(".params")
        .to_owned())
}

/// The environment variable filecoin-proofs reads the cache directory from.
pub const PARAMETER_CACHE_ENV: &str = "FIL_PROOFS_PARAMETER_CACHE";
/// filecoin-proofs' default cache directory.
pub const DEFAULT_PARAMETER_CACHE: &str = "/var/tmp/filecoin-proof-parameters/";

/// The three files of one circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitFiles {
    pub circuit: CircuitId,
    /// storage-proofs' cache identifier (file names are `v28-<identifier>.*`).
    pub identifier: String,
    pub params: PathBuf,
    pub vk: PathBuf,
    pub meta: PathBuf,
}

/// What [`ParamCache::generate`] did.
#[derive(Clone, Debug)]
pub struct Generated {
    pub files: CircuitFiles,
    /// The circuit's evaluation domain: its constraints (public-input
    /// constraints included) rounded up to a power of two.
    pub domain_size: usize,
    pub public_inputs: usize,
    pub generation: Duration,
    pub params_bytes: u64,
    /// Where the constraints came from when they were a compiled system's
    /// (None: a synthesis of the circuit).
    pub compiled: Option<CompiledUse>,
}

/// The compiled system parameter generation read the constraints from.
#[derive(Clone, Debug)]
pub struct CompiledUse {
    /// Its file beside the parameters (`crate::compiled::compiled_path`).
    pub path: PathBuf,
    pub origin: CompiledOrigin,
    /// Opening or compiling it (included in [`Generated::generation`]).
    pub elapsed: Duration,
    pub bytes: usize,
}

/// Parameters of one circuit, decoded and ready to prove and verify with.
pub struct LoadedParameters {
    pub circuit: CircuitId,
    pub files: CircuitFiles,
    pub params: Parameters,
    pub pvk: cuzk_core::PreparedVerifyingKey,
    pub load_time: Duration,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamCache {
    dir: PathBuf,
}

impl ParamCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ParamCache { dir: dir.into() }
    }

    /// `$FIL_PROOFS_PARAMETER_CACHE`, else filecoin-proofs' default.
    pub fn from_env() -> Self {
        match std::env::var_os(PARAMETER_CACHE_ENV) {
            Some(dir) if !dir.is_empty() => ParamCache::new(dir),
            _ => ParamCache::new(DEFAULT_PARAMETER_CACHE),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn files(&self, circuit: CircuitId) -> Result<CircuitFiles> {
        let identifier = circuit.cache_identifier()?;
        Ok(CircuitFiles {
            circuit,
            params: self.dir.join(parameter_id(&identifier)),
            vk: self.dir.join(verifying_key_id(&identifier)),
            meta: self.dir.join(metadata_id(&identifier)),
            identifier,
        })
    }

    /// Whether the circuit's `.params` and `.vk` are both present.
    pub fn is_present(&self, circuit: CircuitId) -> Result<bool> {
        let f = self.files(circuit)?;
        Ok(f.params.is_file() && f.vk.is_file())
    }

    /// Generate random (insecure, test-only) parameters for `circuit` with
    /// cuzk's generator and write `.params`, `.vk` and `.meta` under the
    /// production names. Each file is written beside its final name and
    /// renamed into place, so a concurrent reader never sees half a file.
    pub fn generate<R: rand_core::RngCore>(
        &self,
        circuit: CircuitId,
        rng: &mut R,
    ) -> Result<Generated> {
        self.generate_on(circuit, &cuzk_core::generator::CpuFixedBase, rng)
    }

    /// [`ParamCache::generate`] with the fixed-base multiplications on
    /// `engine` (a GPU's where one is usable).
    pub fn generate_on<R: rand_core::RngCore>(
        &self,
        circuit: CircuitId,
        engine: &dyn cuzk_core::generator::FixedBaseEngine,
        rng: &mut R,
    ) -> Result<Generated> {
        self.generate_with_progress(circuit, engine, rng, &|_| {})
    }

    /// [`ParamCache::generate_on`] reporting as it goes. The `.params` file
    /// is written query by query as the generator computes them (through a
    /// temporary sibling, renamed when complete), so memory holds the
    /// constraint matrices and the query scalars but never the points of
    /// more than two runs: the 32 GiB PoRep's 47 GiB of parameters need no
    /// 47 GiB of RAM, and no second copy on disk.
    pub fn generate_with_progress<R: rand_core::RngCore>(
        &self,
        circuit: CircuitId,
        engine: &dyn cuzk_core::generator::FixedBaseEngine,
        rng: &mut R,
        progress: &dyn Fn(&GenerationEvent),
    ) -> Result<Generated> {
        self.generate_files(circuit, &mut |sink| {
            circuit.generate_parameters_into(engine, rng, sink, progress)
        })
    }

    /// [`ParamCache::generate_with_progress`] from the circuit's compiled
    /// constraint system instead of a synthesis of the circuit: the same
    /// files for the same randomness, without the synthesis (73 s of one
    /// core at 32 GiB). The system is this process's, else mapped from its
    /// file in this directory (`cuzk-<identifier>.r1cs`, which proofs map
    /// too), else compiled and kept there (`crate::compiled::compiled_blank`),
    /// so that a later proof maps it instead of compiling.
    pub fn generate_compiled_with_progress<R: rand_core::RngCore>(
        &self,
        circuit: CircuitId,
        engine: &dyn cuzk_core::generator::FixedBaseEngine,
        rng: &mut R,
        progress: &dyn Fn(&GenerationEvent),
    ) -> Result<Generated> {
        let start = Instant::now();
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let path = compiled_path(&self.dir, circuit)?;
        let (compiled, origin) = compiled_blank(circuit, Some(&self.dir))?;
        let used = CompiledUse {
            path,
            origin,
            elapsed: start.elapsed(),
            bytes: compiled.matrix_bytes(),
        };
        let mut g = self.generate_files(circuit, &mut |sink| {
            circuit.generate_parameters_compiled_into(&compiled, engine, rng, sink, progress)
        })?;
        g.generation = start.elapsed();
        g.compiled = Some(used);
        Ok(g)
    }

    /// Write the circuit's `.params` (what `generate` hands its sink),
    /// `.vk` and `.meta`.
    fn generate_files(
        &self,
        circuit: CircuitId,
        generate: &mut dyn FnMut(
            &mut dyn ParamsSink,
        ) -> Result<cuzk_core::generator::GenerationTimings>,
    ) -> Result<Generated> {
        let files = self.files(circuit)?;
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let start = Instant::now();
        let mut written = None;
        write_atomically(&files.params, |tmp| {
            let file = std::fs::File::create(tmp).map_err(|e| Error::io(tmp, e))?;
            let mut sink = KeepKey {
                inner: ParamsFileSink::new(std::io::BufWriter::with_capacity(8 << 20, file)),
                vk: None,
                h_len: 0,
            };
            generate(&mut sink)?;
            sink.inner
                .finish()
                .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(tmp, e))?;
            written = sink.vk.map(|vk| (vk, sink.h_len));
            Ok(())
        })?;
        let generation = start.elapsed();
        let Some((vk, h_len)) = written else {
            return Err(Error::io(
                &files.params,
                std::io::Error::other("the generator gave no verifying key"),
            ));
        };
        write_atomically(&files.vk, |tmp| Ok(vk.write_file(tmp)?))?;
        let meta = serde_json::to_vec(&CacheEntryMetadata {
            sector_size: circuit.sector_size(),
        })
        .map_err(|e| Error::io(&files.meta, e.into()))?;
        write_atomically(&files.meta, |tmp| {
            std::fs::write(tmp, &meta).map_err(|e| Error::io(tmp, e))
        })?;

        let params_bytes = std::fs::metadata(&files.params)
            .map_err(|e| Error::io(&files.params, e))?
            .len();
        Ok(Generated {
            domain_size: h_len + 1,
            public_inputs: vk.ic.len().saturating_sub(1),
            files,
            generation,
            params_bytes,
            compiled: None,
        })
    }

    /// `circuit`'s parameters generated (random, insecure: for tests) under
    /// the production file names, unless both files are present and
    /// `force` is off (then `None`). `seed` makes the files reproducible
    /// (default: OS randomness); `synthesis` says where the constraints come
    /// from (`Compiled`: the circuit's compiled system, mapped from
    /// `cuzk-<identifier>.r1cs` in this directory, else compiled once and
    /// kept there for proofs to map; `Full`: a synthesis of the circuit, as
    /// bellperson does; the same parameters either way). The fixed-base
    /// multiplications run on `engine`; progress goes to `progress`.
    pub fn generate_unless_present(
        &self,
        circuit: CircuitId,
        force: bool,
        seed: Option<u64>,
        synthesis: SynthesisMode,
        engine: &dyn FixedBaseEngine,
        progress: &ProgressPrinter,
    ) -> Result<Option<Generated>> {
        if !force && self.is_present(circuit)? {
            return Ok(None);
        }
        let report = |e: &GenerationEvent| progress.event(e);
        let mut rng: Box<dyn rand_core::RngCore> = match seed {
            Some(seed) => Box::new(rand_chacha::ChaCha20Rng::seed_from_u64(seed)),
            None => Box::new(rand::rngs::OsRng),
        };
        let generated = match synthesis {
            SynthesisMode::Full => {
                self.generate_with_progress(circuit, engine, &mut rng, &report)?
            }
            SynthesisMode::Compiled => {
                let path = compiled_path(self.dir(), circuit)?;
                if path.exists() {
                    progress.note(&format!("mapping the constraints from {}", path.display()));
                } else {
                    progress.note(&format!(
                        "compiling the circuit's constraints once (kept as {}) ...",
                        path.display()
                    ));
                }
                self.generate_compiled_with_progress(circuit, engine, &mut rng, &report)?
            }
        };
        Ok(Some(generated))
    }

    /// Map and decode a circuit's `.params`; when its `.vk` is present, check
    /// that it is the same key (a stale `.vk` beside regenerated `.params`
    /// would make filecoin-proofs reject every proof).
    pub fn load(&self, circuit: CircuitId) -> Result<LoadedParameters> {
        self.load_as(circuit, false)
    }

    /// [`Self::load`] with the query points left in the mapped file when
    /// `mapped` ([`Parameters::mapped`]: for a backend that keeps
    /// parameters resident on its device and decodes them as it uploads
    /// them; a 32 GiB PoRep's 47 GB are then never in host memory whole).
    pub fn load_as(&self, circuit: CircuitId, mapped: bool) -> Result<LoadedParameters> {
        let files = self.files(circuit)?;
        if !files.params.is_file() {
            return Err(Error::MissingParameters {
                circuit: circuit.to_string(),
                path: files.params,
            });
        }
        let start = Instant::now();
        // Unchecked decoding, as filecoin-proofs maps its parameters: the
        // files are the operator's own (subgroup checks would add minutes
        // for the large circuits).
        let params = if mapped {
            Parameters::mapped(std::sync::Arc::new(MappedParameters::open(&files.params)?))?
        } else {
            Parameters::read_file(&files.params, false)?
        };
        if files.vk.is_file() {
            let vk = VerifyingKey::read_file(&files.vk, true)?;
            if vk != params.vk {
                return Err(Error::ParametersMismatch {
                    path: files.vk,
                    what: format!(
                        "verifying key differs from the one in {}",
                        files.params.display()
                    ),
                });
            }
        }
        let pvk = cuzk_core::verifier::prepare_verifying_key(&params.vk);
        Ok(LoadedParameters {
            circuit,
            files,
            params,
            pvk,
            load_time: start.elapsed(),
        })
    }
}

/// A `.params` file sink that keeps what [`Generated`] and the `.vk` need.
struct KeepKey<W: std::io::Write> {
    inner: ParamsFileSink<W>,
    vk: Option<VerifyingKey>,
    h_len: usize,
}

impl<W: std::io::Write> ParamsSink for KeepKey<W> {
    fn vk(&mut self, vk: &VerifyingKey) -> std::io::Result<()> {
        self.vk = Some(vk.clone());
        self.inner.vk(vk)
    }
    fn begin(&mut self, section: Section, len: usize) -> std::io::Result<()> {
        if section == Section::H {
            self.h_len = len;
        }
        self.inner.begin(section, len)
    }
    fn g1(&mut self, points: &[cuzk_core::G1Affine]) -> std::io::Result<()> {
        self.inner.g1(points)
    }
    fn g2(&mut self, points: &[cuzk_core::G2Affine]) -> std::io::Result<()> {
        self.inner.g2(points)
    }
}

fn write_atomically(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    if let Err(e) = write(&tmp) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::ProofKind;

    /// The names filecoin-proofs would look for are the production names:
    /// every one of them is listed in its built-in parameters.json.
    #[test]
    fn file_names_are_production_names() {
        let cache = ParamCache::new("/nonexistent");
        for kind in [
            ProofKind::Porep,
            ProofKind::WinningPost,
            ProofKind::WindowPost,
            ProofKind::SnapDeals,
        ] {
            for size in crate::circuits::REGISTERED_SECTOR_SIZES {
                let id = CircuitId::current(kind, size).unwrap();
                let f = cache.files(id).unwrap();
                for p in [&f.params, &f.vk] {
                    let name = p.file_name().unwrap().to_str().unwrap();
                    assert!(
                        storage_proofs_core::parameter_cache::get_parameter_data_from_id(name)
                            .is_some(),
                        "{id}: {name} is not a production file name"
                    );
                }
                let data = storage_proofs_core::parameter_cache::get_parameter_data(&f.identifier)
                    .unwrap();
                assert_eq!(data.sector_size, size, "{id}");
            }
        }
    }

    /// The streamed `.params` file is byte for byte what the in-memory
    /// parameters of the same randomness write, its `.vk` is their key, and
    /// it loads (WinningPoSt 2 KiB: a small real circuit).
    #[test]
    fn streamed_files_equal_the_in_memory_parameters() {
        use rand::SeedableRng;
        let dir = tempfile::tempdir().unwrap();
        let cache = ParamCache::new(dir.path());
        let id = CircuitId::current(ProofKind::WinningPost, 2048).unwrap();
        let seen = std::cell::Cell::new(0usize);
        let g = cache
            .generate_with_progress(
                id,
                &cuzk_core::generator::CpuFixedBase,
                &mut rand_chacha::ChaCha20Rng::seed_from_u64(4),
                &|e| {
                    if let GenerationEvent::Query { done, total, .. } = e {
                        assert!(done <= total);
                        seen.set(seen.get() + 1);
                    }
                },
            )
            .unwrap();
        assert!(seen.get() >= 5, "one event per query at least");
        let mem = id
            .generate_parameters(&mut rand_chacha::ChaCha20Rng::seed_from_u64(4))
            .unwrap();
        let mut want = Vec::new();
        mem.write(&mut want).unwrap();
        let got = std::fs::read(&g.files.params).unwrap();
        assert!(
            got == want,
            "streamed .params differs from the in-memory one"
        );
        assert_eq!(g.params_bytes, want.len() as u64);
        assert_eq!(g.domain_size, mem.h.len() + 1);
        assert_eq!(VerifyingKey::read_file(&g.files.vk, true).unwrap(), mem.vk);
        let loaded = cache.load(id).unwrap();
        assert_eq!(loaded.params.vk, mem.vk);
        // Nothing but the three files is left in the directory.
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
    }

    /// From the compiled system: the same `.params` and `.vk` bytes as
    /// from a synthesis of the blank circuit for the same randomness; the
    /// system is kept as `cuzk-<identifier>.r1cs` beside them (what a proof
    /// maps), opens under the circuit's id and fits the parameters
    /// (WinningPoSt 2 KiB: a small real circuit).
    #[test]
    fn parameters_from_the_compiled_system_equal_the_synthesized_ones() {
        use rand::SeedableRng;
        let id = CircuitId::current(ProofKind::WinningPost, 2048).unwrap();
        let engine = cuzk_core::generator::CpuFixedBase;
        let rng = || rand_chacha::ChaCha20Rng::seed_from_u64(17);
        let full_dir = tempfile::tempdir().unwrap();
        let full = ParamCache::new(full_dir.path())
            .generate_with_progress(id, &engine, &mut rng(), &|_| {})
            .unwrap();
        assert!(full.compiled.is_none());
        let dir = tempfile::tempdir().unwrap();
        let cache = ParamCache::new(dir.path());
        let comp = cache
            .generate_compiled_with_progress(id, &engine, &mut rng(), &|_| {})
            .unwrap();
        let read = |p: &Path| std::fs::read(p).unwrap();
        assert!(
            read(&comp.files.params) == read(&full.files.params),
            "the .params differ"
        );
        assert_eq!(read(&comp.files.vk), read(&full.files.vk));
        let used = comp.compiled.expect("the compiled system's use");
        assert_eq!(used.path, compiled_path(dir.path(), id).unwrap());
        let opened = cuzk_core::compiled::CompiledCircuit::open(
            &used.path,
            Some(&id.cache_identifier().unwrap()),
        )
        .unwrap();
        opened
            .check_params(&cache.load(id).unwrap().params)
            .unwrap();

        // Another directory, with the system already in this process: it
        // is taken from memory and its file written there too.
        let other = tempfile::tempdir().unwrap();
        let again = ParamCache::new(other.path())
            .generate_compiled_with_progress(id, &engine, &mut rng(), &|_| {})
            .unwrap();
        assert_eq!(
            again.compiled.map(|c| c.origin),
            Some(CompiledOrigin::Memory)
        );
        assert!(compiled_path(other.path(), id).unwrap().is_file());
        assert!(read(&again.files.params) == read(&full.files.params));
    }

    #[test]
    fn missing_parameters_are_a_typed_error() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ParamCache::new(dir.path());
        let id = CircuitId::current(ProofKind::Porep, 2048).unwrap();
        assert!(!cache.is_present(id).unwrap());
        match cache.load(id) {
            Err(Error::MissingParameters { path, .. }) => {
                assert_eq!(path, cache.files(id).unwrap().params)
            }
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("loaded parameters from an empty directory"),
        }
    }
}
