//! Prometheus text exposition of an [`EngineStatus`] snapshot: the same
//! numbers GetStatus reports, so the two always agree; in cluster mode
//! followed by this node's part of the cluster ([`render_cluster`]).

use crate::cluster::ClusterMetrics;
use crate::engine::EngineStatus;
use std::fmt::Write;

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A sample value in the exposition format: an unlimited budget
/// (`u64::MAX`, or infinity) as `+Inf`, not 18446744073709552000.
fn sample(v: f64) -> String {
    if v.is_infinite() || v >= u64::MAX as f64 {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else {
        v.to_string()
    }
}

/// One metric family: its help, type and samples.
fn family(o: &mut String, name: &str, kind: &str, help: &str, samples: &[(String, f64)]) {
    let _ = writeln!(o, "# HELP {name} {help}");
    let _ = writeln!(o, "# TYPE {name} {kind}");
    for (labels, v) in samples {
        let _ = writeln!(o, "{name}{labels} {}", sample(*v));
    }
}

pub fn render(s: &EngineStatus) -> String {
    let mut o = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, samples: &[(String, f64)]| {
        family(&mut o, name, kind, help, samples)
    };
    let one = |v: f64| vec![(String::new(), v)];
    let c = &s.counters;
    metric(
        "cuzk_jobs_total",
        "counter",
        "Jobs by outcome since start (submitted counts accepted submissions).",
        &[
            ("submitted", c.submitted),
            ("deduplicated", c.deduplicated),
            ("completed", c.completed),
            ("failed", c.failed),
            ("cancelled", c.cancelled),
            ("rejected", c.rejected),
        ]
        .map(|(k, v)| (format!("{{outcome=\"{k}\"}}"), v as f64)),
    );
    metric(
        "cuzk_batches_total",
        "counter",
        "Batches taken from the queue.",
        &one(c.batches as f64),
    );
    metric(
        "cuzk_circuits_proved_total",
        "counter",
        "Circuits (partitions) proved.",
        &one(c.circuits_proved as f64),
    );
    metric(
        "cuzk_proofs_verified_total",
        "counter",
        "Proofs checked against their verifying key and found valid.",
        &one(c.proofs_verified as f64),
    );
    metric(
        "cuzk_proof_verification_failures_total",
        "counter",
        "Proofs that did not verify (each failed its job).",
        &one(c.verification_failures as f64),
    );
    metric(
        "cuzk_queue_depth",
        "gauge",
        "Jobs waiting in each priority class.",
        &s.queues
            .iter()
            .map(|(p, n)| (format!("{{priority=\"{}\"}}", p.name()), *n as f64))
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_batch_collecting",
        "gauge",
        "Jobs in the batch collector.",
        &one(s.collecting as f64),
    );
    metric(
        "cuzk_jobs_running",
        "gauge",
        "Jobs synthesizing or proving.",
        &one(s.running as f64),
    );
    metric(
        "cuzk_ready_chunks",
        "gauge",
        "Synthesized chunks waiting for a worker.",
        &one(s.ready_chunks as f64),
    );
    metric(
        "cuzk_open_chunks",
        "gauge",
        "Chunks holding host memory whose partitions are being synthesized.",
        &one(s.open_chunks as f64),
    );
    metric(
        "cuzk_synthesizing",
        "gauge",
        "Partitions being synthesized now.",
        &one(s.synthesizing as f64),
    );
    metric(
        "cuzk_synthesis_slots",
        "gauge",
        "Partitions that may be synthesized at once (engine.synthesis_concurrency).",
        &one(s.synthesis_concurrency as f64),
    );
    metric(
        "cuzk_workers",
        "gauge",
        "Proving workers.",
        &one(s.workers as f64),
    );
    metric(
        "cuzk_worker_busy_fraction",
        "gauge",
        "Fraction of the last minute each worker spent proving.",
        &s.busy
            .workers
            .iter()
            .map(|w| {
                let dev = w.device.map_or("cpu".to_string(), |d| d.to_string());
                (
                    format!("{{worker=\"{}\",device=\"{dev}\"}}", w.worker),
                    w.busy_fraction,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_device_busy_fraction",
        "gauge",
        "Fraction of the last minute in which a GPU had a worker proving.",
        &s.busy
            .devices
            .iter()
            .map(|d| (format!("{{device=\"{}\"}}", d.device), d.busy_fraction))
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_synthesis_busy_fraction",
        "gauge",
        "Synthesis-seconds over slots times the last minute.",
        &one(s.busy.synthesis_busy_fraction),
    );
    metric(
        "cuzk_host_memory_bytes",
        "gauge",
        "Host memory reserved for synthesis, its budget, and the part of it held for compiled systems and shapes.",
        &[
            (
                "{kind=\"reserved\"}".to_string(),
                s.host_reserved_bytes as f64,
            ),
            ("{kind=\"budget\"}".to_string(), s.host_budget_bytes as f64),
            (
                "{kind=\"resident\"}".to_string(),
                s.host_resident_bytes as f64,
            ),
        ],
    );
    let mut tier = Vec::new();
    for t in &s.tiers {
        tier.push((
            format!("{{tier=\"{}\",kind=\"used\"}}", t.tier),
            t.used_bytes as f64,
        ));
        tier.push((
            format!("{{tier=\"{}\",kind=\"budget\"}}", t.tier),
            t.budget_bytes as f64,
        ));
    }
    metric(
        "cuzk_params_tier_bytes",
        "gauge",
        "Parameter bytes per tier, and budgets.",
        &tier,
    );
    metric(
        "cuzk_params_entry_bytes",
        "gauge",
        "Each parameter set's bytes in its fastest tier.",
        &s.params
            .iter()
            .map(|p| {
                (
                    format!("{{id=\"{}\",tier=\"{}\"}}", esc(&p.id), p.tier),
                    p.bytes as f64,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_gpu_backend_present",
        "gauge",
        "1 when a GPU backend drives the devices.",
        &one(if s.gpu_backend_present { 1.0 } else { 0.0 }),
    );
    let mut dev = Vec::new();
    for d in &s.devices {
        dev.push((
            format!("{{device=\"{}\",kind=\"total\"}}", d.index),
            d.vram_total_bytes as f64,
        ));
        dev.push((
            format!("{{device=\"{}\",kind=\"free\"}}", d.index),
            d.vram_free_bytes as f64,
        ));
    }
    metric("cuzk_device_vram_bytes", "gauge", "VRAM per device.", &dev);
    let p = &s.phase_sums;
    metric(
        "cuzk_job_phase_seconds_sum",
        "counter",
        "Seconds spent per phase, summed over completed jobs.",
        &[
            ("queue_wait", p.queue_wait_s),
            ("param_load", p.param_load_s),
            ("synthesis", p.synthesis_s),
            // The prover backend's time, GPU or CPU.
            ("prove", p.gpu_s),
            ("total", p.total_s),
        ]
        .map(|(k, v)| (format!("{{phase=\"{k}\"}}"), v)),
    );
    metric(
        "cuzk_job_phase_seconds_count",
        "counter",
        "Completed jobs the phase sums cover.",
        &one(p.jobs as f64),
    );
    o
}

/// This daemon's part of the cluster, in cluster mode: appended to
/// [`render`]'s text by `/metrics` and `GetMetrics`. The queue's totals
/// (every node's) are `cuzk status --cluster`'s, not a node's metrics.
pub fn render_cluster(m: &ClusterMetrics) -> String {
    let mut o = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, samples: &[(String, f64)]| {
        family(&mut o, name, kind, help, samples)
    };
    let one = |v: f64| vec![(String::new(), v)];
    metric(
        "cuzk_cluster_node_info",
        "gauge",
        "This daemon's node id and database (host:port/dbname) in cluster mode.",
        &[(
            format!(
                "{{node=\"{}\",database=\"{}\"}}",
                esc(&m.node_id),
                esc(&m.database)
            ),
            1.0,
        )],
    );
    metric(
        "cuzk_cluster_database_up",
        "gauge",
        "1 while the database answers this daemon, 0 from its first unanswered attempt.",
        &one(if m.unreachable_for.is_some() {
            0.0
        } else {
            1.0
        }),
    );
    metric(
        "cuzk_cluster_database_unreachable_seconds",
        "gauge",
        "How long the database has not answered this daemon (0 while it does).",
        &one(m.unreachable_for.map_or(0.0, |d| d.as_secs_f64())),
    );
    metric(
        "cuzk_cluster_leases_held",
        "gauge",
        "Partitions claimed here and not yet reported.",
        &one(m.leases_held as f64),
    );
    metric(
        "cuzk_cluster_max_claimed",
        "gauge",
        "Partitions this daemon holds at most (cluster.max_claimed).",
        &one(m.max_claimed as f64),
    );
    metric(
        "cuzk_cluster_reports_waiting",
        "gauge",
        "Results or failures proved here that the database has not taken yet.",
        &one(m.reports_waiting as f64),
    );
    metric(
        "cuzk_cluster_partitions_claimed_total",
        "counter",
        "Partitions this daemon claimed from the shared queue.",
        &one(m.claimed as f64),
    );
    metric(
        "cuzk_cluster_claim_errors_total",
        "counter",
        "Claims that failed (the database unavailable or erring).",
        &one(m.claim_errors as f64),
    );
    metric(
        "cuzk_cluster_results_total",
        "counter",
        "Partition results this daemon reported: stored by the queue, or refused (the lease was no longer its).",
        &[
            ("stored", m.stored),
            ("refused", m.refused),
        ]
        .map(|(k, v)| (format!("{{outcome=\"{k}\"}}"), v as f64)),
    );
    metric(
        "cuzk_cluster_partitions_ended_total",
        "counter",
        "Partitions claimed here that ended without a result: failed (reported), stopped by the queue (cancelled, job failed, lease lost) or released (shutdown).",
        &[
            ("failed", m.failed),
            ("stopped", m.stopped),
            ("released", m.released),
        ]
        .map(|(k, v)| (format!("{{how=\"{k}\"}}"), v as f64)),
    );
    metric(
        "cuzk_cluster_inputs_fetched_total",
        "counter",
        "Job inputs fetched from the database or shared storage (once per job per node).",
        &one(m.inputs_fetched as f64),
    );
    o
}

#[cfg(test)]
mod tests {
    #[test]
    fn unlimited_is_plus_inf() {
        assert_eq!(super::sample(u64::MAX as f64), "+Inf");
        assert_eq!(super::sample(f64::INFINITY), "+Inf");
        assert_eq!(super::sample(8589934592.0), "8589934592");
        assert_eq!(super::sample(0.25), "0.25");
    }
}
