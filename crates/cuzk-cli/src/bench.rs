//! `cuzk bench`: prove the porep-like circuit K times and report medians;
//! with `--compare bellperson`, bellperson's CPU prover runs on the same
//! circuit and the same parameter file in the same process, and
//! `ratio` = cuzk median / bellperson median (below 1 means cuzk is faster).

use crate::common::{self, median, ms};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::timing::PhaseTimings;
use cuzk_core::verifier::{prepare_verifying_key, verify_proof};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    Bellperson,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// log2 of the porep-like circuit's domain size.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(4..=28))]
    pub log_size: u32,
    /// Proofs per prover; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Seed of the circuit's structure and witness.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Circuits proved together in one call (partitions).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: u32,
    /// Run this prover side by side on the same circuit and parameters.
    #[arg(long, value_enum)]
    pub compare: Option<Peer>,
    /// Also time parameter generation (once per prover; slow).
    #[arg(long)]
    pub paramgen: bool,
    /// Parameter cache (default: $CUZK_CACHE_DIR, else $XDG_CACHE_HOME/cuzk,
    /// else ~/.cache/cuzk).
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Prover backend for cuzk's runs.
    #[arg(long, value_enum, default_value_t = common::BackendArg::Auto)]
    pub backend: common::BackendArg,
    /// GPU backend: cap the device memory the prover uses (e.g. 16GiB);
    /// partitions that do not fit are staged in parts or streamed.
    #[arg(long, value_parser = common::parse_byte_size)]
    pub vram_limit: Option<u64>,
    /// GPU backend: workers sharing the device (partitions of a batch run
    /// on them at once).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub gpu_workers: u32,
    /// Synthesis for cuzk's runs: `compiled` (constraints recorded once
    /// per size, then witness only), `full`, or `both` (the runs use
    /// compiled; full synthesis is timed beside it, `repeat` times).
    #[arg(long, value_enum, default_value_t = SynthesisMode::Compiled)]
    pub synthesis: SynthesisMode,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthesisMode {
    Full,
    Compiled,
    Both,
}

pub fn run(args: BenchArgs) -> Result<()> {
    let gpu = cuzk_gpu::GpuConfig {
        workers_per_device: args.gpu_workers as usize,
        budget: cuzk_gpu::BudgetConfig {
            vram_limit: args.vram_limit,
            ..cuzk_gpu::BudgetConfig::default()
        },
        ..cuzk_gpu::GpuConfig::default()
    };
    let selection = common::select_backend_with(args.backend, &gpu, args.json)?;
    let backend = selection.backend.as_ref();
    let cache = common::cache_dir(args.cache_dir.as_deref())?;
    let cached = common::porep_like_params(&cache, args.log_size, args.seed, args.json)?;
    let circuit = PorepLikeCircuit::new(args.log_size, args.seed);
    let inputs = circuit.public_inputs();
    let pvk = prepare_verifying_key(&cached.params.vk);
    let batch = args.batch as usize;
    let compiled = match args.synthesis {
        SynthesisMode::Full => None,
        SynthesisMode::Compiled | SynthesisMode::Both => Some(common::porep_like_compiled(
            &cache,
            args.log_size,
            &cached.params,
            args.json,
        )?),
    };
    let cc = compiled.as_ref().map(|c| &c.compiled);

    // cuzk: synthesis + H + MSMs + assembly, per call.
    let mut cuzk_times = Vec::new();
    let mut phase_runs: Vec<PhaseTimings> = Vec::new();
    for i in 0..args.repeat {
        let circuits = vec![circuit.clone(); batch];
        let start = Instant::now();
        let common::Proved {
            proofs, timings, ..
        } = common::prove_porep_like(backend, &cached.params, cc, circuits)
            .context("cuzk proving")?;
        cuzk_times.push(start.elapsed());
        phase_runs.push(timings);
        if !verify_proof(&pvk, &proofs[0], &inputs)? {
            bail!("cuzk proof {i} does not verify");
        }
        if !args.json {
            eprintln!("  cuzk run {}: {:.1} ms", i + 1, ms(cuzk_times[i as usize]));
        }
    }
    let cuzk_median = median(&cuzk_times);
    let phase_medians = phase_medians(&phase_runs);
    // With `both`, full synthesis of the same batch timed beside it.
    let full_synthesis = if args.synthesis == SynthesisMode::Both {
        let mut runs = Vec::new();
        for _ in 0..args.repeat {
            let t = Instant::now();
            let a = common::synthesize_porep_like(None, vec![circuit.clone(); batch])?;
            runs.push(t.elapsed());
            drop(a);
        }
        Some(median(&runs))
    } else {
        None
    };
    let synthesis_median = median(&phase_runs.iter().map(|t| t.synthesis).collect::<Vec<_>>());

    let peer = match args.compare {
        Some(Peer::Bellperson) => Some(peer::bellperson(&args, &cached.path, &circuit, &inputs)?),
        None => None,
    };

    let cuzk_paramgen = if args.paramgen {
        let start = Instant::now();
        cuzk_core::generator::generate_random_parameters(circuit.clone(), &mut rand::rngs::OsRng)?;
        Some(start.elapsed())
    } else {
        None
    };

    let ratio = peer
        .as_ref()
        .map(|p| cuzk_median.as_secs_f64() / p.median.as_secs_f64());
    let paramgen_speedup = match (cuzk_paramgen, peer.as_ref().and_then(|p| p.paramgen)) {
        (Some(c), Some(b)) => Some(b.as_secs_f64() / c.as_secs_f64()),
        _ => None,
    };
    if args.json {
        let mut obj = serde_json::json!({
            "circuit": "porep-like",
            "log_size": args.log_size,
            "batch": batch,
            "repeat": args.repeat,
            "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            "cuzk": {
                "backend": backend.name(),
                "median_ms": ms(cuzk_median),
                "runs_ms": cuzk_times.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
                "phase_medians_ms": phase_medians.iter().map(|(n, d)| (n.to_string(), serde_json::json!(ms(*d)))).collect::<serde_json::Map<_, _>>(),
                "synthesis": if cc.is_some() { "compiled" } else { "full" },
            },
        });
        if let Some(c) = &compiled {
            obj["cuzk"]["compiled_file"] = serde_json::json!(c.path);
            obj["cuzk"]["compiled_bytes"] = serde_json::json!(c.compiled.matrix_bytes());
            obj["cuzk"][if c.made {
                "compile_ms"
            } else {
                "compiled_load_ms"
            }] = serde_json::json!(ms(c.elapsed));
        }
        if let Some(f) = full_synthesis {
            obj["synthesis_compare"] = serde_json::json!({
                "full_ms": ms(f),
                "compiled_ms": ms(synthesis_median),
                "compiled_over_full": synthesis_median.as_secs_f64() / f.as_secs_f64(),
            });
        }
        if let Some(r) = &selection.reports {
            obj["cuzk"]["partitions"] = r.take_reports_json();
            obj["cuzk"]["gpu_workers"] = serde_json::json!(args.gpu_workers);
            obj["cuzk"]["vram_limit"] = serde_json::json!(args.vram_limit);
        }
        if let Some(c) = cuzk_paramgen {
            obj["cuzk"]["paramgen_ms"] = serde_json::json!(ms(c));
        }
        if let Some(p) = &peer {
            obj["bellperson"] = serde_json::json!({
                "median_ms": ms(p.median),
                "runs_ms": p.runs.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
                "paramgen_ms": p.paramgen.map(ms),
            });
            obj["ratio"] = serde_json::json!(ratio);
            obj["paramgen_speedup"] = serde_json::json!(paramgen_speedup);
        }
        println!("{obj}");
    } else {
        println!(
            "porep-like 2^{}, batch {}, {} runs each, {} threads, cuzk backend {}",
            args.log_size,
            batch,
            args.repeat,
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            backend.name()
        );
        let rows: Vec<(String, f64)> = phase_medians
            .iter()
            .map(|(n, d)| (format!("cuzk {n}"), ms(*d)))
            .collect();
        common::print_table("cuzk phase medians", &rows);
        println!("cuzk median:       {:>10.1} ms", ms(cuzk_median));
        if let Some(c) = &compiled {
            println!(
                "compiled circuit {} ({:.1} MB; {} in {:.1} ms)",
                c.path.display(),
                c.compiled.matrix_bytes() as f64 / 1e6,
                if c.made { "compiled" } else { "opened" },
                ms(c.elapsed)
            );
        }
        if let Some(f) = full_synthesis {
            println!(
                "synthesis median: full {:.1} ms, compiled {:.1} ms (ratio {:.3})",
                ms(f),
                ms(synthesis_median),
                synthesis_median.as_secs_f64() / f.as_secs_f64()
            );
        }
        if let Some(p) = &peer {
            println!("bellperson median: {:>10.1} ms", ms(p.median));
            println!(
                "ratio (cuzk / bellperson): {:.3}",
                ratio.unwrap_or(f64::NAN)
            );
        }
        if let Some(c) = cuzk_paramgen {
            println!("cuzk paramgen:       {:>10.1} ms", ms(c));
        }
        if let Some(b) = peer.as_ref().and_then(|p| p.paramgen) {
            println!("bellperson paramgen: {:>10.1} ms", ms(b));
            println!(
                "paramgen speedup (bellperson / cuzk): {:.2}x",
                paramgen_speedup.unwrap_or(f64::NAN)
            );
        }
    }
    Ok(())
}

fn phase_medians(runs: &[PhaseTimings]) -> Vec<(&'static str, Duration)> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .phases()
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            (
                *name,
                median(&runs.iter().map(|r| r.phases()[i].1).collect::<Vec<_>>()),
            )
        })
        .filter(|(_, d)| !d.is_zero())
        .collect()
}

pub struct PeerResult {
    pub median: Duration,
    pub runs: Vec<Duration>,
    pub paramgen: Option<Duration>,
}

#[cfg(feature = "compare-bellperson")]
mod peer {
    use super::*;
    use bellperson::groth16 as bp;
    use blstrs::{Bls12, Scalar};
    use std::path::Path;

    /// bellperson's CPU prover on the same circuit, reading the same file.
    pub fn bellperson(
        args: &BenchArgs,
        params_path: &Path,
        circuit: &PorepLikeCircuit,
        inputs: &[Scalar],
    ) -> Result<PeerResult> {
        let file = std::fs::File::open(params_path)
            .with_context(|| format!("opening {}", params_path.display()))?;
        let params = bp::Parameters::<Bls12>::read(std::io::BufReader::new(file), false)
            .with_context(|| format!("bellperson reading {}", params_path.display()))?;
        let pvk = bp::prepare_verifying_key(&params.vk);
        let mut runs = Vec::new();
        for i in 0..args.repeat {
            let circuits = vec![circuit.clone(); args.batch as usize];
            let start = Instant::now();
            let proofs = bp::create_random_proof_batch(circuits, &params, &mut rand::rngs::OsRng)
                .context("bellperson proving")?;
            runs.push(start.elapsed());
            if !bp::verify_proof(&pvk, &proofs[0], inputs).context("bellperson verifying")? {
                bail!("bellperson proof {i} does not verify");
            }
            if !args.json {
                eprintln!("  bellperson run {}: {:.1} ms", i + 1, ms(runs[i as usize]));
            }
        }
        let paramgen = if args.paramgen {
            let start = Instant::now();
            bp::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rand::rngs::OsRng)
                .context("bellperson generating parameters")?;
            Some(start.elapsed())
        } else {
            None
        };
        Ok(PeerResult {
            median: median(&runs),
            runs,
            paramgen,
        })
    }
}

#[cfg(not(feature = "compare-bellperson"))]
mod peer {
    use super::*;
    use blstrs::Scalar;
    use std::path::Path;
    pub fn bellperson(
        _: &BenchArgs,
        _: &Path,
        _: &PorepLikeCircuit,
        _: &[Scalar],
    ) -> Result<PeerResult> {
        bail!("this cuzk was built without the compare-bellperson feature")
    }
}
