//! The daemon's state as people and programs read it: `GetStatus` and
//! `GetClusterStatus` as JSON objects (what `cuzk status --json` prints and
//! HTTP /status carries) and as aligned tables with units (what `cuzk
//! status` prints), priorities by the scheduler's names, milliseconds
//! rounded for printing. Nothing here talks to a daemon or prints.

use crate::proto;
use serde_json::{json, Value};

/// Milliseconds rounded to the microsecond (the clocks' noise below it,
/// and float sums' `51.110487000000006`, are not worth printing).
pub fn round_ms(ms: f64) -> f64 {
    (ms * 1e3).round() / 1e3
}

/// A protocol priority by the scheduler's names (`critical` ... `low`), the
/// ones HTTP /status, the metrics and `--priority` use.
pub fn priority_name(p: i32) -> &'static str {
    match proto::Priority::try_from(p) {
        Ok(proto::Priority::Low) => crate::Priority::Low.name(),
        Ok(proto::Priority::Normal) | Ok(proto::Priority::Unspecified) => {
            crate::Priority::Normal.name()
        }
        Ok(proto::Priority::High) => crate::Priority::High.name(),
        Ok(proto::Priority::Critical) => crate::Priority::Critical.name(),
        Err(_) => "unknown",
    }
}

pub fn status_json(s: &proto::GetStatusResponse) -> Value {
    let c = s.counters.unwrap_or_default();
    json!({
        "backend": s.backend,
        "gpu_backend_present": s.gpu_backend_present,
        "note": if s.gpu_backend_present { Value::Null } else { json!("no GPU backend is present: proving on the CPU, VRAM tier unused") },
        "devices": s.devices.iter().map(|d| json!({"index": d.index, "name": d.name, "vram_total_bytes": d.vram_total_bytes, "vram_free_bytes": d.vram_free_bytes, "healthy": d.healthy, "partitions_proved": d.partitions_proved, "failures": d.failures, "last_error": (!d.last_error.is_empty()).then_some(&d.last_error), "out_since_unix_ms": (d.out_since_unix_ms > 0).then_some(d.out_since_unix_ms), "probes": d.probes, "last_probe_unix_ms": (d.last_probe_unix_ms > 0).then_some(d.last_probe_unix_ms), "last_probe_error": (!d.last_probe_error.is_empty()).then_some(&d.last_probe_error), "returned": d.returned, "busy_s": d.busy_s, "busy_fraction": d.busy_fraction, "busy_fraction_window": d.busy_fraction_window})).collect::<Vec<_>>(),
        "params": s.params.iter().map(|p| json!({"id": p.id, "tier": p.tier, "bytes": p.bytes, "ref_count": p.ref_count, "devices": p.devices})).collect::<Vec<_>>(),
        "tiers": s.tiers.iter().map(|t| json!({"tier": t.tier, "used_bytes": t.used_bytes, "budget_bytes": t.budget_bytes})).collect::<Vec<_>>(),
        "queues": s.queues.iter().map(|q| json!({"priority": priority_name(q.priority), "queued": q.queued})).collect::<Vec<_>>(),
        "collecting": s.collecting,
        "running": s.running,
        "workers": s.workers,
        "host_reserved_bytes": s.host_reserved_bytes,
        "host_budget_bytes": s.host_budget_bytes,
        "host_resident_bytes": s.host_resident_bytes,
        "counters": {"submitted": c.submitted, "deduplicated": c.deduplicated, "completed": c.completed, "failed": c.failed, "cancelled": c.cancelled, "rejected": c.rejected, "batches": c.batches, "circuits_proved": c.circuits_proved, "proofs_verified": c.proofs_verified, "verification_failures": c.verification_failures},
        "kinds": s.kinds,
        "cluster": s.cluster.as_ref().map(cluster_json),
        "shutting_down": s.shutting_down,
        "pipeline": {"synthesizing": s.synthesizing, "synthesis_concurrency": s.synthesis_concurrency, "open_chunks": s.open_chunks, "ready_chunks": s.ready_chunks},
        "busy": {
            "window_s": s.busy_window_s,
            "workers": s.worker_busy.iter().map(|w| json!({"worker": w.worker, "device": w.device, "busy_fraction": w.busy_fraction})).collect::<Vec<_>>(),
            "synthesis_busy_fraction": s.synthesis_busy_fraction,
        },
    })
}

/// A byte count for people: `512 B`, `1.5 KiB` ... `2.0 TiB`; `u64::MAX`
/// (the protocol's "no budget") as `unlimited`.
pub fn human_bytes(n: u64) -> String {
    if n == u64::MAX {
        return "unlimited".into();
    }
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut x = n as f64 / 1024.0;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    format!("{x:.1} {}", UNITS[u])
}

/// `cuzk status` on a terminal: [`status_json`]'s facts as a few aligned
/// tables with units (`--json` prints the object itself).
pub fn status_text(v: &Value) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let b = |x: &Value| human_bytes(n(x));
    let pct = |x: &Value| format!("{:.0}%", x.as_f64().unwrap_or(0.0) * 100.0);
    let list = |x: &Value| {
        x.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let _ = write!(o, "backend   {}", v["backend"].as_str().unwrap_or("?"));
    if let Some(note) = v["note"].as_str() {
        let _ = write!(o, " ({note})");
    }
    o.push('\n');
    if v["shutting_down"] == json!(true) {
        o.push_str("state     shutting down\n");
    }
    let _ = writeln!(o, "kinds     {}", list(&v["kinds"]));
    if v["cluster"].is_object() {
        o.push_str(&cluster_line(&v["cluster"]));
    }
    let p = &v["pipeline"];
    let _ = writeln!(
        o,
        "jobs      {} running, {} in batch collectors; queued: {}",
        n(&v["running"]),
        n(&v["collecting"]),
        v["queues"]
            .as_array()
            .map(|q| q
                .iter()
                .map(|q| format!(
                    "{} {}",
                    q["priority"].as_str().unwrap_or("?"),
                    n(&q["queued"])
                ))
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "pipeline  {} workers; synthesis {} of {} slots busy; chunks {} synthesizing, {} ready",
        n(&v["workers"]),
        n(&p["synthesizing"]),
        n(&p["synthesis_concurrency"]),
        n(&p["open_chunks"]),
        n(&p["ready_chunks"])
    );
    let c = &v["counters"];
    let _ = writeln!(
        o,
        "jobs done {} completed, {} failed, {} cancelled, {} rejected ({} submitted, {} deduplicated)",
        n(&c["completed"]),
        n(&c["failed"]),
        n(&c["cancelled"]),
        n(&c["rejected"]),
        n(&c["submitted"]),
        n(&c["deduplicated"])
    );
    let _ = writeln!(
        o,
        "proofs    {} circuits proved in {} batches; {} verified, {} did not verify",
        n(&c["circuits_proved"]),
        n(&c["batches"]),
        n(&c["proofs_verified"]),
        n(&c["verification_failures"])
    );
    let _ = writeln!(
        o,
        "host      {} reserved for synthesis of {}{}",
        b(&v["host_reserved_bytes"]),
        b(&v["host_budget_bytes"]),
        match v["host_resident_bytes"].as_u64() {
            Some(r) if r > 0 => format!(
                " ({} held for compiled systems and shapes)",
                b(&v["host_resident_bytes"])
            ),
            _ => String::new(),
        }
    );
    let table = |o: &mut String, title: &str, head: &[&str], rows: Vec<Vec<String>>| {
        if rows.is_empty() {
            return;
        }
        let mut w: Vec<usize> = head.iter().map(|h| h.len()).collect();
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        // Text left, columns of numbers (with their units) right.
        let numeric = |c: &str| c.starts_with(|ch: char| ch.is_ascii_digit()) || c == "unlimited";
        let right: Vec<bool> = (0..head.len())
            .map(|i| i > 0 && rows.iter().all(|r| numeric(&r[i])))
            .collect();
        let line = |o: &mut String, cells: &[String]| {
            let mut s = String::from("  ");
            for (i, c) in cells.iter().enumerate() {
                if right[i] {
                    let _ = write!(s, "{c:>width$}  ", width = w[i]);
                } else {
                    let _ = write!(s, "{c:<width$}  ", width = w[i]);
                }
            }
            let _ = writeln!(o, "{}", s.trim_end());
        };
        let _ = writeln!(o, "{title}");
        line(o, &head.iter().map(|h| h.to_string()).collect::<Vec<_>>());
        for r in &rows {
            line(o, r);
        }
    };
    let empty = Vec::new();
    let arr = |x: &Value| x.as_array().cloned().unwrap_or_default();
    table(
        &mut o,
        "devices",
        &[
            "gpu",
            "name",
            "vram free",
            "vram total",
            "state",
            "proved",
            "failures",
            "busy (window)",
            "busy (all)",
        ],
        arr(&v["devices"])
            .iter()
            .map(|d| {
                vec![
                    n(&d["index"]).to_string(),
                    d["name"].as_str().unwrap_or("").to_owned(),
                    b(&d["vram_free_bytes"]),
                    b(&d["vram_total_bytes"]),
                    if d["healthy"].as_bool().unwrap_or(true) {
                        "ok".into()
                    } else {
                        "out of service".into()
                    },
                    n(&d["partitions_proved"]).to_string(),
                    n(&d["failures"]).to_string(),
                    pct(&d["busy_fraction_window"]),
                    pct(&d["busy_fraction"]),
                ]
            })
            .collect(),
    );
    // A GPU's last error in full below the table (too long for a column),
    // and for one out of service since when, and its probes.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let ago = |ms: u64| format!("{} s ago", now_ms.saturating_sub(ms) / 1000);
    for d in arr(&v["devices"]) {
        if let Some(e) = d["last_error"].as_str() {
            let _ = writeln!(o, "  gpu {} error: {e}", n(&d["index"]));
        }
        if let Some(out) = d["out_since_unix_ms"].as_u64() {
            let probe = match (
                d["last_probe_unix_ms"].as_u64(),
                d["last_probe_error"].as_str(),
            ) {
                (None, _) => "not probed yet".to_owned(),
                (Some(at), Some(e)) => format!("last {}: {e}", ago(at)),
                (Some(at), None) => format!("last {}: passed", ago(at)),
            };
            let _ = writeln!(
                o,
                "  gpu {} out of service since {}; {} probes, {probe}",
                n(&d["index"]),
                ago(out),
                n(&d["probes"])
            );
        }
    }
    table(
        &mut o,
        "memory tiers (parameters)",
        &["tier", "used", "budget"],
        arr(&v["tiers"])
            .iter()
            .map(|t| {
                vec![
                    t["tier"].as_str().unwrap_or("?").to_owned(),
                    b(&t["used_bytes"]),
                    b(&t["budget_bytes"]),
                ]
            })
            .collect(),
    );
    table(
        &mut o,
        "parameters",
        &["id", "tier", "size", "in use", "gpus"],
        arr(&v["params"])
            .iter()
            .map(|p| {
                vec![
                    p["id"].as_str().unwrap_or("?").to_owned(),
                    p["tier"].as_str().unwrap_or("?").to_owned(),
                    b(&p["bytes"]),
                    n(&p["ref_count"]).to_string(),
                    list(&json!(p["devices"]
                        .as_array()
                        .unwrap_or(&empty)
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>())),
                ]
            })
            .collect(),
    );
    let busy = &v["busy"];
    let mut rows: Vec<Vec<String>> = arr(&busy["workers"])
        .iter()
        .map(|w| {
            vec![
                format!("worker {}", n(&w["worker"])),
                match w["device"].as_u64() {
                    Some(d) => format!("gpu {d}"),
                    None => "cpu".into(),
                },
                pct(&w["busy_fraction"]),
            ]
        })
        .collect();
    rows.push(vec![
        "synthesis".into(),
        format!("{} slots", n(&p["synthesis_concurrency"])),
        pct(&busy["synthesis_busy_fraction"]),
    ]);
    table(
        &mut o,
        &format!(
            "busy (last {:.0} s)",
            busy["window_s"].as_f64().unwrap_or(0.0)
        ),
        &["who", "on", "busy"],
        rows,
    );
    o
}

const JOB_STATES: [&str; 5] = ["queued", "running", "completed", "failed", "cancelled"];
const PARTITION_STATES: [&str; 5] = ["pending", "leased", "done", "failed", "cancelled"];

/// `GetStatus`'s cluster part as `cuzk status --cluster --json` prints it
/// (and under "cluster" in `cuzk status --json`); every state is listed,
/// zero when the queue has none.
pub fn cluster_json(c: &proto::ClusterStatus) -> Value {
    let counts = |names: &[&str], got: &[proto::StateCount]| {
        let mut m = serde_json::Map::new();
        for n in names {
            let k = got.iter().find(|s| s.state == *n).map_or(0, |s| s.count);
            m.insert((*n).into(), json!(k));
        }
        // A state this build does not know still shows.
        for s in got.iter().filter(|s| !names.contains(&s.state.as_str())) {
            m.insert(s.state.clone(), json!(s.count));
        }
        Value::Object(m)
    };
    json!({
        "node_id": c.node_id,
        "database": c.database,
        "database_unreachable_since_unix_s": c.database_unreachable_since_unix_s,
        "database_error": (!c.database_error.is_empty()).then_some(&c.database_error),
        "claimed": c.claimed,
        "reports_waiting": c.reports_waiting,
        "partitions_proved": c.partitions_proved,
        "retain_finished_s": c.retain_finished_s,
        "view": c.view.as_ref().map(|v| json!({
            "nodes": v.nodes.iter().map(|n| json!({
                "node_id": n.node_id, "address": n.address, "last_seen_s": n.last_seen_s,
                "alive": n.alive, "heartbeat_interval_s": n.heartbeat_interval_s, "up_s": n.up_s,
                "kinds_supported": n.kinds_supported, "kinds_resident": n.kinds_resident,
                "free_vram_bytes": n.free_vram_bytes, "leases": n.leases,
                "partitions_proved": n.partitions_proved,
            })).collect::<Vec<_>>(),
            "jobs": counts(&JOB_STATES, &v.jobs),
            "partitions": counts(&PARTITION_STATES, &v.partitions),
            "oldest_pending_s": v.oldest_pending_s,
            "queues": v.queues.iter().map(|q| json!({
                "kind": q.kind, "priority": priority_name(q.priority),
                "pending": q.pending, "leased": q.leased,
            })).collect::<Vec<_>>(),
        })),
        "view_error": (!c.view_error.is_empty()).then_some(&c.view_error),
    })
}

/// Unix seconds as `2026-12-01 21:59:03 UTC` (proleptic Gregorian, from
/// days since the epoch; no time zone database needed).
pub fn utc_time(unix_s: f64) -> String {
    let secs = unix_s.max(0.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A duration in seconds for people: `850 ms`, `12.3 s`, `4 min`, `2.5 h`.
pub fn human_secs(s: f64) -> String {
    match s {
        s if s < 1.0 => format!("{:.0} ms", s * 1e3),
        s if s < 120.0 => format!("{s:.1} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// The "cluster" line of `cuzk status` (and the head of `--cluster`): this
/// daemon's membership and whether the database answers it.
fn cluster_line(c: &Value) -> String {
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let mut o = format!(
        "cluster   node {} on {}: {} partitions claimed, {} proved here",
        c["node_id"].as_str().unwrap_or("?"),
        c["database"].as_str().unwrap_or("?"),
        n(&c["claimed"]),
        n(&c["partitions_proved"]),
    );
    if let Some(since) = c["database_unreachable_since_unix_s"].as_f64() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(since, |d| d.as_secs_f64());
        o.push_str(&format!(
            "\ncluster   database unreachable since {} ({} ago): {}; {} results held, claiming stopped",
            utc_time(since),
            human_secs((now - since).max(0.0)),
            c["database_error"].as_str().unwrap_or("no answer"),
            n(&c["reports_waiting"]),
        ));
    }
    o.push('\n');
    o
}

/// Aligned columns under a title (text left, numbers right).
fn text_table(title: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let mut w: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let numeric = |c: &str| c.starts_with(|ch: char| ch.is_ascii_digit()) || c == "-";
    let right: Vec<bool> = (0..head.len())
        .map(|i| i > 0 && !rows.is_empty() && rows.iter().all(|r| numeric(&r[i])))
        .collect();
    let _ = writeln!(o, "{title}");
    let heads: Vec<String> = head.iter().map(|h| h.to_string()).collect();
    for r in std::iter::once(&heads).chain(rows) {
        let mut s = String::from("  ");
        for (i, c) in r.iter().enumerate() {
            if right[i] {
                let _ = write!(s, "{c:>width$}  ", width = w[i]);
            } else {
                let _ = write!(s, "{c:<width$}  ", width = w[i]);
            }
        }
        let _ = writeln!(o, "{}", s.trim_end());
    }
    o
}

/// `cuzk status --cluster` on a terminal: [`cluster_json`]'s facts.
pub fn cluster_text(c: &Value) -> String {
    use std::fmt::Write;
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let list = |x: &Value| {
        x.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let mut o = cluster_line(c);
    let v = &c["view"];
    if !v.is_object() {
        let _ = writeln!(
            o,
            "the cluster's view is not available: {}",
            c["view_error"].as_str().unwrap_or("no answer")
        );
        return o;
    }
    let states = |x: &Value, names: &[&str]| {
        names
            .iter()
            .map(|s| format!("{} {s}", n(&x[*s])))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let retain = c["retain_finished_s"].as_f64().unwrap_or(0.0);
    let _ = writeln!(
        o,
        "jobs      {} ({})",
        states(&v["jobs"], &JOB_STATES),
        if retain > 0.0 {
            format!("finished ones kept {}", human_secs(retain))
        } else {
            "finished ones kept forever".into()
        }
    );
    let _ = writeln!(
        o,
        "partitions {}; oldest pending {}",
        states(&v["partitions"], &PARTITION_STATES),
        v["oldest_pending_s"]
            .as_f64()
            .map_or("-".into(), |s| format!("{} ago", human_secs(s)))
    );
    let nodes: Vec<Vec<String>> = v["nodes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|x| {
            vec![
                x["node_id"].as_str().unwrap_or("?").to_owned(),
                x["address"].as_str().unwrap_or("").to_owned(),
                if x["alive"].as_bool().unwrap_or(false) {
                    "alive"
                } else {
                    "dead"
                }
                .into(),
                format!(
                    "{} ago",
                    human_secs(x["last_seen_s"].as_f64().unwrap_or(0.0))
                ),
                human_secs(x["up_s"].as_f64().unwrap_or(0.0)),
                n(&x["leases"]).to_string(),
                n(&x["partitions_proved"]).to_string(),
                human_bytes(n(&x["free_vram_bytes"])),
                list(&x["kinds_resident"]),
            ]
        })
        .collect();
    o.push_str(&text_table(
        "nodes",
        &[
            "node",
            "address",
            "state",
            "heartbeat",
            "up",
            "leases",
            "proved",
            "vram free",
            "resident",
        ],
        &nodes,
    ));
    let queues: Vec<Vec<String>> = v["queues"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|q| {
            vec![
                q["kind"].as_str().unwrap_or("?").to_owned(),
                q["priority"].as_str().unwrap_or("?").to_owned(),
                n(&q["pending"]).to_string(),
                n(&q["leased"]).to_string(),
            ]
        })
        .collect();
    if !queues.is_empty() {
        o.push_str(&text_table(
            "queue",
            &["kind", "priority", "pending", "leased"],
            &queues,
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_for_people() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(8 << 30), "8.0 GiB");
        assert_eq!(human_bytes(u64::MAX), "unlimited");
        assert_eq!(human_bytes(1 << 50), "1.0 PiB");
    }

    #[test]
    fn timings_are_rounded_to_the_microsecond() {
        assert_eq!(round_ms(51.110487000000006), 51.110);
        assert_eq!(round_ms(0.0004), 0.0);
        assert_eq!(round_ms(2.0005), 2.001);
    }

    #[test]
    fn status_reads_as_tables_with_units() {
        let s = proto::GetStatusResponse {
            backend: "cpu".into(),
            tiers: vec![
                proto::TierBudget {
                    tier: "vram".into(),
                    used_bytes: 0,
                    budget_bytes: u64::MAX,
                },
                proto::TierBudget {
                    tier: "pinned".into(),
                    used_bytes: 3 << 20,
                    budget_bytes: 8 << 30,
                },
            ],
            queues: vec![proto::QueueDepth {
                priority: proto::Priority::Critical as i32,
                queued: 2,
            }],
            kinds: vec!["porep-like-6".into(), "porep-like-10".into()],
            workers: 1,
            host_budget_bytes: 4 << 30,
            worker_busy: vec![proto::WorkerBusy {
                worker: 0,
                device: None,
                busy_fraction: 0.25,
            }],
            ..Default::default()
        };
        let v = status_json(&s);
        // One set of priority names.
        assert_eq!(v["queues"][0]["priority"], "critical");
        let t = status_text(&v);
        assert!(t.contains("backend   cpu"), "{t}");
        assert!(t.contains("kinds     porep-like-6, porep-like-10"), "{t}");
        assert!(t.contains("queued: critical 2"), "{t}");
        assert!(t.contains("of 4.0 GiB"), "{t}");
        let vram = t
            .lines()
            .find(|l| l.trim_start().starts_with("vram"))
            .unwrap();
        assert!(vram.ends_with("unlimited"), "{vram}");
        assert!(!t.contains("18446744073709551615"), "{t}");
        let pinned = t
            .lines()
            .find(|l| l.trim_start().starts_with("pinned"))
            .unwrap();
        assert!(
            pinned.contains("3.0 MiB") && pinned.ends_with("8.0 GiB"),
            "{pinned}"
        );
        let worker = t.lines().find(|l| l.contains("worker 0")).unwrap();
        assert!(
            worker.contains("cpu") && worker.ends_with("25%"),
            "{worker}"
        );
    }
}
