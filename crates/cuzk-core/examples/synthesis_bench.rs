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
//! and the one-off compile time, the compiled system's size and its A and
//! B densities (the share of aux variables each touches).
//!
//! `--witness-only` times only the witnesses (alone, then `jobs` at once),
//! with their vectors reserved as the compiled system's `witness` does,
//! without compiling or synthesizing in full (at 2^24 those take a minute).
//!
//!     cargo run --release -p cuzk-core --example synthesis_bench -- 16 20 [--repeat 3] [--jobs N] [--witness-only]
//!
//! Prints a table and then one JSON line per size; µs per row are per
//! constraint of the 2^log domain, and for `jobs` at once per core busy.

use bellpepper_core::Circuit;
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

/// The witness of `c` with its vectors reserved, as
/// [`compiled::CompiledCircuit::witness`] does, without the compiled system.
fn witness_reserved(c: PorepLikeCircuit) -> compiled::Witness {
    let mut cs =
        compiled::WitnessCs::with_capacity(c.num_public_inputs() + 1, c.num_circuit_constraints());
    c.synthesize(&mut cs).expect("witness");
    cs.into_witness()
}

/// Witnesses only: one alone that records the size's shape (`1st`), then
/// `repeat` alone (the median), then `jobs` at once.
fn witness_only(log: u32, repeat: usize, jobs: usize) {
    let rows = (1u64 << log) as f64;
    let t = Instant::now();
    drop(witness_reserved(PorepLikeCircuit::new(log, 999)));
    let first = ms(t);
    let mut wit = vec![];
    for r in 0..repeat {
        let t = Instant::now();
        let w = witness_reserved(PorepLikeCircuit::new(log, 1000 + r as u64));
        wit.push(ms(t));
        drop(w);
    }
    let t = Instant::now();
    let ws: Vec<_> = (0..jobs)
        .into_par_iter()
        .map(|j| witness_reserved(PorepLikeCircuit::new(log, 5000 + j as u64)))
        .collect();
    let par_wit = ms(t);
    drop(ws);
    let busy = jobs.min(rayon::current_num_threads()).max(1);
    let w = median(wit);
    let us_row = w * 1e3 / rows;
    let par_us_row = par_wit * 1e3 * busy as f64 / (jobs as f64 * rows);
    println!(
        "{log:>4} witness {w:>10.1} ms ({us_row:.4} µs/row), 1st {first:.1} ms; {jobs} at once on {busy} threads {par_wit:.1} ms ({par_us_row:.4} µs/row per core)"
    );
    println!(
        "{{\"log\":{log},\"shape_version\":{},\"repeat\":{repeat},\"jobs\":{jobs},\"threads\":{busy},\"witness_ms\":{w:.3},\"witness_us_per_row\":{us_row:.5},\"witness_first_ms\":{first:.3},\"shape_cache_bytes\":{},\"parallel_witness_ms\":{par_wit:.3},\"parallel_witness_us_per_row_per_core\":{par_us_row:.5}}}",
        porep_like::SHAPE_VERSION,
        porep_like::cached_shape_bytes(log).unwrap_or(0),
    );
}

fn main() {
    let mut sizes = Vec::new();
    let mut repeat = 3usize;
    let mut jobs = rayon::current_num_threads();
    let mut only_witness = false;
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
            "--witness-only" => only_witness = true,
            s => sizes.push(s.parse::<u32>().expect("a log size")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![16];
    }
    let repeat = repeat.max(1);
    if only_witness {
        for log in sizes {
            witness_only(log, repeat, jobs.max(1));
        }
        return;
    }
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
        let cc = compiled::compile(PorepLikeCircuit::new(log, 0), &porep_like::params_id(log))
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
        let aux = cc.num_aux().max(1) as f64;
        let a_density = cc.a_aux_density().count() as f64 / aux;
        let b_density = cc.b_aux_density().count() as f64 / aux;
        let us_row = w * 1e3 / (1u64 << log) as f64;
        println!(
            "{log:>4} {f:>10.1} {w:>10.1} {wit_first:>10.1} {p:>10.1} {c:>10.1} {:>10.3} {per_part:>12.1} {:>10.3} {compile_ms:>9.0} {mb:>9.1}",
            c / f,
            per_part / f
        );
        println!(
            "{{\"log\":{log},\"repeat\":{repeat},\"jobs\":{jobs},\"full_ms\":{f:.3},\"witness_ms\":{w:.3},\"witness_us_per_row\":{us_row:.5},\"witness_first_ms\":{wit_first:.3},\"shape_cache_bytes\":{},\"products_ms\":{p:.3},\"compiled_ms\":{c:.3},\"compiled_over_full\":{:.4},\"parallel_per_partition_ms\":{per_part:.3},\"parallel_over_full\":{:.4},\"compile_ms\":{compile_ms:.1},\"matrix_bytes\":{},\"constraints\":{},\"nnz\":[{},{},{}],\"coefficients\":{},\"shape_version\":{},\"a_aux_density\":{a_density:.5},\"b_aux_density\":{b_density:.5},\"b_input_density\":{}}}",
            porep_like::cached_shape_bytes(log).unwrap_or(0),
            c / f,
            per_part / f,
            cc.matrix_bytes(),
            cc.num_constraints(),
            cc.a.nnz(),
            cc.b.nnz(),
            cc.c.nnz(),
            cc.coefficients().len(),
            porep_like::SHAPE_VERSION,
            cc.b_input_density().count()
        );
    }
}
