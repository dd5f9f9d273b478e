//! Synthesis of porep-like circuits, full against compiled: the median of
//! `repeat` runs per size of
//! - full synthesis (constraints built and evaluated, as bellperson does),
//! - witness-only synthesis (enforce records nothing; the median, and the
//!   first run alone, which for porep-like also records the size's shape),
//! - the sparse products a/b/c = A·z, B·z, C·z (every core),
//! - compiled = witness + products, checked equal to full synthesis once,
//! - `parallel`: `jobs` witnesses generated at once (one partition per
//!   core, as the daemon runs them), reported per partition,
//!
//! and the one-off compile time and the compiled system's size.
//!
//!     cargo run --release -p cuzk-core --example synthesis_bench -- 16 20 [--repeat 3] [--jobs N]
//!
//! Prints a table and then one JSON line per size.

use cuzk_core::circuits::porep_like;
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::compiled;
use cuzk_core::synthesis;
use rayon::prelude::*;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let mut sizes = Vec::new();
    let mut repeat = 3usize;
    let mut jobs = rayon::current_num_threads();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--repeat" => {
                repeat = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--repeat N")
            }
            "--jobs" => jobs = args.next().and_then(|v| v.parse().ok()).expect("--jobs N"),
            s => sizes.push(s.parse::<u32>().expect("a log size")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![16];
    }
    let repeat = repeat.max(1);
    println!(
        "{:>4} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>10} {:>9} {:>9}",
        "log",
        "full ms",
        "witness",
        "1st wit",
        "products",
        "compiled",
        "ratio",
        "par/part ms",
        "par ratio",
        "compile",
        "MB"
    );
    for log in sizes {
        let t = Instant::now();
        let cc = compiled::compile(PorepLikeCircuit::new(log, 0), &format!("porep-like-{log}"))
            .expect("compile");
        let compile_ms = ms(t);
        let (mut full, mut wit, mut prod, mut comp) = (vec![], vec![], vec![], vec![]);
        for r in 0..repeat {
            let seed = 1000 + r as u64;
            let t = Instant::now();
            let f = synthesis::synthesize(PorepLikeCircuit::new(log, seed)).expect("full");
            full.push(ms(t));
            let t0 = Instant::now();
            let w = cc
                .witness(PorepLikeCircuit::new(log, seed))
                .expect("witness");
            wit.push(ms(t0));
            let t1 = Instant::now();
            let pa = cc.assign(w).expect("assign");
            prod.push(ms(t1));
            comp.push(ms(t0));
            if r == 0 {
                assert!(
                    f.a == pa.a
                        && f.b == pa.b
                        && f.c == pa.c
                        && f.aux_assignment == pa.aux_assignment,
                    "compiled differs from full synthesis at 2^{log}"
                );
            }
        }
        // Witnesses of `jobs` partitions at once, then their products.
        let t = Instant::now();
        let ws: Vec<_> = (0..jobs)
            .into_par_iter()
            .map(|j| {
                cc.witness(PorepLikeCircuit::new(log, 5000 + j as u64))
                    .expect("witness")
            })
            .collect();
        let par_wit = ms(t);
        let t = Instant::now();
        for w in ws {
            let _ = cc.assign(w).expect("assign");
        }
        let par_prod = ms(t);
        let per_part = (par_wit + par_prod) / jobs as f64;
        let wit_first = wit[0];
        let (f, w, p, c) = (median(full), median(wit), median(prod), median(comp));
        let mb = cc.matrix_bytes() as f64 / 1e6;
        println!(
            "{log:>4} {f:>10.1} {w:>10.1} {wit_first:>10.1} {p:>10.1} {c:>10.1} {:>10.3} {per_part:>12.1} {:>10.3} {compile_ms:>9.0} {mb:>9.1}",
            c / f,
            per_part / f
        );
        println!(
            "{{\"log\":{log},\"repeat\":{repeat},\"jobs\":{jobs},\"full_ms\":{f:.3},\"witness_ms\":{w:.3},\"witness_first_ms\":{wit_first:.3},\"shape_cache_bytes\":{},\"products_ms\":{p:.3},\"compiled_ms\":{c:.3},\"compiled_over_full\":{:.4},\"parallel_per_partition_ms\":{per_part:.3},\"parallel_over_full\":{:.4},\"compile_ms\":{compile_ms:.1},\"matrix_bytes\":{},\"constraints\":{},\"nnz\":[{},{},{}],\"coefficients\":{}}}",
            porep_like::cached_shape_bytes(log).unwrap_or(0),
            c / f,
            per_part / f,
            cc.matrix_bytes(),
            cc.num_constraints(),
            cc.a.nnz(),
            cc.b.nnz(),
            cc.c.nnz(),
            cc.coefficients().len()
        );
    }
}
