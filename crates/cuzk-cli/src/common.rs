//! Shared pieces of the subcommands: the parameter cache, medians, tables.

use anyhow::{Context, Result};
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::params::Parameters;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `--cache-dir`, else `$CUZK_CACHE_DIR`, else `$XDG_CACHE_HOME/cuzk`,
/// else `~/.cache/cuzk`.
pub fn cache_dir(flag: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("CUZK_CACHE_DIR") {
        return Ok(PathBuf::from(p));
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(p).join("cuzk"));
    }
    let home = std::env::var_os("HOME")
        .context("no cache directory: set --cache-dir, CUZK_CACHE_DIR or HOME")?;
    Ok(PathBuf::from(home).join(".cache").join("cuzk"))
}

/// The porep-like kind's parameter id of one log size, with its shape's
/// version: its parameter files' stem (`porep-like-<N>-v<V>.params`, `.vk`,
/// `.r1cs`) in the demo's cache as in the daemon's parameter directory, and
/// its compiled system's identity.
pub fn porep_like_id(log_size: u32) -> String {
    cuzk_core::circuits::porep_like::params_id(log_size)
}

/// Where the porep-like parameters of one log size live in a cache. The
/// circuit's shape depends on the size alone (the seed picks the witness),
/// so one file serves every seed.
pub fn porep_like_params_path(cache: &Path, log_size: u32) -> PathBuf {
    cache.join(format!("{}.params", porep_like_id(log_size)))
}

pub struct CachedParams {
    pub params: Parameters,
    pub path: PathBuf,
    /// Generation time when they were made now, else load time.
    pub elapsed: Duration,
    pub generated: bool,
}

/// Load the porep-like parameters from the cache, generating (and writing
/// atomically) them first if absent. Progress goes to stderr unless quiet.
/// (`_seed` is a witness seed, which the parameters do not depend on.)
pub fn porep_like_params(
    cache: &Path,
    log_size: u32,
    _seed: u64,
    quiet: bool,
) -> Result<CachedParams> {
    let path = porep_like_params_path(cache, log_size);
    if path.exists() {
        let start = Instant::now();
        if !quiet {
            eprintln!("loading parameters from {}", path.display());
        }
        let params = Parameters::read_file(&path, false).with_context(|| {
            format!(
                "reading cached parameters {} (delete the file to regenerate)",
                path.display()
            )
        })?;
        return Ok(CachedParams {
            params,
            path,
            elapsed: start.elapsed(),
            generated: false,
        });
    }
    std::fs::create_dir_all(cache)
        .with_context(|| format!("creating cache directory {}", cache.display()))?;
    if !quiet {
        eprintln!(
            "generating random parameters for porep-like 2^{log_size} (cached in {}) ...",
            path.display()
        );
    }
    let start = Instant::now();
    // The shape depends on the size alone: any seed's circuit will do.
    let circuit = PorepLikeCircuit::new(log_size, 0);
    let params = cuzk_core::generator::generate_random_parameters(circuit, &mut rand::rngs::OsRng)
        .context("generating parameters")?;
    let elapsed = start.elapsed();
    // Written through a temporary sibling and renamed (cuzk-core does it),
    // with the verifying key beside them as the daemon does.
    params.write_file(&path)?;
    params.vk.write_file(&path.with_extension("vk"))?;
    if !quiet {
        eprintln!("  done in {:.2} s", elapsed.as_secs_f64());
    }
    Ok(CachedParams {
        params,
        path,
        elapsed,
        generated: true,
    })
}

/// The directory a file is to be written into exists.
pub fn check_output_dir(path: &Path) -> Result<()> {
    crate::daemon_cli::check_output_dir(path)
}

pub fn median(xs: &[Duration]) -> Duration {
    let mut v = xs.to_vec();
    v.sort();
    match v.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

/// Milliseconds, rounded to the microsecond.
pub fn ms(d: Duration) -> f64 {
    cuzk_daemon::report::round_ms(d.as_secs_f64() * 1e3)
}

/// Print rows of (name, milliseconds) as an aligned table.
pub fn print_table(title: &str, rows: &[(String, f64)]) {
    let w = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(5).max(5);
    println!("{title}");
    println!("  {:<w$}  {:>12}", "phase", "ms");
    for (name, v) in rows {
        println!("  {:<w$}  {:>12.1}", name, v);
    }
}

/// `--backend`: which prover backend computes H and the MSMs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendArg {
    Cpu,
    Cuda,
    /// The GPU where one is usable (a `cuda` build on a machine with a GPU),
    /// else the CPU.
    #[default]
    Auto,
}

impl From<BackendArg> for cuzk_gpu::BackendChoice {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Cpu => cuzk_gpu::BackendChoice::Cpu,
            BackendArg::Cuda => cuzk_gpu::BackendChoice::Cuda,
            BackendArg::Auto => cuzk_gpu::BackendChoice::Auto,
        }
    }
}

/// Where parameter generation's fixed-base multiplications run for
/// `--backend`; with `auto` and no usable GPU the reason for the CPU goes
/// to stderr unless quiet.
pub fn select_fixed_base(
    choice: BackendArg,
    quiet: bool,
) -> Result<Box<dyn cuzk_core::generator::FixedBaseEngine>> {
    let (engine, why) = cuzk_gpu::select_fixed_base(choice.into(), 0)
        .context("opening the GPU for parameter generation")?;
    if let (Some(why), false) = (why, quiet) {
        eprintln!("backend auto: {why}");
    }
    Ok(engine)
}

/// Where `params info --check`'s subgroup checks run for `--backend`; with
/// `auto` and no usable GPU the reason for the CPU goes to stderr unless
/// quiet.
pub fn select_subgroup_checker(
    choice: BackendArg,
    quiet: bool,
) -> Result<Box<dyn cuzk_core::subgroup::SubgroupChecker>> {
    let (checker, why) = cuzk_gpu::select_subgroup_checker(choice.into(), 0)
        .context("opening the GPU for the subgroup checks")?;
    if let (Some(why), false) = (why, quiet) {
        eprintln!("backend auto: {why}");
    }
    Ok(checker)
}

/// Open the chosen backend; with `auto` on a machine without a usable GPU
/// the reason for falling back to the CPU goes to stderr unless quiet.
pub fn select_backend(choice: BackendArg, quiet: bool) -> Result<cuzk_gpu::Selection> {
    select_backend_with(choice, &cuzk_gpu::GpuConfig::default(), quiet)
}

/// [`select_backend`] with the GPU backend's settings (budget, workers).
pub fn select_backend_with(
    choice: BackendArg,
    gpu: &cuzk_gpu::GpuConfig,
    quiet: bool,
) -> Result<cuzk_gpu::Selection> {
    let choice = choice.into();
    let sel = cuzk_gpu::select_backend_with(choice, gpu).context("opening the prover backend")?;
    if let (Some(why), false) = (&sel.fallback_reason, quiet) {
        if cfg!(feature = "cuda") {
            eprintln!("backend auto: using the CPU ({why})");
        } else {
            eprintln!(
                "backend auto: using the CPU (this cuzk was built without the cuda feature; \
                 the GPU build: cargo install --locked --path crates/cuzk-cli --features cuda, \
                 README \"Install\")"
            );
        }
    }
    Ok(sel)
}

/// A byte count such as `16GiB`, `512MiB` or `17` for a command-line flag.
pub fn parse_byte_size(s: &str) -> std::result::Result<u64, String> {
    cuzk_daemon::config::ByteSize::parse(s)
        .ok_or_else(|| format!("{s:?} is not a byte count (e.g. 16GiB, 512MiB, 4096)"))
}

/// How circuits are synthesized: `full` builds and evaluates every
/// constraint (as bellperson does); `compiled` records the constraints once
/// per shape (a `.r1cs` file beside the parameters) and then generates only
/// the witness, with a/b/c as sparse products. Proofs are the same.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SynthesisArg {
    Full,
    #[default]
    Compiled,
}

impl SynthesisArg {
    pub fn name(self) -> &'static str {
        match self {
            SynthesisArg::Full => "full",
            SynthesisArg::Compiled => "compiled",
        }
    }
}

/// Where the compiled porep-like circuit of one size lives in a cache.
pub fn porep_like_compiled_path(cache: &Path, log_size: u32) -> PathBuf {
    cache.join(format!("{}.r1cs", porep_like_id(log_size)))
}

pub struct CachedCompiled {
    pub compiled: cuzk_core::compiled::CompiledCircuit,
    pub path: PathBuf,
    /// Compile time when it was made now, else open time.
    pub elapsed: Duration,
    pub made: bool,
}

/// Open the compiled porep-like circuit from the cache, compiling (and
/// writing) it first if absent; checked against `params`.
pub fn porep_like_compiled(
    cache: &Path,
    log_size: u32,
    params: &Parameters,
    quiet: bool,
) -> Result<CachedCompiled> {
    let path = porep_like_compiled_path(cache, log_size);
    let id = porep_like_id(log_size);
    if !quiet && !path.exists() {
        eprintln!(
            "compiling porep-like 2^{log_size}'s constraints once (cached in {}) ...",
            path.display()
        );
    }
    let start = Instant::now();
    let (compiled, made) =
        cuzk_core::compiled::CompiledCircuit::open_or_compile(&path, &id, || {
            PorepLikeCircuit::new(log_size, 0)
        })
        .with_context(|| {
            format!(
                "compiled circuit {} (delete the file to compile it again)",
                path.display()
            )
        })?;
    compiled.check_params(params).with_context(|| {
        format!(
            "compiled circuit {} does not fit the parameters",
            path.display()
        )
    })?;
    let elapsed = start.elapsed();
    if !quiet && made {
        eprintln!(
            "  done in {:.2} s ({:.1} MB)",
            elapsed.as_secs_f64(),
            compiled.matrix_bytes() as f64 / 1e6
        );
    }
    Ok(CachedCompiled {
        compiled,
        path,
        elapsed,
        made,
    })
}

/// Synthesize porep-like circuits, fully or through the compiled system
/// (one witness per core at a time).
pub fn synthesize_porep_like(
    compiled: Option<&cuzk_core::compiled::CompiledCircuit>,
    circuits: Vec<PorepLikeCircuit>,
) -> Result<Vec<cuzk_core::synthesis::ProvingAssignment>> {
    match compiled {
        None => cuzk_core::synthesis::synthesize_batch(circuits)
            .context("synthesizing porep-like circuit"),
        Some(cc) => cc
            .synthesize_batch(circuits)
            .context("synthesizing porep-like circuit (compiled)"),
    }
}

/// What [`prove_porep_like`] made: the proofs, the phase timings (the
/// witness or full synthesis in `synthesis`) and the circuit's size.
pub struct Proved {
    pub proofs: Vec<cuzk_core::Proof>,
    pub timings: cuzk_core::PhaseTimings,
    pub constraints: usize,
    pub aux: usize,
}

/// Synthesize and prove porep-like circuits: full synthesis, or with a
/// compiled system the witnesses only, whose a/b/c the backend forms (on
/// the GPU for the CUDA backend, from the witness uploaded once).
pub fn prove_porep_like(
    backend: &dyn cuzk_core::prover::ProverBackend,
    params: &cuzk_core::Parameters,
    compiled: Option<&cuzk_core::compiled::CompiledCircuit>,
    circuits: Vec<PorepLikeCircuit>,
) -> Result<Proved> {
    let start = std::time::Instant::now();
    let mut rng = rand::rngs::OsRng;
    let (proofs, mut timings, constraints, aux) = match compiled {
        None => {
            let assignments = synthesize_porep_like(None, circuits)?;
            let synthesis = start.elapsed();
            let (constraints, aux) = (
                assignments[0].num_constraints(),
                assignments[0].aux_assignment.len(),
            );
            let (p, mut t) =
                cuzk_core::prover::prove_assignments(backend, params, &assignments, &mut rng)
                    .context("proving porep-like circuit")?;
            t.synthesis = synthesis;
            (p, t, constraints, aux)
        }
        Some(cc) => {
            let witnesses = cc
                .witness_batch(circuits)
                .context("synthesizing porep-like witnesses (compiled)")?;
            let synthesis = start.elapsed();
            let (p, mut t) =
                cuzk_core::prover::prove_witnesses(backend, params, cc, witnesses, &mut rng)
                    .context("proving porep-like circuit (compiled)")?;
            t.synthesis = synthesis;
            (p, t, cc.num_constraints(), cc.num_aux())
        }
    };
    timings.total = start.elapsed();
    Ok(Proved {
        proofs,
        timings,
        constraints,
        aux,
    })
}
