//! Side-by-side with bellperson 0.27 on the porep-like circuit: parameter
//! generation and CPU proving on the same circuit and parameters.
//!
//! cargo run --release -p cuzk-core --example vs_bellperson -- [log_size] [reps] [--no-bp-gen]
//!
//! Prints a table and a JSON line; every figure is the median of `reps`
//! runs after one warm-up (generation runs once).

use bellperson::groth16 as bp;
use blstrs::Bls12;
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::prover::{create_proof_batch, CpuBackend};
use cuzk_core::verifier::{prepare_verifying_key, verify_proof};
use cuzk_core::{generator, PhaseTimings};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(16);
    let reps: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3).max(1);
    let bp_gen = !args.iter().any(|a| a == "--no-bp-gen");
    let circuit = PorepLikeCircuit::new(log, 1);
    let inputs = circuit.public_inputs();
    let mut rng = ChaCha20Rng::seed_from_u64(0);

    let t = Instant::now();
    let params =
        generator::generate_random_parameters(circuit.clone(), &mut rng).expect("cuzk generate");
    let cuzk_gen = t.elapsed();
    eprintln!("cuzk generate: {cuzk_gen:?}");
    let bp_gen_time = bp_gen.then(|| {
        let t = Instant::now();
        let _ = bp::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rng)
            .expect("bellperson generate");
        let d = t.elapsed();
        eprintln!("bellperson generate: {d:?}");
        d
    });

    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let bp_params = bp::Parameters::<Bls12>::read(&bytes[..], false).unwrap();
    drop(bytes);
    let pvk = prepare_verifying_key(&params.vk);

    let mut cuzk_times = Vec::new();
    let mut phases = Vec::<PhaseTimings>::new();
    for i in 0..=reps {
        let t = Instant::now();
        let (proofs, ph) =
            create_proof_batch(&CpuBackend, vec![circuit.clone()], &params, &mut rng).unwrap();
        let d = t.elapsed();
        assert!(verify_proof(&pvk, &proofs[0], &inputs).unwrap());
        if i > 0 {
            cuzk_times.push(d);
            phases.push(ph);
        }
        eprintln!("cuzk prove: {d:?}");
    }
    let mut bp_times = Vec::new();
    for i in 0..=reps {
        let t = Instant::now();
        let _ = bp::create_random_proof(circuit.clone(), &bp_params, &mut rng).unwrap();
        let d = t.elapsed();
        if i > 0 {
            bp_times.push(d);
        }
        eprintln!("bellperson prove: {d:?}");
    }
    let (c, b) = (median(cuzk_times), median(bp_times));
    println!(
        "porep-like 2^{log}, {} threads",
        rayon::current_num_threads()
    );
    println!(
        "{:<22} {:>12} {:>12} {:>8}",
        "", "cuzk", "bellperson", "ratio"
    );
    println!(
        "{:<22} {:>12.3?} {:>12.3?} {:>8.3}",
        "prove (median)",
        c,
        b,
        c.as_secs_f64() / b.as_secs_f64()
    );
    if let Some(g) = bp_gen_time {
        println!(
            "{:<22} {:>12.3?} {:>12.3?} {:>8.3}",
            "generate",
            cuzk_gen,
            g,
            cuzk_gen.as_secs_f64() / g.as_secs_f64()
        );
    }
    let last = phases.last().expect("at least one rep");
    for (name, d) in last.phases() {
        println!("  cuzk {name:<12} {:>10.1} ms", d.as_secs_f64() * 1e3);
    }
    println!(
        "{{\"log_size\":{log},\"cuzk_prove_s\":{},\"bellperson_prove_s\":{},\"cuzk_gen_s\":{},\"bellperson_gen_s\":{}}}",
        c.as_secs_f64(),
        b.as_secs_f64(),
        cuzk_gen.as_secs_f64(),
        bp_gen_time.map(|d| d.as_secs_f64().to_string()).unwrap_or("null".into())
    );
}
