//! Load test of the cluster queue: how many queue operations per second one
//! PostgreSQL server takes, and what each costs, with N simulated nodes
//! claiming and completing partitions as fast as they can (no proving).
//! The figures behind DESIGN.md's "measured" column.
//!
//!   out=$(bash scripts/pg-test-server.sh start --durable --owner-pid $$)
//!   url=$(echo "$out" | sed -n 's/^URL=//p')
//!   cargo run --release -p cuzk-cluster --example queue_load -- "$url" [jobs] [partitions] [nodes...]
//!
//! For each node count: submit `jobs` jobs of `partitions` partitions (from
//! 4 front-end connections), then the nodes claim one partition at a time
//! (the worst case: one claim per partition), renew it once and complete
//! it; prints a table and a JSON line per run. Each run uses a fresh
//! database, dropped after.

// The tests' database helpers (this uses `with_database`).
#[path = "../tests/common/mod.rs"]
mod common;

use common::with_database;
use cuzk_cluster::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn median_ms(v: &mut [Duration]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn p99_ms(v: &mut [Duration]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable();
    v[(v.len() * 99 / 100).min(v.len() - 1)].as_secs_f64() * 1e3
}

async fn admin(url: &str, sql: &str) -> tokio_postgres::Client {
    let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    if !sql.is_empty() {
        c.batch_execute(sql).await.expect(sql);
    }
    c
}

/// The server's WAL position in bytes (all databases: runs are sequential).
async fn wal_lsn(url: &str) -> i64 {
    let c = admin(url, "").await;
    c.query_one("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint", &[])
        .await
        .expect("wal position")
        .get(0)
}

#[derive(Default)]
struct Lat {
    claim: Vec<Duration>,
    renew: Vec<Duration>,
    complete: Vec<Duration>,
}

async fn run(url: &str, jobs: usize, partitions: u32, nodes: usize) -> serde_like::Run {
    let name = format!("cuzk_load_{}_{nodes}", std::process::id());
    admin(url, &format!("DROP DATABASE IF EXISTS {name}")).await;
    admin(url, &format!("CREATE DATABASE {name}")).await;
    let db_url = with_database(url, &name);
    let wal0 = wal_lsn(url).await;
    let cfg = |n: &str| ClusterConfig::new(db_url.clone(), n);
    ClusterClient::new(cfg("admin"))
        .unwrap()
        .migrate()
        .await
        .unwrap();

    // Submit from 4 front ends at once.
    let t0 = Instant::now();
    let fronts: Vec<_> = (0..4)
        .map(|f| {
            let c = ClusterClient::new(cfg(&format!("front{f}"))).unwrap();
            tokio::spawn(async move {
                for i in (f..jobs).step_by(4) {
                    c.submit(&NewJob {
                        request_id: Some(format!("load-{i}")),
                        kind: "porep-32g".into(),
                        priority: Priority::Normal,
                        client: "load".into(),
                        // A reference, as a C1 output of tens of MiB would be.
                        input: JobInput::Reference(format!("/shared/c1/{i}.json")),
                        partitions,
                    })
                    .await
                    .unwrap();
                }
            })
        })
        .collect();
    for f in fronts {
        f.await.unwrap();
    }
    let submit_s = t0.elapsed().as_secs_f64();

    let total = jobs as u64 * u64::from(partitions);
    let done = Arc::new(AtomicU64::new(0));
    let empty = Arc::new(AtomicU64::new(0));
    let lat = Arc::new(Mutex::new(Lat::default()));
    let t1 = Instant::now();
    let workers: Vec<_> = (0..nodes)
        .map(|n| {
            let c = ClusterClient::new(cfg(&format!("node{n}"))).unwrap();
            let (done, empty, lat) = (done.clone(), empty.clone(), lat.clone());
            tokio::spawn(async move {
                let req = ClaimRequest {
                    kinds: vec!["porep-32g".into()],
                    resident: vec!["porep-32g".into()],
                    max: 1,
                    free_vram_bytes: 0,
                };
                let mut local = Lat::default();
                while done.load(Ordering::Relaxed) < total {
                    let t = Instant::now();
                    let leases = c.claim(&req).await.unwrap();
                    local.claim.push(t.elapsed());
                    let Some(l) = leases.into_iter().next() else {
                        empty.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(2)).await;
                        continue;
                    };
                    let t = Instant::now();
                    c.renew(&[l.key()]).await.unwrap();
                    local.renew.push(t.elapsed());
                    let t = Instant::now();
                    let r = c
                        .complete(
                            &l.key(),
                            &PartitionResult {
                                proof: vec![7u8; 192],
                                public_inputs: vec![1u8; 32],
                                synthesis: Duration::from_secs(30),
                                prove: Duration::from_secs(10),
                            },
                        )
                        .await
                        .unwrap();
                    local.complete.push(t.elapsed());
                    assert!(matches!(r, Completion::Accepted { .. }));
                    done.fetch_add(1, Ordering::Relaxed);
                }
                let mut g = lat.lock().unwrap();
                g.claim.extend(local.claim);
                g.renew.extend(local.renew);
                g.complete.extend(local.complete);
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    let work_s = t1.elapsed().as_secs_f64();

    let c = admin(&db_url, "VACUUM ANALYZE").await;
    let size = |t: &str| format!("SELECT pg_total_relation_size('{t}')::bigint");
    let mut bytes = 0i64;
    for t in [
        "cuzk_jobs",
        "cuzk_requests",
        "cuzk_partitions",
        "cuzk_partition_failures",
    ] {
        bytes += c.query_one(&size(t), &[]).await.unwrap().get::<_, i64>(0);
    }
    let wal = wal_lsn(url).await - wal0;
    let completed: i64 = c
        .query_one(
            "SELECT count(*) FROM cuzk_jobs WHERE state = 'completed'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(completed as usize, jobs, "every job completed");
    drop(c);
    admin(url, &format!("DROP DATABASE {name} WITH (FORCE)")).await;
    let mut l = Arc::try_unwrap(lat).ok().unwrap().into_inner().unwrap();
    serde_like::Run {
        nodes,
        jobs,
        partitions: total,
        submit_jobs_per_s: jobs as f64 / submit_s,
        partitions_per_s: total as f64 / work_s,
        claim_ms: median_ms(&mut l.claim),
        claim_p99_ms: p99_ms(&mut l.claim),
        renew_ms: median_ms(&mut l.renew),
        complete_ms: median_ms(&mut l.complete),
        complete_p99_ms: p99_ms(&mut l.complete),
        empty_claims: empty.load(Ordering::Relaxed),
        bytes_per_partition: bytes as f64 / total as f64,
        wal_bytes_per_partition: wal as f64 / total as f64,
    }
}

/// Plain JSON by hand: this example needs no serde.
mod serde_like {
    pub struct Run {
        pub nodes: usize,
        pub jobs: usize,
        pub partitions: u64,
        pub submit_jobs_per_s: f64,
        pub partitions_per_s: f64,
        pub claim_ms: f64,
        pub claim_p99_ms: f64,
        pub renew_ms: f64,
        pub complete_ms: f64,
        pub complete_p99_ms: f64,
        pub empty_claims: u64,
        pub bytes_per_partition: f64,
        pub wal_bytes_per_partition: f64,
    }
    impl Run {
        pub fn json(&self) -> String {
            format!(
                "{{\"nodes\":{},\"jobs\":{},\"partitions\":{},\"submit_jobs_per_s\":{:.1},\
                 \"partitions_per_s\":{:.1},\"claim_ms\":{:.2},\"claim_p99_ms\":{:.2},\
                 \"renew_ms\":{:.2},\"complete_ms\":{:.2},\"complete_p99_ms\":{:.2},\
                 \"empty_claims\":{},\"bytes_per_partition\":{:.0},\"wal_bytes_per_partition\":{:.0}}}",
                self.nodes,
                self.jobs,
                self.partitions,
                self.submit_jobs_per_s,
                self.partitions_per_s,
                self.claim_ms,
                self.claim_p99_ms,
                self.renew_ms,
                self.complete_ms,
                self.complete_p99_ms,
                self.empty_claims,
                self.bytes_per_partition,
                self.wal_bytes_per_partition
            )
        }
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(url) = args.first() else {
        eprintln!("usage: queue_load URL [jobs] [partitions] [nodes...]");
        std::process::exit(2);
    };
    let jobs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(500);
    let partitions: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let mut node_counts: Vec<usize> = args.iter().skip(3).filter_map(|s| s.parse().ok()).collect();
    if node_counts.is_empty() {
        node_counts = vec![1, 4, 16, 64];
    }
    println!(
        "{:>5} {:>7} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>10}",
        "nodes",
        "parts",
        "submit j/s",
        "parts/s",
        "claim ms",
        "claim p99",
        "renew ms",
        "compl ms",
        "compl p99",
        "empty",
        "B/part",
        "WAL B/part"
    );
    let mut json = Vec::new();
    for n in node_counts {
        let r = run(url, jobs, partitions, n).await;
        println!(
            "{:>5} {:>7} {:>10.1} {:>10.1} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>8} {:>9.0} {:>10.0}",
            r.nodes,
            r.partitions,
            r.submit_jobs_per_s,
            r.partitions_per_s,
            r.claim_ms,
            r.claim_p99_ms,
            r.renew_ms,
            r.complete_ms,
            r.complete_p99_ms,
            r.empty_claims,
            r.bytes_per_partition,
            r.wal_bytes_per_partition
        );
        json.push(r.json());
    }
    for j in json {
        println!("{j}");
    }
}
