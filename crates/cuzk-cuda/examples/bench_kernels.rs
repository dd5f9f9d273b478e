//! The kernel benchmarks without the CLI: bench_kernels [--json] [--reps N]
//! [--filter TEXT] [--shrink K] [--json-out FILE]. Same library code as `cuzk bench-kernels`.

fn main() -> anyhow::Result<()> {
    let mut opts = cuzk_cuda::bench::BenchOptions {
        reps: 5,
        filter: None,
        shrink: 0,
        seed: rand::random(),
    };
    let mut json = false;
    let mut json_out: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = true,
            "--json-out" => json_out = args.next(),
            "--reps" => {
                opts.reps = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(opts.reps)
            }
            "--filter" => opts.filter = args.next(),
            "--shrink" => opts.shrink = args.next().and_then(|v| v.parse().ok()).unwrap_or(0),
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    let dev = cuzk_cuda::CudaDevice::open(0)?;
    let report = cuzk_cuda::bench::run(&dev, &opts)?;
    if let Some(path) = json_out {
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)?;
    }
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", cuzk_cuda::bench::table(&report));
    }
    Ok(())
}
