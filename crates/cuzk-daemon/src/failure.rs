//! Why a job did not complete, as a value: the engine records one per failed job
//! ([`crate::JobView::error`]), front ends match on it (which partition,
//! which GPU, which step) and render it as one line only at their edge
//! (gRPC's `error`, Curio's `error_message`, the status page, the cluster's
//! stored reason). The lines are the ones the daemon always printed.

use crate::budget::BudgetTooSmall;
use crate::fit::NoGpuFits;
use crate::kinds::KindError;
use crate::params::ParamsError;
use std::sync::Arc;

/// Why a job failed (or was cancelled). Sources that are not `Clone` are shared (`Arc`), so a
/// job's view can be handed to every waiter.
#[derive(Clone, Debug, thiserror::Error)]
pub enum JobFailure {
    /// The job's kind refused it when its batch was split (a kind no
    /// longer registered).
    #[error(transparent)]
    Kind(Arc<KindError>),
    /// The kind's parameters could not be loaded.
    #[error(transparent)]
    Params(Arc<ParamsError>),
    /// A partition fits no plan on any GPU in service.
    #[error(transparent)]
    NoGpuFits(Arc<NoGpuFits>),
    /// The host-memory budget can never hold a chunk of the job's
    /// partitions.
    #[error(transparent)]
    HostBudget(Arc<BudgetTooSmall>),
    /// No GPU is left in service; each GPU with the last error it gave.
    #[error("no GPU is left in service ({})", gpu_list(.gpus))]
    NoGpuInService { gpus: Vec<GpuLastError> },
    /// The kind could not synthesize a partition from the job's input.
    #[error("{source}")]
    Synthesis {
        partition: usize,
        #[source]
        source: Arc<KindError>,
    },
    /// Synthesis of a partition stopped (its task panicked) or gave a
    /// number of circuits other than one.
    #[error("{what}")]
    SynthesisBroken {
        kind: String,
        partition: usize,
        what: String,
    },
    /// The prover backend refused the job's chunk with an error that any
    /// device would give (not a lost device).
    #[error("{source}")]
    Prover {
        backend: String,
        device: Option<u32>,
        #[source]
        source: Arc<cuzk_core::Error>,
    },
    /// The prover backend stopped (its task panicked) or gave a number of
    /// proofs other than the chunk's circuits.
    #[error("{what}")]
    ProverBroken {
        backend: String,
        device: Option<u32>,
        what: String,
    },
    /// A partition failed on GPUs on every try it was allowed.
    #[error(
        "partition {partition} failed on every try it was allowed ({} of {allowed}: {})",
        tries.len(),
        try_list(.tries)
    )]
    RetriesExhausted {
        partition: usize,
        allowed: u64,
        tries: Vec<DeviceFailure>,
    },
    /// A partition failed on a GPU while the daemon shut down (nothing
    /// retries it any more).
    #[error("partition {partition} failed on gpu {device} while the daemon shut down: {error}")]
    FailedAtShutdown {
        partition: usize,
        device: u32,
        error: String,
    },
    /// The job was cancelled by a client before it completed.
    #[error("cancelled by request")]
    Cancelled,
    /// A partition's proof did not verify against the kind's verifying
    /// key; it is not returned.
    #[error(
        "the proof of partition {partition} does not verify against the verifying key of \
         parameters {params_id}"
    )]
    NotVerified { partition: usize, params_id: String },
}

/// A GPU and the last error it reported (`None`: none recorded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuLastError {
    pub device: u32,
    pub error: Option<String>,
}

/// One failed try of a partition on a GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFailure {
    pub device: u32,
    pub error: String,
}

fn gpu_list(gpus: &[GpuLastError]) -> String {
    gpus.iter()
        .map(|g| {
            format!(
                "gpu {}: {}",
                g.device,
                g.error.as_deref().unwrap_or("no error recorded")
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn try_list(tries: &[DeviceFailure]) -> String {
    tries
        .iter()
        .map(|t| format!("gpu {}: {}", t.device, t.error))
        .collect::<Vec<_>>()
        .join("; ")
}

impl JobFailure {
    /// The partition the failure concerns, where it concerns one.
    pub fn partition(&self) -> Option<usize> {
        match self {
            JobFailure::Synthesis { partition, .. }
            | JobFailure::SynthesisBroken { partition, .. }
            | JobFailure::RetriesExhausted { partition, .. }
            | JobFailure::FailedAtShutdown { partition, .. }
            | JobFailure::NotVerified { partition, .. } => Some(*partition),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_the_partition_and_each_gpu() {
        let f = JobFailure::RetriesExhausted {
            partition: 3,
            allowed: 2,
            tries: vec![
                DeviceFailure {
                    device: 0,
                    error: "lost".into(),
                },
                DeviceFailure {
                    device: 1,
                    error: "lost too".into(),
                },
            ],
        };
        assert_eq!(
            f.to_string(),
            "partition 3 failed on every try it was allowed (2 of 2: gpu 0: lost; gpu 1: lost too)"
        );
        assert_eq!(f.partition(), Some(3));
        let g = JobFailure::NoGpuInService {
            gpus: vec![
                GpuLastError {
                    device: 0,
                    error: Some("lost".into()),
                },
                GpuLastError {
                    device: 1,
                    error: None,
                },
            ],
        };
        assert_eq!(
            g.to_string(),
            "no GPU is left in service (gpu 0: lost; gpu 1: no error recorded)"
        );
        assert_eq!(g.partition(), None);
        let v = JobFailure::NotVerified {
            partition: 0,
            params_id: "p".into(),
        };
        assert!(v.to_string().contains("does not verify"));
        let bad = JobFailure::Synthesis {
            partition: 1,
            source: Arc::new(KindError::MalformedInput {
                kind: "k".into(),
                source: "short".into(),
            }),
        };
        assert_eq!(bad.partition(), Some(1));
        assert_eq!(bad.to_string(), "kind k: malformed input: short");
    }
}
