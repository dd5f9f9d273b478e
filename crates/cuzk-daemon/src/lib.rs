//! cuzk-daemon: the proving daemon operators run.
//!
//! - [`config`]: the `cuzk.toml` configuration.
//! - [`kinds`]: the circuit-kind registry (porep-like now; more kinds plug
//!   in as trait objects); [`filecoin`]: Filecoin's kinds, one per circuit,
//!   on cuzk-filecoin.
//! - [`scheduler`]: priority classes, FIFO, batch collector, worker affinity.
//! - [`params`]: the tiered parameter manager (VRAM, pinned RAM, mapped, disk).
//! - [`budget`]: the host-memory budget for synthesis.
//! - [`devices`]: the hardware seam (CPU implementation here); [`fit`]:
//!   refusing at submission a job whose partitions fit no GPU.
//! - [`engine`]: jobs, the synthesis/proving pipeline, and the [`Engine`]
//!   handle front ends wrap; [`failure`]: why a job did not complete.
//! - [`service`], [`server`], [`http`]: the gRPC service, listeners and
//!   access control, HTTP metrics/status/trace and the status page;
//!   [`curio`]: Curio's `cuzk.v1.ProvingEngine` service beside cuzk's own;
//!   [`history`]: the page's last hour of samples; [`metrics`]: Prometheus text;
//!   [`keys`]: the verifying keys' service.
//! - [`report`]: the daemon's status as JSON and as tables for people.
//! - [`trace`]: the engine's timeline (Chrome trace export, busy fractions).
//! - [`client`]: the gRPC client (the `cuzk` command's daemon subcommands
//!   live in cuzk-cli).
//! - [`cluster`]: cluster mode, the queue shared with other daemons in a
//!   PostgreSQL-protocol database (`[cluster]`).

pub mod authority;
pub mod budget;
pub mod client;
pub mod cluster;
pub mod config;
pub mod curio;
pub mod devices;
pub mod engine;
pub mod failure;
pub mod filecoin;
pub mod fit;
pub mod history;
pub mod http;
pub mod keys;
pub mod kinds;
pub mod metrics;
pub mod params;
pub mod report;
pub mod scheduler;
pub mod server;
pub mod service;
pub mod size_limit;
pub mod trace;

/// Code generated from `proto/cuzk_daemon.proto`.
pub mod proto {
    #![allow(clippy::all)]
    tonic::include_proto!("cuzk.daemon.v1");
}

pub use config::DaemonConfig;
pub use engine::{Engine, EngineError, JobState, JobView, SubmitRequest, Submitted};
pub use failure::JobFailure;
pub use scheduler::Priority;
pub use server::{DaemonBuilder, RunningDaemon, ServiceHook};
