//! `cuzk bench-kernels`: the CUDA kernel benchmarks of cuzk-cuda (G1 MSM at
//! 2^20/2^24/2^26 resident and streamed from pinned memory, G2 MSM at 2^24,
//! the 0/1 path at 2^26, NTT at 2^24 and 2^27), each with the work it must
//! do, the floor that work gives on the card, and the measured gap. Prints a
//! table, or one JSON object with `--json`. Thin: the work is in
//! `cuzk_cuda::bench`; a build without CUDA support says so.

use anyhow::{Context, Result};
use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct BenchKernelsArgs {
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Timed repetitions per row (the median is reported), after one warm-up.
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Only rows whose name contains this (e.g. "msm_g1", "ntt").
    #[arg(long)]
    pub filter: Option<String>,
    /// Divide every size by 2^K for a quick run (0 = the sizes above).
    #[arg(long, default_value_t = 0)]
    pub shrink: u32,
    /// Seed of the random points and scalars (default: fresh).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: BenchKernelsArgs) -> Result<()> {
    let opts = cuzk_cuda::bench::BenchOptions {
        reps: args.reps.max(1),
        filter: args.filter,
        shrink: args.shrink,
        seed: args.seed.unwrap_or_else(rand::random),
    };
    let report = cuzk_cuda::bench::run_on_device(args.device, &opts)
        .with_context(|| format!("kernel benchmarks on GPU {}", args.device))?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", cuzk_cuda::bench::table(&report));
    }
    Ok(())
}
