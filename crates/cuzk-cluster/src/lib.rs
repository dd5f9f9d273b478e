//! Cluster mode for cuzk: several daemons sharing one durable job queue in
//! a PostgreSQL-protocol database (PostgreSQL, or YugabyteDB as Curio
//! runs), instead of each holding its own queue in memory.
//!
//! **Status:** the daemon uses it in cluster mode (`[cluster]
//! database_url`, `cuzk-daemon/src/cluster.rs`): its gRPC `ProofService`
//! submits into and awaits from this queue, and a feeder claims partitions
//! and proves them through the daemon's engine; `cuzk status --cluster`
//! reads the nodes and the queue from here; Curio's `cuzk.v1` service
//! takes the same path. `DESIGN.md` beside this file lists what is built
//! and what is not, item by item against issue 15, and how the queue
//! behaves at scale.
//!
//! What it provides, all through [`ClusterClient`] (one node's reconnecting
//! connection):
//! - [`ClusterClient::migrate`]: versioned schema migrations, safe when
//!   several daemons start at once;
//! - the queue ([`queue`]): idempotent submit by request id, per-partition
//!   claims with `FOR UPDATE SKIP LOCKED` in priority then placement then
//!   age order (a young partition left to an alive node holding its kind
//!   resident with room), leases renewed while working and reaped when they expire,
//!   bounded retries with the reasons kept, results stored and the job's
//!   proof assembled from its partitions exactly once, cancellation seen
//!   by the lease holder;
//! - [`LeaseKeeper`]: renews a node's leases on a task and connection of
//!   their own while the partitions are proved, and says when to stop;
//! - node heartbeats ([`nodes`]).
//!
//! Layering: this crate knows nothing of circuits, kinds or proofs beyond
//! their names and bytes. The daemon's kind registry decodes inputs and
//! counts partitions before [`ClusterClient::submit`], and checks the
//! proofs it reads back; the database holds bytes and states.

mod client;
mod error;
pub mod keeper;
mod migrate;
pub mod nodes;
pub mod queue;

pub use client::{ClusterClient, ClusterConfig, Unreachable};
pub use error::{ClusterError, Unavailable};
pub use keeper::{HeldLease, LeaseKeeper};
pub use migrate::SCHEMA_VERSION;
pub use nodes::{NodeRecord, NodeReport};
pub use queue::{
    ClaimRequest, Completion, FailMode, FailOutcome, FailureRecord, JobId, JobInput, JobRecord,
    JobState, JobTimings, Lease, LeaseKey, LeaseStatus, NewJob, PartitionRecord, PartitionResult,
    PartitionState, Priority, QueueDepth, QueueOverview, StopReason, Submitted,
};
