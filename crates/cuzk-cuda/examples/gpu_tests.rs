//! Runs the GPU checks (cuzk_cuda::checks) on device 0; scripts/gpu-test.sh
//! runs it on the GPU machine. Last line: `N passed, M failed`.
//! Usage: gpu_tests [--large] [--seed N] [--filter TEXT]

fn main() -> std::process::ExitCode {
    let mut opts = cuzk_cuda::checks::CheckOptions {
        seed: rand::random(),
        large: false,
        filter: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--large" => opts.large = true,
            "--seed" => {
                opts.seed = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(opts.seed)
            }
            "--filter" => opts.filter = args.next(),
            other => {
                eprintln!("unknown argument {other}");
                return std::process::ExitCode::from(2);
            }
        }
    }
    let dev = match cuzk_cuda::CudaDevice::open(0) {
        Ok(d) => d,
        Err(e) => {
            println!("cannot open GPU 0: {e}");
            println!("0 passed, 1 failed");
            return std::process::ExitCode::from(1);
        }
    };
    let s = cuzk_cuda::checks::run(&dev, &opts);
    println!("{} passed, {} failed", s.passed, s.failed);
    if s.failed == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    }
}
