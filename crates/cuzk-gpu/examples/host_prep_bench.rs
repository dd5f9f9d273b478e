//! The host preparation of a GPU partition, alone and on the CPU: the
//! density selections of the A and B query scalars and the three 0/1
//! splits (L, A, B) that the CUDA backend computes beside H and the H MSM.
//! At 2^27 on the H200 machine's 16 cores this took 3.2 s, longer than the
//! GPU work it overlaps; this program times each part at a size the
//! development machine can hold.
//!
//!     cargo run --release -p cuzk-gpu --example host_prep_bench -- [LOG] [REPS] [--reuse] [--json]
//!
//! LOG defaults to 22, REPS to 3; prints the median of each part in ms and
//! the split's shape (ones, zeros, other scalars); `--reuse` keeps the
//! output vectors from one repetition to the next (the backend's pool),
//! `--json` prints the same as one JSON object.

use std::time::{Duration, Instant};

use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::synthesis::synthesize_batch;
use cuzk_cuda::ZeroOneSplit;
use cuzk_gpu::split::split_zero_one_into;

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let reuse = args.iter().any(|a| a == "--reuse");
    let nums: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let log = nums.first().copied().unwrap_or(22) as u32;
    let reps = nums.get(1).copied().unwrap_or(3).max(1) as usize;

    let clock = Instant::now();
    let pa = synthesize_batch(vec![PorepLikeCircuit::new(log, 1)])
        .expect("synthesis")
        .pop()
        .expect("one assignment");
    let synth = clock.elapsed();

    let (mut sel_a, mut sel_b, mut split_l, mut split_a, mut split_b, mut total) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    // With --reuse the vectors of one repetition serve the next (as the
    // backend's buffer pool does across partitions); without, every
    // repetition allocates them afresh.
    let mut kept = (
        Vec::new(),
        Vec::new(),
        ZeroOneSplit::default(),
        ZeroOneSplit::default(),
        ZeroOneSplit::default(),
    );
    for _ in 0..reps {
        if !reuse {
            kept = Default::default();
        }
        let (a, b, l, sa, sb) = &mut kept;
        let all = Instant::now();
        let t = Instant::now();
        pa.a_query_scalars_into(a);
        sel_a.push(t.elapsed());
        let t = Instant::now();
        pa.b_query_scalars_into(b);
        sel_b.push(t.elapsed());
        let t = Instant::now();
        split_zero_one_into(&pa.aux_assignment, l);
        split_l.push(t.elapsed());
        let t = Instant::now();
        split_zero_one_into(a, sa);
        split_a.push(t.elapsed());
        let t = Instant::now();
        split_zero_one_into(b, sb);
        split_b.push(t.elapsed());
        total.push(all.elapsed());
    }
    let shape = (kept.2.ones_count, kept.2.zeros_count, kept.2.rest_ids.len());
    let cores = rayon::current_num_threads();
    let row = serde_json::json!({
        "log": log,
        "reps": reps,
        "reuse": reuse,
        "cores": cores,
        "aux": pa.aux_assignment.len(),
        "l_split": {"ones": shape.0, "zeros": shape.1, "other": shape.2},
        "synthesis_ms": synth.as_secs_f64() * 1e3,
        "select_a_ms": median(sel_a),
        "select_b_ms": median(sel_b),
        "split_l_ms": median(split_l),
        "split_a_ms": median(split_a),
        "split_b_ms": median(split_b),
        "total_ms": median(total),
    });
    if json {
        println!("{row}");
    } else {
        println!(
            "2^{log} ({} aux, L split: {} ones, {} zeros, {} other) on {cores} threads, median of {reps}{}:",
            pa.aux_assignment.len(),
            shape.0,
            shape.1,
            shape.2,
            if reuse { ", vectors reused" } else { "" }
        );
        for k in [
            "select_a_ms",
            "select_b_ms",
            "split_l_ms",
            "split_a_ms",
            "split_b_ms",
            "total_ms",
        ] {
            println!("  {k:<12} {:>10.1}", row[k].as_f64().unwrap_or(0.0));
        }
    }
}
