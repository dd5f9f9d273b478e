//! The `cuzk` subcommands that run or talk to the proving daemon. The
//! logic lives in [`crate::daemon_cli`]; this module only declares the
//! commands and dispatches them.

use crate::daemon_cli as cli;

#[derive(clap::Subcommand, Debug)]
pub enum DaemonCommands {
    /// Run the proving daemon (gRPC on a unix socket and/or TCP, HTTP
    /// metrics) until SIGTERM.
    Daemon(cli::DaemonArgs),
    /// Queue a proof; prints its job id at once.
    Submit(cli::SubmitArgs),
    /// Wait for a job and print its outcome.
    Await(cli::AwaitArgs),
    /// Submit a proof to a daemon and wait for it (`cuzk prove --filecoin
    /// KIND ...` instead proves a Filecoin proof here, without a daemon).
    Prove(cli::ProveArgs),
    /// Cancel a queued or running job.
    Cancel(cli::CancelArgs),
    /// Devices, parameters and their tiers, queues, counters, budgets
    /// (a table; `--json` for the object).
    Status(cli::StatusArgs),
    /// Fetch a circuit kind's verifying key from the daemon (for `cuzk
    /// verify --vk`; `cuzk verify --kind` fetches it itself).
    Vk(cli::VkArgs),
    /// Load circuit kinds' parameters into memory.
    Preload(cli::ParamsArgs),
    /// Drop circuit kinds' parameters from memory.
    Evict(cli::ParamsArgs),
    /// Write the daemon's timeline of the last N seconds (every partition's
    /// queue wait, synthesis, proving, verification) as a Chrome trace.
    Trace(cli::TraceArgs),
}

/// Arguments of `cuzk bench batch`.
#[derive(clap::Args, Debug)]
pub struct BenchBatchArgs {
    #[command(flatten)]
    pub inner: cli::BenchBatchOptions,
}

pub fn run(cmd: DaemonCommands) -> anyhow::Result<()> {
    match cmd {
        DaemonCommands::Daemon(a) => cli::run_daemon(a),
        DaemonCommands::Submit(a) => {
            cli::run_client(a.conn.json, || async { cli::submit(&a).await })
        }
        DaemonCommands::Await(a) => {
            cli::run_client(a.conn.json, || async { cli::await_job(&a).await })
        }
        DaemonCommands::Prove(a) => cli::run_client(a.conn.json, || async { cli::prove(&a).await }),
        DaemonCommands::Cancel(a) => {
            cli::run_client(a.conn.json, || async { cli::cancel(&a).await })
        }
        DaemonCommands::Status(a) => cli::run_status(&a),
        DaemonCommands::Vk(a) => cli::run_client(a.conn.json, || async { cli::vk(&a).await }),
        DaemonCommands::Preload(a) => {
            cli::run_client(a.conn.json, || async { cli::preload(&a).await })
        }
        DaemonCommands::Evict(a) => cli::run_client(a.conn.json, || async { cli::evict(&a).await }),
        DaemonCommands::Trace(a) => cli::run_client(a.conn.json, || async { cli::trace(&a).await }),
    }
}

/// `cuzk bench batch --count N --concurrency J`: proofs per minute, busy
/// fractions, verified proofs and per-phase medians against a running
/// daemon; fails when a job failed or a proof was not verified.
pub fn run_bench_batch(args: BenchBatchArgs) -> anyhow::Result<()> {
    cli::run_bench_batch(&args.inner)
}
