//! Parameter generation for porep-like circuits, from a synthesis of the
//! circuit ("full") against from its compiled system ("compiled", mapped
//! from its `.r1cs` file as `cuzk params gen` does), on the CPU fixed-base
//! engine: the median of `repeat` runs per size, with where the time went
//! (the constraints: synthesis, or opening the file; the scalars: the
//! Lagrange basis and the QAP's evaluation at tau; the G1 and G2
//! multiplications), the one-off compile, and a CRC-32 of each run's
//! `.params` bytes, which must be equal for both (the same toxic waste).
//! The points go to a sink that only checksums them, so the disk is not
//! timed. With `--mode full` or `--mode compiled` only one runs, so that
//! the process's peak memory (printed, VmHWM) is that mode's. With
//! `--engine none` the multiplications are skipped (every point is the
//! generator: not parameters, but the constraint and scalar phases are
//! timed alike at sizes whose multiplications would take hours here).
//!
//! The compiled files go to a temporary directory, or to `--dir DIR`,
//! where they are kept and, on the next run, mapped without compiling.
//!
//!     cargo run --release -p cuzk-core --example paramgen_bench -- 16 18 20 [--repeat 3] [--mode both|full|compiled] [--engine cpu|none] [--dir DIR]
//!
//! Prints a table and then one JSON line per size.

use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::compiled::{self, CompiledCircuit};
use cuzk_core::generator::{
    self, CpuFixedBase, FixedBaseEngine, FixedBaseTable, GenerationTimings, ToxicWaste,
};
use cuzk_core::params::ParamsFileSink;
use cuzk_core::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::prime::PrimeCurveAffine;
use rand::SeedableRng;
use std::time::Instant;

/// A writer that only checksums what it is given.
struct Crc(crc32fast::Hasher, u64);

impl std::io::Write for Crc {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.update(b);
        self.1 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every point the generator: the multiplications skipped.
struct NoMultiplications;

impl FixedBaseEngine for NoMultiplications {
    fn name(&self) -> String {
        "none".into()
    }
    fn mul_g1(
        &self,
        _: &FixedBaseTable<G1Projective>,
        s: &[Scalar],
    ) -> cuzk_core::Result<Vec<G1Affine>> {
        Ok(vec![G1Affine::generator(); s.len()])
    }
    fn mul_g2(
        &self,
        _: &FixedBaseTable<G2Projective>,
        s: &[Scalar],
    ) -> cuzk_core::Result<Vec<G2Affine>> {
        Ok(vec![G2Affine::generator(); s.len()])
    }
}

/// The medians of one mode's runs (seconds).
struct Row {
    mode: &'static str,
    total: f64,
    constraints: f64,
    scalars: f64,
    evaluation: f64,
    g1: f64,
    g2: f64,
    crc: (u32, u64),
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn secs(d: std::time::Duration) -> f64 {
    d.as_secs_f64()
}

/// Seconds for JSON: `null` where not measured (NaN).
fn json_secs(s: f64) -> String {
    if s.is_nan() {
        "null".into()
    } else {
        format!("{s:.3}")
    }
}

/// The process's peak resident memory (VmHWM), in MiB.
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// One run's timings (seconds), the constraints' phase apart.
struct Run {
    constraints: f64,
    t: GenerationTimings,
    total: f64,
    crc: (u32, u64),
}

fn run_full(log: u32, waste: &ToxicWaste, engine: &dyn FixedBaseEngine) -> Run {
    let start = Instant::now();
    let mut sink = ParamsFileSink::new(Crc(crc32fast::Hasher::new(), 0));
    let t = generator::generate_parameters_into(
        PorepLikeCircuit::new(log, 0),
        waste,
        engine,
        &mut sink,
        &|_| {},
    )
    .expect("full generation");
    let total = secs(start.elapsed());
    let crc = sink.finish().expect("sink");
    Run {
        constraints: secs(t.synthesis),
        t,
        total,
        crc: (crc.0.finalize(), crc.1),
    }
}

fn run_compiled(
    path: &std::path::Path,
    id: &str,
    waste: &ToxicWaste,
    engine: &dyn FixedBaseEngine,
) -> Run {
    let start = Instant::now();
    let cc = CompiledCircuit::open(path, Some(id)).expect("open the compiled file");
    let constraints = secs(start.elapsed());
    let mut sink = ParamsFileSink::new(Crc(crc32fast::Hasher::new(), 0));
    let t = generator::generate_parameters_compiled_into(&cc, waste, engine, &mut sink, &|_| {})
        .expect("compiled generation");
    let total = secs(start.elapsed());
    let crc = sink.finish().expect("sink");
    Run {
        constraints,
        t,
        total,
        crc: (crc.0.finalize(), crc.1),
    }
}

fn main() {
    let mut sizes = Vec::new();
    let mut repeat = 3usize;
    let mut mode = "both".to_string();
    let mut engine_name = "cpu".to_string();
    let mut keep_dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--repeat" => {
                repeat = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--repeat N")
            }
            "--mode" => mode = args.next().expect("--mode both|full|compiled"),
            "--engine" => engine_name = args.next().expect("--engine cpu|none"),
            "--dir" => keep_dir = Some(std::path::PathBuf::from(args.next().expect("--dir DIR"))),
            s => sizes.push(s.parse::<u32>().expect("a log size")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![16];
    }
    let (do_full, do_comp) = match mode.as_str() {
        "both" => (true, true),
        "full" => (true, false),
        "compiled" => (false, true),
        m => panic!("--mode {m}: both, full or compiled"),
    };
    let engine: Box<dyn FixedBaseEngine> = match engine_name.as_str() {
        "cpu" => Box::new(CpuFixedBase),
        "none" => Box::new(NoMultiplications),
        e => panic!("--engine {e}: cpu or none"),
    };
    let repeat = repeat.max(1);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let dir = keep_dir.unwrap_or_else(|| tmp.path().to_path_buf());
    println!(
        "{:>4} {:>6} {:>9} {:>11} {:>9} {:>8} {:>8} {:>8} {:>10} {:>8}",
        "log",
        "mode",
        "total s",
        "constraints",
        "scalars",
        "of: eval",
        "G1",
        "G2",
        "compile s",
        "r1cs MB"
    );
    for log in sizes {
        let id = cuzk_core::circuits::porep_like::params_id(log);
        let path = dir.join(format!("{id}.r1cs"));
        // Compiled once unless the file is in --dir already (then this
        // process's peak memory is generation's alone); not at all for
        // --mode full.
        let mut compile_s = f64::NAN;
        if do_comp && !path.exists() {
            let t = Instant::now();
            let cc = compiled::compile(PorepLikeCircuit::new(log, 0), &id).expect("compile");
            compile_s = secs(t.elapsed());
            cc.write_file(&path).expect("write the compiled file");
        }
        let r1cs_mb = std::fs::metadata(&path).map_or(0, |m| m.len()) as f64 / 1e6;
        let waste =
            ToxicWaste::random(&mut rand_chacha::ChaCha20Rng::seed_from_u64(u64::from(log)));
        let mut results = Vec::new();
        for (name, on) in [("full", do_full), ("compiled", do_comp)] {
            if !on {
                continue;
            }
            let runs: Vec<Run> = (0..repeat)
                .map(|_| match name {
                    "full" => run_full(log, &waste, engine.as_ref()),
                    _ => run_compiled(&path, &id, &waste, engine.as_ref()),
                })
                .collect();
            let crcs: Vec<_> = runs.iter().map(|r| r.crc).collect();
            assert!(crcs.windows(2).all(|w| w[0] == w[1]), "{name}: runs differ");
            let m = |f: &dyn Fn(&Run) -> f64| median(runs.iter().map(f).collect());
            let row = Row {
                mode: name,
                total: m(&|r| r.total),
                constraints: m(&|r| r.constraints),
                scalars: m(&|r| secs(r.t.scalars)),
                evaluation: m(&|r| secs(r.t.evaluation)),
                g1: m(&|r| secs(r.t.g1)),
                g2: m(&|r| secs(r.t.g2)),
                crc: crcs[0],
            };
            println!(
                "{:>4} {:>6} {:>9.3} {:>11.3} {:>9.3} {:>8.3} {:>8.3} {:>8.3} {:>10.3} {:>8.1}",
                log,
                &name[..name.len().min(6)],
                row.total,
                row.constraints,
                row.scalars,
                row.evaluation,
                row.g1,
                row.g2,
                compile_s,
                r1cs_mb
            );
            results.push(row);
        }
        if let [f, c] = &results[..] {
            assert_eq!(f.crc, c.crc, "2^{log}: the parameters differ");
        }
        for r in &results {
            println!(
                "{{\"log\":{log},\"mode\":\"{}\",\"engine\":\"{}\",\"repeat\":{repeat},\
                 \"total_s\":{:.3},\"constraints_s\":{:.3},\"scalars_s\":{:.3},\
                 \"evaluation_s\":{:.3},\"g1_s\":{:.3},\"g2_s\":{:.3},\
                 \"compile_s\":{},\"r1cs_mb\":{r1cs_mb:.1},\"params_crc32\":{},\
                 \"params_bytes\":{},\"threads\":{},\"peak_mib\":{:.0}}}",
                r.mode,
                engine.name(),
                r.total,
                r.constraints,
                r.scalars,
                r.evaluation,
                r.g1,
                r.g2,
                json_secs(compile_s),
                r.crc.0,
                r.crc.1,
                rayon::current_num_threads(),
                peak_mib()
            );
        }
    }
}
